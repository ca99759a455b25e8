import { ProviderUnavailableError } from '../domain/errors';
import { parseProviderReference } from '../domain/ids';
import { unexplainedFailure } from '../domain/payout-failures';
import type { WebhookReceiptStore } from '../domain/ports/messaging';
import type { PayoutOrderReader, PayoutProvider, PayoutStore, PayoutWorkflow, ProviderOrder } from '../domain/ports/payouts';
import type { Payout } from '../domain/records';
import { logger } from '../runtime/logger';

/** Receipt source of the payout provider's webhooks (`WEBHOOK#payout-provider#<webhook-id>`). */
const WEBHOOK_SOURCE = 'payout-provider';

/** Key of the error log line an event the provider does not confirm raises (a metric filter / alarm matches on it). */
export const MISMATCH_ALARM = 'FORGED_OR_MISMATCHED_WEBHOOK';

/**
 * A payout-provider event, its Standard Webhooks signature verified and its body validated by the
 * transport (shared/http/webhook.ts, shared/http/payout-schemas.ts PayoutWebhookSchema). A claim,
 * not a fact: its values are checked against the provider's order and never stored.
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

/** The ports the payout webhook needs. */
export interface PayoutWebhookDeps {
  payouts: PayoutStore;
  /** Asked for the order (the source of truth) before an event is applied. */
  provider: PayoutOrderReader;
  /** Webhook receipts: replays are answered without asking the provider; events not applied are remembered here. */
  receipts: WebhookReceiptStore;
  workflow: PayoutWorkflow;
  now: () => Date;
}

/**
 * What `applyPayoutWebhook` did: APPLIED; DUPLICATE_WEBHOOK (webhook id seen before); IGNORED (the
 * payout is final or on another attempt); UNKNOWN_REFERENCE (not one of our payouts); MISMATCH (the
 * provider does not confirm the event: nothing applied, alarm logged).
 */
export type PayoutWebhookOutcome = 'APPLIED' | 'DUPLICATE_WEBHOOK' | 'IGNORED' | 'UNKNOWN_REFERENCE' | 'MISMATCH';

/**
 * POST /api/webhooks/payout-provider (docs/api/inbound-webhooks.md#payout-provider-webhook, docs/api/payouts.md#payout-lifecycle), after the transport verified the
 * signature and parsed the event. A signature proves only who could sign, so the event is
 * confirmed with the provider before anything is applied (issue 9):
 *  1. the reference `<payout_id>-A<attempt>` must name one of our payouts (else UNKNOWN_REFERENCE,
 *     nothing remembered); a webhook id already received is DUPLICATE_WEBHOOK, without asking;
 *  2. the provider's order for that reference is read (`findOrderByReference`). Unreachable, or an
 *     answer that is not an order: `ProviderUnavailableError` (503 PROVIDER_UNAVAILABLE), nothing
 *     recorded and no receipt, so the sender retries;
 *  3. the event is confirmed only when the provider's order exists, has the event's status
 *     (SETTLED for `order.settled`, FAILED for `order.failed`), has the event's order id (and the
 *     order id recorded on the payout for attempt 1, the only attempt whose recorded order is
 *     known for certain), has the payout's `amount_usd_micro`, and every value the event carries
 *     (amount_ugx, exchange_rate compared as numbers, mobile_money_transaction_id, settled_at
 *     compared as instants) equals the provider's;
 *  4. confirmed: recorded durably with the PROVIDER's values (order id, amount_ugx, exchange_rate,
 *     mobile money id, settled_at; failure reason) — `order.settled` completes the payout
 *     (COMPLETED, PAYMENT_CONFIRMED), `order.failed` marks the attempt FAILED — in one conditional
 *     transaction that also remembers the webhook id; then the waiting attempt is resumed
 *     (SendTaskSuccess) or failed (SendTaskFailure `OrderFailed`). A settlement for a superseded
 *     attempt or a final payout changes nothing (IGNORED);
 *  5. not confirmed: MISMATCH — an error is logged with `alarm: 'FORGED_OR_MISMATCHED_WEBHOOK'` and
 *     the facts, the webhook id is remembered (a replay costs one read), and the payout is left as
 *     it was (no failure recorded, the attempt not consumed): the provider's genuine webhook, the
 *     attempt's check or the reconciler completes it from the provider's answer.
 * Every outcome but the 503 is acknowledged with 200 `{received: true, outcome}`: a mismatch is
 * not a request error the sender could fix, and a forger learns nothing and gets no retry signal.
 */
