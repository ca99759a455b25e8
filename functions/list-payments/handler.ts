import { batchRepo, payoutRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { listPaymentsRoute } from '../../shared/http/routes/payments';
import { ListPaymentsQuerySchema } from '../../shared/http/payout-schemas';
import { validate } from '../../shared/http/validation';
import { paymentListItemView } from '../../shared/http/views';
import { listBatchPayments } from '../../shared/use-cases/payouts';

/**
 * GET /payments?batch_id=&limit=&next_token= : `{payments, total, limit, next_token}` — the
 * batch's payments oldest first; `limit` 1–100 (default 50); `next_token` opaque.
 */
export const handler = httpHandler(routeOptions(listPaymentsRoute), async ({ caller, query }) => {
  const q = validate(ListPaymentsQuerySchema, query, [], 'query parameters');
  const page = await listBatchPayments({ batches: batchRepo(), payouts: payoutRepo() }, caller, q);
  return {
    status: 200,
    body: { payments: page.items.map(paymentListItemView), total: page.total, limit: q.limit, next_token: page.next_token ?? null },
  };
});
