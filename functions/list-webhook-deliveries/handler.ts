import { endpointDeps } from '../../shared/composition/outbound-webhooks';
import { deliveryView, EndpointIdParam, ListDeliveriesQuerySchema } from '../../shared/http/outbound-webhook-schemas';
import { httpHandler } from '../../shared/http/handler';
import { IdParams } from '../../shared/http/path-params';
import { validate } from '../../shared/http/validation';
import { listDeliveries } from '../../shared/use-cases/outbound-webhooks';

/** GET /webhooks/endpoints/{id}/deliveries?limit=&next_token= : `{deliveries, limit, next_token}`, newest first. */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE', 'MFI'], params: IdParams(EndpointIdParam) },
  async ({ caller, params, query }) => {
    const q = validate(ListDeliveriesQuerySchema, query, [], 'query parameters');
    const page = await listDeliveries(endpointDeps(), caller, params.id!, q);
    return { status: 200, body: { deliveries: page.items.map(deliveryView), limit: q.limit, next_token: page.next_token ?? null } };
  },
);
