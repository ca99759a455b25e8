import { instrumented } from '../../shared/runtime/instrument';
import { pinReconciliationDeps } from '../../shared/composition/batches';
import { ledgerParkingRepo } from '../../shared/composition/ledger';
import { loanWriteOffDeps } from '../../shared/composition/lending';
import { custodyRepo, ledgerWriteQueue, now } from '../../shared/composition/platform';
import { envOr } from '../../shared/config';
import { metrics } from '../../shared/runtime/metrics';
import { requeueStalePins } from '../../shared/use-cases/evidence-pinning';
import { oldestPendingLedgerWriteAgeSeconds, requeueStaleLedgerWrites } from '../../shared/use-cases/ledger-writer';
import { writeOffDefaultedLoans, type LoanWriteOffReport } from '../../shared/use-cases/loans';

/**
 * Scheduled reconciliation of the trail's background work (EventBridge, every 5 minutes), both
 * after RECONCILE_AFTER_SECONDS (default 300) of idleness: ledger writes still open are queued
 * again for the single ledger writer (parked ones are not: an operator retries or discards them,
 * `npm run ledger-parked`), and evidence pin jobs still open are queued again for the background
 * pinner (at most three times each). Reports the age of the oldest open ledger write (metric
 * LedgerOldestPendingAge, seconds; alarm LedgerOldestPendingWrite). Loans still ACTIVE 90 days
 * after their due date get their vault write-off requested (WRITE_OFF_LOAN, through the single
 * ledger writer; the loan is DEFAULTED once it is mined).
 */
export const handler = instrumented(
  async (): Promise<{
    ledgerWritesRequeued: number;
    oldestPendingLedgerWriteAgeSeconds: number;
    pinsRequeued: number;
    pinsGivenUp: number;
    writeOffs: LoanWriteOffReport;
  }> => {
    const staleAfterSeconds = Number(envOr('RECONCILE_AFTER_SECONDS', '300'));
    const ledgerWritesRequeued = await requeueStaleLedgerWrites(
      { custody: custodyRepo(), ledgerQueue: ledgerWriteQueue(), now },
      staleAfterSeconds,
    );
    const oldestAge = await oldestPendingLedgerWriteAgeSeconds({ parking: ledgerParkingRepo(), now });
    metrics.count('LedgerOldestPendingAge', {}, oldestAge);
    const pins = await requeueStalePins(pinReconciliationDeps(), staleAfterSeconds);
    const writeOffs = await writeOffDefaultedLoans(loanWriteOffDeps());
    return { ledgerWritesRequeued, oldestPendingLedgerWriteAgeSeconds: oldestAge, ...pins, writeOffs };
  },
);
