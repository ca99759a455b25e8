import { outboundDeps } from '../../shared/composition/outbound-webhooks';
import { deliveryView } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { replayWebhookDeliveryRoute } from '../../shared/http/routes/outbound-webhooks';
import { replayDelivery } from '../../shared/use-cases/outbound-webhooks';

/** POST /webhooks/deliveries/{id}/replay: 202 with the delivery, PENDING again (same webhook-id and body). */
export const handler = httpHandler(routeOptions(replayWebhookDeliveryRoute), async ({ caller, params }) => {
  return { status: 202, body: deliveryView(await replayDelivery(outboundDeps(), caller, params.id!)) };
});