export async function applyPayoutWebhook(
  deps: PayoutWebhookDeps,
  input: { webhookId: string; event: PayoutProviderEvent },
): Promise<{ received: true; outcome: PayoutWebhookOutcome }> {
  const { event } = input;
  const webhook = { source: WEBHOOK_SOURCE, id: input.webhookId };
  const ref = parseProviderReference(event.data.reference);
  const payout = ref ? await deps.payouts.get(ref.payoutId) : null;
  if (!ref || !payout) {
    logger.error('payout webhook for an unknown reference', { reference: event.data.reference, order_id: event.data.order_id });
    return { received: true, outcome: 'UNKNOWN_REFERENCE' };
  }
  if (await deps.receipts.hasWebhook(webhook.source, webhook.id)) return { received: true, outcome: 'DUPLICATE_WEBHOOK' };

  const order = await providerOrder(deps.provider, event.data.reference);
  const problems = disagreements(event, order, payout, ref.attempt);
  const at = deps.now().toISOString();
  if (!order || problems.length) {
    logger.error('payout webhook not confirmed by the provider; not applied, left for reconciliation', {
      alarm: MISMATCH_ALARM,
      problems,
      webhook_id: webhook.id,
      type: event.type,
      payout_id: payout.payment_id,
      attempt: ref.attempt,
      payout_status: payout.status,
      webhook_order_id: event.data.order_id,
      provider_order_id: order?.order_id ?? null,
      provider_status: order?.status ?? null,
      webhook_values: {
        amount_ugx: event.data.amount_ugx ?? null,
        exchange_rate: event.data.exchange_rate ?? null,
        mobile_money_transaction_id: event.data.mobile_money_transaction_id ?? null,
        settled_at: event.data.settled_at ?? null,
      },
      provider_values: order
        ? {
            amount_usd_micro: order.amount_usd_micro,
            amount_ugx: order.amount_ugx,
            exchange_rate: order.exchange_rate,
            mobile_money_transaction_id: order.mobile_money_transaction_id ?? null,
            settled_at: order.settled_at ?? null,
          }
        : null,
    });
    const first = await deps.receipts.claimWebhook(webhook.source, webhook.id, at);
    return { received: true, outcome: first ? 'MISMATCH' : 'DUPLICATE_WEBHOOK' };
  }

  // The provider's own answer decides (its code normalised by the adapter); the event's words only when the order gives none.
  const failure = order.failure ?? unexplainedFailure(event.data.failure_reason ?? 'order failed');
  const reason = failure.detail;
  const outcome =
    order.status === 'SETTLED'
      ? await deps.payouts.recordSettlement(
          payout,
          {
            attempt: ref.attempt,
            order_id: order.order_id,
            ...(order.provider ? { provider: order.provider } : {}),
            amount_ugx: order.amount_ugx,
            exchange_rate: order.exchange_rate,
            mobile_money_transaction_id: order.mobile_money_transaction_id ?? '',
            settled_at: order.settled_at ?? at,
          },
          at,
          webhook,
        )
      : await deps.payouts.recordFailure(payout, ref.attempt, failure, at, webhook);
  if (outcome === 'APPLIED') {
    const fresh = await deps.payouts.get(ref.payoutId);
    if (fresh?.task_token && fresh.task_token_attempt === ref.attempt) {
      if (order.status === 'SETTLED')
        await deps.workflow.resume(fresh.task_token, { status: fresh.status, provider_order_id: order.order_id });
      else await deps.workflow.fail(fresh.task_token, 'OrderFailed', reason);
    }
  } else {
    logger.info('payout webhook changed nothing', {
      outcome,
      payout_id: ref.payoutId,
      attempt: ref.attempt,
      type: event.type,
      status: payout.status,
    });
  }
  return { received: true, outcome };
}

