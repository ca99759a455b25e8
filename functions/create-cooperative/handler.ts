import { now, registryRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { createCooperativeRoute } from '../../shared/http/routes/cooperatives';
import { cooperativeView } from '../../shared/http/views';
import { createCooperative } from '../../shared/use-cases/registry';

/** POST /cooperatives (ADMIN): 201 with the cooperative (docs/api/registries.md#cooperatives-farmers-and-the-forest-check). */
export const handler = httpHandler(routeOptions(createCooperativeRoute), async ({ body }) => {
  const coop = await createCooperative(registryRepo(), body, now());
  return { status: 201, body: cooperativeView(coop), headers: { location: `/cooperatives/${coop.cooperative_id}` } };
});
