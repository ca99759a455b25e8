import { createNationalFarmerRegistryFromEnv } from '../adapters/farmer-registry/national-farmer-registry';
import type { NationalFarmerRegistry } from '../domain/ports/registry';

/** The national farmer registry (MAAIF) at MAAIF_API_URL. */
let national: NationalFarmerRegistry | undefined;

/** Configuration is read on the first lookup, so a request refused earlier never needs it. */
export const nationalRegistry = (): NationalFarmerRegistry => ({
  lookup: (farmerId) => (national ??= createNationalFarmerRegistryFromEnv()).lookup(farmerId),
});
