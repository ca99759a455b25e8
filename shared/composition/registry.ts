import { FarmerFarmRepository } from '../adapters/dynamodb/farmer-farm-repo';
import { FarmerPhoneRepository } from '../adapters/dynamodb/farmer-phone-repo';
import { createNationalFarmerRegistryFromEnv } from '../adapters/farmer-registry/national-farmer-registry';
import { createGfwForestCheckFromEnv } from '../adapters/forest-check/gfw-forest-check';
import type { FarmerFarmStore, FarmerPhoneStore, ForestCheck, NationalFarmerRegistry } from '../domain/ports/registry';
import type { FarmCorrectionDeps } from '../use-cases/farm-corrections';
import type { FarmerUpdateDeps } from '../use-cases/farmer-updates';
import { once, onFirstUse, putInPlace } from './once';
import { notifier, registryRepo } from './platform';

/**
 * Farmers and cooperatives: the outside registries a registration is checked against, and the
 * ports of a farmer's correction. The registry store itself is shared (./platform).
 */

/**
 * The forest check (docs/api/registries.md#forest-check, docs/api/eudr.md#forest-check): Global
 * Forest Watch (GFW_API_URL, GFW_API_KEY or GFW_API_KEY_SECRET_ARN), one per container so its
 * dataset version lookup is cached — unless the process put another check in place with
 * {@link useForestCheck}.
 */
export const forestCheck = (): ForestCheck => once(forestCheck, () => createGfwForestCheckFromEnv({ timeoutMs: 4000 }));

/** Puts `check` in place of Global Forest Watch for this process (the local stack's bundled alert areas, wired by infra/local so no Lambda bundle carries them). */
export function useForestCheck(check: ForestCheck): void {
  putInPlace(forestCheck, check);
}

/** The national farmer registry (MAAIF) at MAAIF_API_URL; its configuration is read on the first lookup, so a request refused earlier never needs it. */
export const nationalRegistry = (): NationalFarmerRegistry =>
  once(nationalRegistry, () => onFirstUse<NationalFarmerRegistry>(createNationalFarmerRegistryFromEnv));

/** Farmers' phone corrections. */
const farmerPhones = (): FarmerPhoneStore => once(farmerPhones, () => new FarmerPhoneRepository());

/** The ports of PATCH /farmers/{id}: the registry (the farmer, its cooperative), its phone corrections and the notifier. */
export const farmerUpdateDeps = (): FarmerUpdateDeps => ({ registry: registryRepo(), phones: farmerPhones(), notifier: notifier() });

/** Farmers' plot corrections. */
const farmerFarms = (): FarmerFarmStore => once(farmerFarms, () => new FarmerFarmRepository());

/** The ports of PUT /farmers/{id}/farm: the registry (the farmer), its plot corrections and the forest check. */
export const farmCorrectionDeps = (): FarmCorrectionDeps => ({
  registry: registryRepo(),
  farms: farmerFarms(),
  forestCheck: forestCheck(),
});
