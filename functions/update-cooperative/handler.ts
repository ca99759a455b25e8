import { now, registryRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { updateCooperativeRoute } from '../../shared/http/routes/cooperatives';
import { cooperativeView } from '../../shared/http/views';
import { updateCooperative } from '../../shared/use-cases/registry';

/** PATCH /cooperatives/{id} (ADMIN): licence, manager or prices (docs/api/registries.md#cooperatives-farmers-and-the-forest-check). */
export const handler = httpHandler(routeOptions(updateCooperativeRoute), async ({ body, params }) => {
  const coop = await updateCooperative(registryRepo(), params.id ?? '', body, now());
  return { status: 200, body: cooperativeView(coop) };
});
