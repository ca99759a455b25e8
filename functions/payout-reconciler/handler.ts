import { payoutRequestQueue } from '../../shared/adapters/aws/queues';
import { payoutDeps } from '../../shared/composition';
import { custodyRepo, ledgerWriteQueue } from '../../shared/composition/ledger-writes';
import { now } from '../../shared/composition/repos';
import { envOr } from '../../shared/config';
import { requeueStaleLedgerWrites } from '../../shared/use-cases/custody';
import { reconcilePayouts, type ReconcileReport } from '../../shared/use-cases/reconcile';

/**
 * Scheduled reconciliation (EventBridge in AWS, a timer locally), for what has had no activity for
 * RECONCILE_AFTER_SECONDS (default 300): payouts are settled, failed or restarted after asking the
 * provider; batches still without their payout are queued again; unconfirmed trace-log writes are
 * queued again for the ledger writer.
 */
export async function handler(): Promise<ReconcileReport & { ledgerWritesRequeued: number }> {
  const staleAfterSeconds = Number(envOr('RECONCILE_AFTER_SECONDS', '300'));
  const payouts = await reconcilePayouts({ ...payoutDeps(), payoutQueue: payoutRequestQueue() }, { staleAfterSeconds });
  const ledgerWritesRequeued = await requeueStaleLedgerWrites({ custody: custodyRepo(), ledgerQueue: ledgerWriteQueue(), now }, staleAfterSeconds);
  return { ...payouts, ledgerWritesRequeued };
}
