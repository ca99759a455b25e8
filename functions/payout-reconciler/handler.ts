import { payoutRequestQueue } from '../../shared/adapters/aws/queues';
import { payoutDeps } from '../../shared/composition';
import { envOr } from '../../shared/config';
import { reconcilePayouts, type ReconcileReport } from '../../shared/use-cases/reconcile';

/**
 * Scheduled reconciliation (EventBridge in AWS, a timer locally): settles, fails or restarts
 * payouts with no activity for RECONCILE_AFTER_SECONDS (default 300), after asking the provider.
 */
export async function handler(): Promise<ReconcileReport> {
  return reconcilePayouts({ ...payoutDeps(), payoutQueue: payoutRequestQueue() }, { staleAfterSeconds: Number(envOr('RECONCILE_AFTER_SECONDS', '300')) });
}
