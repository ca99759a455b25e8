import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { deliveryView, ListDeliveriesQuerySchema } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { listWebhookDeliveriesRoute } from '../../shared/http/routes/outbound-webhooks';
import { validate } from '../../shared/http/validation';
import { listDeliveries } from '../../shared/use-cases/outbound-webhooks';

/** GET /webhooks/endpoints/{id}/deliveries?limit=&next_token= : `{deliveries, limit, next_token}`, newest first. */
export const handler = httpHandler(routeOptions(listWebhookDeliveriesRoute), async ({ caller, params, query }) => {
  const q = validate(ListDeliveriesQuerySchema, query, [], 'query parameters');
  const page = await listDeliveries(endpointDeps(), caller, params.id!, q);
  return { status: 200, body: { deliveries: page.items.map(deliveryView), limit: q.limit, next_token: page.next_token ?? null } };
});
