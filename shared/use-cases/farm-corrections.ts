import { assertActsFor } from '../domain/access';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { checkFarmGeolocation, type FarmLocation, farmSha256 } from '../domain/farm-geometry';
import type { FarmerFarmStore, ForestCheck, ForestCheckResult, RegistryStore } from '../domain/ports/registry';
import type { FarmChange, Farmer } from '../domain/records';
import { logger } from '../runtime/logger';

/** The ports of a plot correction. */
export interface FarmCorrectionDeps {
  registry: Pick<RegistryStore, 'getFarmer'>;
  farms: FarmerFarmStore;
  forestCheck: ForestCheck;
}

/**
 * PUT /farmers/{id}/farm (docs/api/eudr.md#correcting-a-plot): replaces a registered farmer's plot,
 * e.g. one the one-off geometry check lists as failing today's rules.
 * Steps:
 *  1. the new plot passes registration's geolocation rules (`checkFarmGeolocation`: a polygon above
 *     4 ha, valid, and the EU Information System's rules), its geodesic area computed;
 *  2. the farmer exists (FARMER_NOT_REGISTERED, 404) and the token acts for its cooperative (403);
 *  3. the same plot again (same SHA-256, `farmSha256`) changes nothing: the farmer as it is, no
 *     audit entry, no forest check (a repeated PUT is harmless);
 *  4. the new plot is forest-checked as at registration (CLEAR or FLAGGED with the dataset; PENDING
 *     when the forest service does not answer — POST /eudr/verify-gfw checks it again);
 *  5. one transaction, conditioned on the plot not having been replaced since it was read: the plot,
 *     the forest check, `farm_updated_at`, `updated_by`, a `farm_changes` entry (who, role, when,
 *     SHA-256 of both plots) and the change's own record holding both plots; a concurrent
 *     replacement in between: 409 DUPLICATE_REQUEST, nothing written.
 * A statement already generated keeps the plot it was built with (its documents are kept apart);
 * a new statement, or an amendment, uses the new one.
 * Errors: VALIDATION_ERROR and GEOMETRY_RULE_VIOLATED (400), INSUFFICIENT_PERMISSIONS (403),
 * FARMER_NOT_REGISTERED (404), DUPLICATE_REQUEST (409); the forest check's other errors.
 */
export async function replaceFarmerFarm(
  deps: FarmCorrectionDeps,
  caller: Caller,
  farmerId: string,
  farm: FarmLocation,
  now: Date,
): Promise<Farmer> {
  const { computed_area_ha } = checkFarmGeolocation(farm);
  const farmer = await deps.registry.getFarmer(farmerId);
  if (!farmer) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${farmerId} is not in the farmer registry.`);
  assertActsFor(caller, farmer.cooperative_id);
  const newFarm: Farmer['farm'] = {
    gps: farm.gps,
    ...(farm.polygon ? { polygon: farm.polygon } : {}),
    area_ha: farm.area_ha,
    ...(farm.polygon ? { computed_area_ha } : {}),
  };
  const previousSha = farmSha256(farmer.farm);
  const sha = farmSha256(newFarm);
  if (sha === previousSha) return farmer;

  let check: ForestCheckResult | null = null;
  try {
    check = await deps.forestCheck.check(newFarm);
  } catch (err) {
    if (!(err instanceof DomainError && err.code === 'GFW_API_UNAVAILABLE')) throw err;
    logger.warn('forest service unavailable at a plot correction; farm recorded PENDING', { farmer_id: farmerId });
  }
  const at = now.toISOString();
  const change: FarmChange = { at, actor: caller.sub, actor_role: caller.role, previous_farm_sha256: previousSha, farm_sha256: sha };
  const forest = check ? { status: check.status, checked_at: check.checked_at, dataset: check.dataset } : { status: 'PENDING' as const };
  const replaced = await deps.farms.replaceFarm({
    farmer_id: farmerId,
    cooperative_id: farmer.cooperative_id,
    previous_updated_at: farmer.farm_updated_at ?? null,
    previous_farm: farmer.farm,
    farm: newFarm,
    forest,
    change,
  });
  if (!replaced)
    throw new DomainError(
      'DUPLICATE_REQUEST',
      `The plot of farmer ${farmerId} was changed by another request meanwhile; nothing was changed: read the farmer and try again.`,
    );
  if (check?.status === 'FLAGGED')
    logger.warn('corrected plot flagged by the forest check: manual review required', {
      farmer_id: farmerId,
      cooperative_id: farmer.cooperative_id,
      alerts: check.alerts.length,
    });
  const { gfw_checked_at: _c, gfw_dataset: _d, ...rest } = farmer;
  return {
    ...rest,
    farm: newFarm,
    gfw_status: forest.status,
    ...(check ? { gfw_checked_at: check.checked_at, gfw_dataset: check.dataset } : {}),
    farm_updated_at: at,
    updated_by: caller.sub,
    farm_changes: [...(farmer.farm_changes ?? []), change],
  };
}
