import { instrumented } from '../../shared/runtime/instrument';
import { ledgerWriteQueue } from '../../shared/composition/queues';
import { custodyRepo, now } from '../../shared/composition/repos';
import { envOr } from '../../shared/config';
import { requeueStaleLedgerWrites } from '../../shared/use-cases/ledger-writer';

/**
 * Scheduled reconciliation of the ledger writes (EventBridge, every 5 minutes): writes still
 * unconfirmed after RECONCILE_AFTER_SECONDS (default 300) are queued again for the single ledger
 * writer.
 */
export const handler = instrumented(async (): Promise<{ ledgerWritesRequeued: number }> => {
  const staleAfterSeconds = Number(envOr('RECONCILE_AFTER_SECONDS', '300'));
  return { ledgerWritesRequeued: await requeueStaleLedgerWrites({ custody: custodyRepo(), ledgerQueue: ledgerWriteQueue(), now }, staleAfterSeconds) };
});
