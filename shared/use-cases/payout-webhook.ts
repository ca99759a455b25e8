import { parseProviderReference } from '../domain/ids';
import type { PayoutStore, PayoutWorkflow } from '../domain/ports';
import { logger } from '../runtime/logger';

/** Receipt source of the payout provider's webhooks (`WEBHOOK#payout-provider#<webhook-id>`). */
export const WEBHOOK_SOURCE = 'payout-provider';

/**
 * A payout-provider event, its Standard Webhooks signature verified and its body validated by the
 * transport (shared/http/webhook.ts, shared/http/schemas.ts PayoutWebhookSchema).
 */
export interface PayoutProviderEvent {
  type: 'order.settled' | 'order.failed';
  data: {
    order_id: string;
    /** Our reference: `<payout_id>-A<attempt>`. */
    reference: string;
    amount_ugx?: number | null;
    /** UGX per USD. */
    exchange_rate?: string | number | null;
    mobile_money_transaction_id?: string | null;
    settled_at?: string | null;
    failure_reason?: string | null;
  };
}

/**
 * POST /api/webhooks/payout-provider (decisions §6, §7), after the transport verified the
 * signature and parsed the event: 1. record it durably — `order.settled` completes the payout (COMPLETED, PAYMENT_CONFIRMED),
 * `order.failed` marks it FAILED — in one conditional transaction that also remembers the
 * webhook id 2. resume (SendTaskSuccess) or fail (SendTaskFailure) the waiting attempt.
 * A replayed webhook id, a settlement for a superseded attempt, an `order.failed` after
 * `order.settled` or an event about an unknown order change nothing and are acknowledged (200).
 */
export async function applyPayoutWebhook(
  deps: { payouts: PayoutStore; workflow: PayoutWorkflow; now: () => Date },
  input: { webhookId: string; event: PayoutProviderEvent },
): Promise<{ received: true; outcome: string }> {
  const { event } = input;
  const webhook = { source: WEBHOOK_SOURCE, id: input.webhookId };
  const ref = parseProviderReference(event.data.reference);
  const payout = ref ? await deps.payouts.get(ref.payoutId) : null;
  if (!ref || !payout) {
    logger.error('payout webhook for an unknown reference', { reference: event.data.reference, order_id: event.data.order_id });
    return { received: true, outcome: 'UNKNOWN_REFERENCE' };
  }
  const at = deps.now().toISOString();
  let outcome;
  if (event.type === 'order.settled') {
    outcome = await deps.payouts.recordSettlement(payout, {
      attempt: ref.attempt,
      order_id: event.data.order_id,
      amount_ugx: event.data.amount_ugx ?? payout.estimated_ugx,
      exchange_rate: String(event.data.exchange_rate ?? payout.exchange_rate),
      mobile_money_transaction_id: event.data.mobile_money_transaction_id ?? '',
      settled_at: event.data.settled_at ?? at,
    }, at, webhook);
  } else {
    outcome = await deps.payouts.recordFailure(payout, ref.attempt, event.data.failure_reason ?? 'order failed', at, webhook);
  }
  if (outcome === 'APPLIED') {
    const fresh = await deps.payouts.get(ref.payoutId);
    if (fresh?.task_token && fresh.task_token_attempt === ref.attempt) {
      if (event.type === 'order.settled') await deps.workflow.resume(fresh.task_token, { status: fresh.status, provider_order_id: event.data.order_id });
      else await deps.workflow.fail(fresh.task_token, 'OrderFailed', event.data.failure_reason ?? 'order failed');
    }
  } else {
    logger.info('payout webhook changed nothing', { outcome, payout_id: ref.payoutId, attempt: ref.attempt, type: event.type, status: payout.status });
  }
  return { received: true, outcome };
}
