import { payoutDeps } from '../../shared/composition';
import { ledgerWriteQueue, payoutRequestQueue } from '../../shared/composition/queues';
import { custodyRepo } from '../../shared/composition/repos';
import { envOr } from '../../shared/config';
import { reconcile, type ReconcileReport } from '../../shared/use-cases/reconcile';

/**
 * Scheduled reconciliation (EventBridge, every 5 minutes): payouts with no activity for
 * RECONCILE_AFTER_SECONDS (default 300) are settled, failed or restarted from the provider's
 * answer; batches still without their payout and unconfirmed ledger writes are queued again.
 */
export async function handler(): Promise<ReconcileReport & { ledgerWritesRequeued: number }> {
  const staleAfterSeconds = Number(envOr('RECONCILE_AFTER_SECONDS', '300'));
  return reconcile({ ...payoutDeps(), payoutQueue: payoutRequestQueue(), custody: custodyRepo(), ledgerQueue: ledgerWriteQueue() }, { staleAfterSeconds });
}
