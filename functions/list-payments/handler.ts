import { batchRepo, payoutRepo } from '../../shared/composition/repos';
import { microToUsdc } from '../../shared/domain/money';
import { httpHandler } from '../../shared/http/handler';
import { ListPaymentsQuerySchema } from '../../shared/http/schemas';
import { validate } from '../../shared/http/validation';
import { DomainError } from '../../shared/domain/errors';
import { assertActsFor } from '../../shared/use-cases/access';

/**
 * GET /payments?batch_id=&limit=&next_token= : `{payments, total, limit, next_token}` — the
 * batch's payments oldest first; `limit` 1–100 (default 50); `next_token` opaque.
 */
export const handler = httpHandler({ roles: ['COOPERATIVE', 'ADMIN'] }, async ({ caller, query }) => {
  const q = validate(ListPaymentsQuerySchema, query, [], 'query parameters');
  const batch = await batchRepo().get(q.batch_id);
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${q.batch_id} is not recognised.`);
  assertActsFor(caller, batch.cooperative_id);
  const page = await payoutRepo().listByBatch(q.batch_id, q.limit, q.next_token);
  return {
    status: 200,
    body: {
      payments: page.items.map((p) => ({ payment_id: p.payment_id, payment_type: p.payment_type, status: p.status, amount_usdc: microToUsdc(p.amount_usd_micro), completed_at: p.completed_at ?? null })),
      total: page.total,
      limit: q.limit,
      next_token: page.next_token ?? null,
    },
  };
});