/** The provider's order for `reference`; any failure to get a readable answer is ProviderUnavailableError. */
async function providerOrder(provider: PayoutOrderReader, reference: string): Promise<ProviderOrder | null> {
  try {
    return await provider.findOrderByReference(reference);
  } catch (err) {
    if (err instanceof ProviderUnavailableError) throw err;
    logger.error("payout webhook: the provider's order could not be read", { reference, error: err as Error });
    throw new ProviderUnavailableError('The payout provider could not confirm the event; nothing was recorded, retry.', err);
  }
}

/** Why `order` does not confirm `event` for `payout`'s `attempt` (empty when it does). */
function disagreements(event: PayoutProviderEvent, order: ProviderOrder | null, payout: Payout, attempt: number): string[] {
  if (!order) return ['no order at the provider for the reference'];
  const d = event.data;
  const out: string[] = [];
  const status = event.type === 'order.settled' ? 'SETTLED' : 'FAILED';
  if (order.status !== status) out.push(`provider order is ${order.status}, event is ${event.type}`);
  if (order.order_id !== d.order_id) out.push("order_id differs from the provider's");
  if (attempt === 1 && payout.attempt === 1 && payout.provider_order_id && payout.provider_order_id !== order.order_id)
    out.push('provider order differs from the order recorded for the attempt');
  if (order.amount_usd_micro !== payout.amount_usd_micro) out.push("provider order amount_usd_micro differs from the payout's");
  if (event.type === 'order.settled') {
    if (d.amount_ugx != null && d.amount_ugx !== order.amount_ugx) out.push("amount_ugx differs from the provider's");
    if (
      d.exchange_rate != null &&
      !(Number(d.exchange_rate) === Number(order.exchange_rate) && Number.isFinite(Number(order.exchange_rate)))
    )
      out.push("exchange_rate differs from the provider's");
    if (d.mobile_money_transaction_id != null && d.mobile_money_transaction_id !== (order.mobile_money_transaction_id ?? null))
      out.push("mobile_money_transaction_id differs from the provider's");
    if (d.settled_at != null && !(order.settled_at && Date.parse(d.settled_at) === Date.parse(order.settled_at)))
      out.push("settled_at differs from the provider's");
  }
  return out;
}

/**
 * A provider's callback that names only its order (docs/api/inbound-webhooks.md#pawapay-callback), after
 * the transport verified its signature: the order is read from the provider by its id (unreachable:
 * ProviderUnavailableError, 503, nothing recorded); unknown → UNKNOWN_REFERENCE; still pending →
 * IGNORED; settled or failed → applied exactly as a payout webhook of that status
 * (`applyPayoutWebhook`, which confirms it with the provider's order under its reference), with
 * `callbackId` as the delivery's idempotency key.
 */
export async function applyOrderCallback(
  deps: Omit<PayoutWebhookDeps, 'provider'> & { provider: Pick<PayoutProvider, 'getOrder' | 'findOrderByReference'> },
  input: { callbackId: string; orderId: string },
): Promise<{ received: true; outcome: PayoutWebhookOutcome }> {
  let order: ProviderOrder | null;
  try {
    order = await deps.provider.getOrder(input.orderId);
  } catch (err) {
    if (err instanceof ProviderUnavailableError) throw err;
    logger.error("provider callback: the provider's order could not be read", { order_id: input.orderId, error: err as Error });
    throw new ProviderUnavailableError('The payout provider could not confirm the callback; nothing was recorded, retry.', err);
  }
  if (!order) {
    logger.error('provider callback for an order the provider does not know', { alarm: MISMATCH_ALARM, order_id: input.orderId });
    return { received: true, outcome: 'UNKNOWN_REFERENCE' };
  }
  if (order.status === 'PENDING') return { received: true, outcome: 'IGNORED' };
  return applyPayoutWebhook(deps, {
    webhookId: input.callbackId,
    event: {
      type: order.status === 'SETTLED' ? 'order.settled' : 'order.failed',
      data: { order_id: order.order_id, reference: order.reference },
    },
  });
}
