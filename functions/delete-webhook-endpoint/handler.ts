import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { deleteWebhookEndpointRoute } from '../../shared/http/routes/outbound-webhooks';
import { deleteEndpoint } from '../../shared/use-cases/outbound-webhooks';

/** DELETE /webhooks/endpoints/{id}: 200 `{endpoint_id, deleted: true}`; deliveries still pending end DEAD. */
export const handler = httpHandler(routeOptions(deleteWebhookEndpointRoute), async ({ caller, params }) => {
  const endpointId = params.id!;
  await deleteEndpoint(endpointDeps(), caller, endpointId);
  return { status: 200, body: { endpoint_id: endpointId, deleted: true as const } };
});
