import { payoutDeps } from '../../shared/composition';
import { envOr } from '../../shared/config';
import { reconcilePayouts, type ReconcileReport } from '../../shared/use-cases/reconcile';

/**
 * Scheduled reconciliation (EventBridge, every 5 minutes): payouts with no activity for
 * RECONCILE_AFTER_SECONDS (default 300) are settled, failed or restarted from the provider's
 * answer; batches still without their payout get it started.
 */
export async function handler(): Promise<ReconcileReport> {
  const staleAfterSeconds = Number(envOr('RECONCILE_AFTER_SECONDS', '300'));
  return reconcilePayouts(payoutDeps(), { staleAfterSeconds });
}
