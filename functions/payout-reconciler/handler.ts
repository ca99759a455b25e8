import { payoutDeps } from '../../shared/composition/payouts';
import { loanRepo } from '../../shared/composition/platform';
import { envOr } from '../../shared/config';
import { PAYOUT_CREATION_WINDOW_SECONDS } from '../../shared/domain/payout-lifecycle';
import { reconcileLoans, startLoanDisbursement, type LoanReconcileReport } from '../../shared/use-cases/loans';
import { reconcilePayouts, type ReconcileReport } from '../../shared/use-cases/reconcile';
import { instrumented } from '../../shared/runtime/instrument';

/**
 * Scheduled reconciliation (EventBridge, every 5 minutes): payouts with no activity for
 * RECONCILE_AFTER_SECONDS (default 300) are settled, failed or restarted from the provider's
 * answer (a PENDING one with no order is discarded only after PAYOUT_CREATION_WINDOW_SECONDS); batches still without their payout get it started; PENDING loans are stored ACTIVE once
 * their disbursement settled, or their lost disbursement is started again.
 */
async function run(): Promise<ReconcileReport & { loans: LoanReconcileReport }> {
  const staleAfterSeconds = Number(envOr('RECONCILE_AFTER_SECONDS', '300'));
  const deps = payoutDeps();
  // A PENDING payout is discarded only when no creating call can still be placing its order.
  const payouts = await reconcilePayouts(deps, { staleAfterSeconds, unsentAfterSeconds: PAYOUT_CREATION_WINDOW_SECONDS });
  const loans = await reconcileLoans(
    {
      loans: loanRepo(),
      payouts: deps.payouts,
      now: deps.now,
      startDisbursement: (loanId) => startLoanDisbursement({ ...deps, loans: loanRepo() }, loanId),
    },
    { staleAfterSeconds },
  );
  return { ...payouts, loans };
}

/** The task, its business metrics flushed (EMF) when it ends. */
export const handler = instrumented(run);
