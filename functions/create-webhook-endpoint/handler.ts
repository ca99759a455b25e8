import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { endpointWithSecretView } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { createWebhookEndpointRoute } from '../../shared/http/routes/outbound-webhooks';
import { registerEndpoint } from '../../shared/use-cases/outbound-webhooks';

/** POST /webhooks/endpoints (ADMIN; COOPERATIVE with MANAGER; MFI): 201 with the secret, shown only here. */
export const handler = httpHandler(routeOptions(createWebhookEndpointRoute), async ({ body, caller }) => {
  const endpoint = await registerEndpoint(endpointDeps(), caller, body);
  return { status: 201, body: endpointWithSecretView(endpoint), headers: { location: `/webhooks/endpoints/${endpoint.endpoint_id}` } };
});
