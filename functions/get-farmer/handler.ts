import { registryRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getFarmerRoute } from '../../shared/http/routes/farmers';
import { farmerView } from '../../shared/http/views';
import { getFarmer } from '../../shared/use-cases/registry';

/** GET /farmers/{id}: ADMIN, MFI, or a COOPERATIVE/AGENT token of the farmer's cooperative. */
export const handler = httpHandler(routeOptions(getFarmerRoute), async ({ caller, params }) => {
  return { status: 200, body: farmerView(await getFarmer(registryRepo(), caller, params.id ?? '')) };
});
