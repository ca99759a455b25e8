import { unexplainedFailure } from '../domain/payout-failures';
import { providerReference } from '../domain/ids';
import { roundOf } from '../domain/payout-lifecycle';
import type { Payout } from '../domain/records';
import { logger } from '../runtime/logger';
import { startBatchPayout, type PayoutDeps } from './payouts';

/** What one reconciliation run did. */
export interface ReconcileReport {
  examined: number;
  completed: number;
  failed: number;
  restarted: number;
  discarded: number;
  /** Confirmed batches still without their NET_COFFEE_PAYMENT payout whose payout was started (or found started, or the batch found not payable). */
  batchesStarted: number;
  /** Such batches whose start failed (logged; the next run tries again). */
  batchStartsFailed: number;
}

/**
 * Scheduled reconciliation (issue "never lost"; docs/api/payouts.md#payout-lifecycle: a payout whose webhook does not come
 * is found by asking the provider, never by paying again). Payouts that are not final and have
 * had no activity for `staleAfterSeconds`:
 *  - PENDING (creation stopped before the order was placed): the provider is asked for the
 *    attempt-1 order; if it exists the payout becomes PROCESSING and its lifecycle starts,
 *    otherwise, once the payout has been idle for `unsentAfterSeconds` (default
 *    `staleAfterSeconds`; the scheduled run passes at least PAYOUT_CREATION_WINDOW_SECONDS), the
 *    payout and its guard are removed (nothing was sent). Before that its creating call may still
 *    be placing the order: removing it then would let the order land for a deleted payout, and a
 *    new payout pay the batch again;
 *  - PROCESSING / RETRY_n / FAILED: the current attempt's order status is read from the provider;
 *    settled → recorded as COMPLETED and the waiting task resumed; failed → recorded as FAILED and
 *    the task failed (the state machine then retries); otherwise the lifecycle execution is
 *    (re)started by name, which is a no-op when it is running.
 * Confirmed batches still waiting for their NET_COFFEE_PAYMENT payout after `staleAfterSeconds`
 * (a lost payout request) get it started here (startBatchPayout, idempotent through the payout's
 * (batch, reason) guard); one batch's failure does not stop the others.
 */
export async function reconcilePayouts(
  deps: PayoutDeps,
  opts: { staleAfterSeconds: number; unsentAfterSeconds?: number; limit?: number },
): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    examined: 0,
    completed: 0,
    failed: 0,
    restarted: 0,
    discarded: 0,
    batchesStarted: 0,
    batchStartsFailed: 0,
  };
  const cutoff = new Date(deps.now().getTime() - opts.staleAfterSeconds * 1000).toISOString();
  const unsentCutoff = new Date(deps.now().getTime() - Math.max(opts.staleAfterSeconds, opts.unsentAfterSeconds ?? 0) * 1000).toISOString();
  for (const payout of await deps.payouts.openBefore(cutoff, opts.limit ?? 100)) {
    report.examined++;
    try {
      await reconcileOne(deps, payout, report, unsentCutoff);
    } catch (err) {
      logger.warn('reconciliation of a payout failed; the next run tries again', { payout_id: payout.payment_id, error: err as Error });
    }
  }
  for (const batchId of await deps.batches.awaitingPayoutBefore(cutoff, opts.limit ?? 100)) {
    try {
      await startBatchPayout(deps, batchId);
      report.batchesStarted++;
    } catch (err) {
      report.batchStartsFailed++;
      logger.warn('starting a batch payout failed; the next run tries again', { batch_id: batchId, error: err as Error });
    }
  }
  if (report.examined || report.batchesStarted || report.batchStartsFailed) logger.info('reconciliation run', { ...report });
  return report;
}

async function reconcileOne(deps: PayoutDeps, payout: Payout, report: ReconcileReport, unsentCutoff: string): Promise<void> {
  const at = deps.now().toISOString();
  const order = await deps.provider.findOrderByReference(providerReference(payout.payment_id, payout.attempt));
  if (payout.status === 'PENDING') {
    if (!order) {
      if (payout.updated_at >= unsentCutoff) return; // its creating call may still be placing the order
      await deps.payouts.discardUnsent(payout);
      report.discarded++;
      return;
    }
    await deps.payouts.markProcessing(payout, order, at);
    await deps.workflow.start(payout.payment_id);
    report.restarted++;
    return;
  }
  if (order?.status === 'SETTLED') {
    const outcome = await deps.payouts.recordSettlement(
      payout,
      {
        attempt: payout.attempt,
        order_id: order.order_id,
        ...(order.provider ? { provider: order.provider } : {}),
        amount_ugx: order.amount_ugx,
        exchange_rate: order.exchange_rate,
        mobile_money_transaction_id: order.mobile_money_transaction_id ?? '',
        settled_at: order.settled_at ?? at,
      },
      at,
    );
    if (outcome === 'APPLIED') report.completed++;
    const fresh = await deps.payouts.get(payout.payment_id);
    if (fresh?.task_token && fresh.task_token_attempt === payout.attempt)
      await deps.workflow.resume(fresh.task_token, { status: fresh.status, provider_order_id: order.order_id });
    return;
  }
  if (order?.status === 'FAILED' && payout.status !== 'FAILED') {
    const failure = order.failure ?? unexplainedFailure();
    const outcome = await deps.payouts.recordFailure(payout, payout.attempt, failure, at);
    if (outcome === 'APPLIED') report.failed++;
    const fresh = await deps.payouts.get(payout.payment_id);
    if (fresh?.task_token && fresh.task_token_attempt === payout.attempt)
      await deps.workflow.fail(fresh.task_token, 'OrderFailed', failure.detail);
    return;
  }
  // The execution of the payout's current round (a resolution retry runs as `<payout_id>-R<round>`, docs/api/payouts.md#manual-review).
  await deps.workflow.start(payout.payment_id, roundOf(payout.attempt));
  report.restarted++;
}
