import { SqsWorkQueue } from '../adapters/aws/queues';
import { createNationalFarmerRegistryFromEnv, type NationalFarmerRegistry } from '../adapters/farmer-registry/national-farmer-registry';
import type { NationalCheckMessage } from '../use-cases/registry';

/** The national farmer registry (MAAIF) at MAAIF_API_URL, and the queue of registrations waiting for it. */
let national: NationalFarmerRegistry | undefined;

/** Configuration is read on the first lookup, so a request refused earlier never needs it. */
export const nationalRegistry = (): NationalFarmerRegistry => ({
  lookup: (farmerId) => (national ??= createNationalFarmerRegistryFromEnv()).lookup(farmerId),
});
export const nationalCheckQueue = () => new SqsWorkQueue<NationalCheckMessage>('NATIONAL_CHECK_QUEUE_URL');
