import { outboundDeps } from '../../shared/composition/outbound-webhooks';
import { DeliveryIdParam, deliveryView } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler } from '../../shared/http/handler';
import { IdParams } from '../../shared/http/path-params';
import { replayDelivery } from '../../shared/use-cases/outbound-webhooks';

/** POST /webhooks/deliveries/{id}/replay: 202 with the delivery, PENDING again (same webhook-id and body). */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE', 'MFI'], params: IdParams(DeliveryIdParam) },
  async ({ caller, params }) => {
    return { status: 202, body: deliveryView(await replayDelivery(outboundDeps(), caller, params.id!)) };
  },
);
