import { forestCheck } from '../../shared/composition/registry';
import { now, registryRepo } from '../../shared/composition/repos';
import { httpHandler } from '../../shared/http/handler';
import { RegisterFarmerSchema } from '../../shared/http/schemas';
import { farmerView, registerFarmer } from '../../shared/use-cases/registry';

/** POST /farmers/register: 201 with the farmer (phone masked) and its forest-check result. */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE', 'AGENT'], body: RegisterFarmerSchema }, async ({ body, caller }) => {
  const farmer = await registerFarmer({ registry: registryRepo(), forestCheck: forestCheck() }, caller, body, now());
  return { status: 201, body: farmerView(farmer), headers: { location: `/farmers/${farmer.farmer_id}` } };
});
