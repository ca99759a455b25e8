import { registryRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getCooperativeRoute } from '../../shared/http/routes/cooperatives';
import { cooperativeView } from '../../shared/http/views';
import { getCooperative } from '../../shared/use-cases/registry';

/** GET /cooperatives/{id}: ADMIN, or a COOPERATIVE/AGENT token of that cooperative. */
export const handler = httpHandler(routeOptions(getCooperativeRoute), async ({ caller, params }) => {
  return { status: 200, body: cooperativeView(await getCooperative(registryRepo(), caller, params.id ?? '')) };
});
