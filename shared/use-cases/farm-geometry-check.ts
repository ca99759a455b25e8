import { DomainError } from '../domain/errors';
import { checkFarmGeolocation } from '../domain/farm-geometry';
import type { Farmer } from '../domain/records';

/** A registered farm that registration would refuse today. */
export interface FarmGeometryFailure {
  farmer_id: string;
  cooperative_id: string;
  /** `GEOMETRY_RULE_VIOLATED` or `VALIDATION_ERROR`. */
  code: string;
  message: string;
  details: unknown;
}

/**
 * The one-off check of registered farms against today's geolocation rules (docs/api/eudr.md#geometry-rules,
 * `npm run farm-geometry-check`): runs registration's check (`checkFarmGeolocation`: structure,
 * topology, and the EU Information System's rules) on each farmer's stored farm and returns those
 * that fail, in the order read. Nothing is changed. Errors other than the check's own propagate.
 */
export async function farmsFailingGeometryRules(
  farmers: AsyncIterable<Farmer>,
): Promise<{ checked: number; failing: FarmGeometryFailure[] }> {
  let checked = 0;
  const failing: FarmGeometryFailure[] = [];
  for await (const f of farmers) {
    checked++;
    try {
      checkFarmGeolocation(f.farm);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      failing.push({
        farmer_id: f.farmer_id,
        cooperative_id: f.cooperative_id,
        code: err.code,
        message: err.message,
        details: err.details,
      });
    }
  }
  return { checked, failing };
}
