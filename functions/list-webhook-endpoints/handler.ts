import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { endpointView } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { listWebhookEndpointsRoute } from '../../shared/http/routes/outbound-webhooks';
import { listEndpoints } from '../../shared/use-cases/outbound-webhooks';

/** GET /webhooks/endpoints: `{endpoints}` — the caller's own, oldest first, without secrets. */
export const handler = httpHandler(routeOptions(listWebhookEndpointsRoute), async ({ caller }) => {
  return { status: 200, body: { endpoints: (await listEndpoints(endpointDeps(), caller)).map(endpointView) } };
});
