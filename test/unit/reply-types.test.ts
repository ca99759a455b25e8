import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getCooperativeRoute } from '../../shared/http/routes/cooperatives';
import { deleteWebhookEndpointRoute } from '../../shared/http/routes/outbound-webhooks';

/**
 * Compiled by `npm run typecheck` (tsc): a handler's reply is typed by its route's
 * declared success response (shared/http/routes/), so a wrong body does not compile.
 */

// A body of the declared shape compiles.
const right = httpHandler(routeOptions(deleteWebhookEndpointRoute), async () => ({
  status: 200,
  body: { endpoint_id: 'WHE-1', deleted: true as const },
}));

// @ts-expect-error — `deleted` must be `true` and `endpoint_id` a string: not the declared response.
const wrongField = httpHandler(routeOptions(deleteWebhookEndpointRoute), async () => ({
  status: 200,
  body: { endpoint_id: 1, deleted: 'yes' },
}));

// @ts-expect-error — a cooperative view without its fields is not GET /cooperatives/{id}'s response.
const missingFields = httpHandler(routeOptions(getCooperativeRoute), async () => ({ status: 200, body: { name: 'x' } }));

it('builds each handler (the proof is that tsc compiles this file with its @ts-expect-error lines)', () => {
  for (const h of [right, wrongField, missingFields]) expect(typeof h).toBe('function');
});
