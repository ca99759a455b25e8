import { FarmerPhoneRepository } from '../adapters/dynamodb/farmer-phone-repo';
import type { FarmerPhoneStore } from '../domain/ports/registry';
import type { FarmerUpdateDeps } from '../use-cases/farmer-updates';
import { notifier } from './notifier';
import { registryRepo } from './repos';

let phones: FarmerPhoneStore | undefined;

/** The ports of PATCH /farmers/{id}: the registry (the farmer, its cooperative), its phone corrections and the notifier. */
export const farmerUpdateDeps = (): FarmerUpdateDeps => ({
  registry: registryRepo(),
  phones: (phones ??= new FarmerPhoneRepository()),
  notifier: notifier(),
});
