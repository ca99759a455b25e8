import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { endpointWithSecretView } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { rotateWebhookSecretRoute } from '../../shared/http/routes/outbound-webhooks';
import { rotateSecret } from '../../shared/use-cases/outbound-webhooks';

/** POST /webhooks/endpoints/{id}/rotate-secret: 200 with the new secret (shown only here); the old one signs 24 h more. */
export const handler = httpHandler(routeOptions(rotateWebhookSecretRoute), async ({ caller, params }) => {
  return { status: 200, body: endpointWithSecretView(await rotateSecret(endpointDeps(), caller, params.id!)) };
});
