import { FarmerPhoneRepository } from '../adapters/dynamodb/farmer-phone-repo';
import type { FarmerPhoneStore } from '../domain/ports';
import { registryRepo } from './repos';

let phones: FarmerPhoneStore | undefined;

/** The ports of PATCH /farmers/{id}: the registry (to read the farmer) and its phone corrections. */
export const farmerUpdateDeps = () => ({ registry: registryRepo(), phones: (phones ??= new FarmerPhoneRepository()) });
