import { ledgerParkingRepo, ledgerWriterDeps } from '../../shared/composition/ledger';
import { envOr } from '../../shared/config';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import { metrics } from '../../shared/runtime/metrics';
import { sqsFifoGroupConsumer } from '../../shared/runtime/sqs-consumer';
import { RECEIPT_CHECK_WAIT_MS } from '../../shared/domain/ledger-batching';
import { DEFAULT_LEDGER_WRITE_MAX_ATTEMPTS } from '../../shared/use-cases/ledger-writer';
import { landQueuedMessages } from '../../shared/use-cases/ledger-write-run';
import { meteredLedgerConfirm } from '../../shared/use-cases/metered-stores';

/** How long the writer waits for one receipt before the queue retries the write (ms). */
const RECEIPT_WAIT_MS = 30_000;

/**
 * The single ledger writer: consumer of the FIFO ledger-write queue — BatchToken mints, trace-log
 * records, vault writes and audit anchors alike — and of the FIFO ledger-receipt queue, up to 10
 * messages an invocation (docs/ledger.md#batches-of-queue-messages). The writes go one at a time,
 * in order, so nonces stay in order; the `receipt_check` messages of the pipelined writer
 * (docs/ledger.md#the-pipelined-writer), on their own queue, run beside them, each gathering a
 * sent group's receipt (waiting up to RECEIPT_CHECK_WAIT_MS, then queuing the next). A batch that
 * holds both (receipt checks queued on the writes queue before the receipt queue existed) runs its
 * two message groups side by side.
 * Mints and stage records are pipelined: their batched transaction is sent without waiting; the
 * member messages of a group sent already end from one batch read (`landQueuedMessages`). Other
 * writes wait up to 30 s for their receipt; unmined writes are retried by the queue and re-sent as
 * the same signed transaction. A write the chain refuses (a revert when simulated, estimated or
 * mined) is settled as refused at once; one that fails LEDGER_WRITE_MAX_ATTEMPTS times (default 8,
 * transport failures not counted) is parked so the writes behind it proceed. A message the
 * invocation has no time left for is returned unstarted. Metrics: LedgerWriteLag (commit → mined)
 * on each confirmation, LedgerWriteRetries for each delivery that did not land,
 * LedgerWritesParked. In a group, a message that fails stops it: it and the messages behind it are
 * reported as failures, unhandled; the other group goes on.
 */
export const handler = sqsFifoGroupConsumer<LedgerWriteMessage>((bodies, run) => landMessages(bodies, run.remainingMs), {
  retryMetric: 'LedgerWriteRetries',
});

/** One message group's messages through the writer (`landQueuedMessages`) with this function's ports and settings. */
function landMessages(msgs: LedgerWriteMessage[], remainingMs: () => number) {
  const deps = ledgerWriterDeps();
  const maxAttempts = Number(envOr('LEDGER_WRITE_MAX_ATTEMPTS', String(DEFAULT_LEDGER_WRITE_MAX_ATTEMPTS)));
  return landQueuedMessages(
    {
      ...deps,
      custody: meteredLedgerConfirm(deps.custody),
      parking: ledgerParkingRepo(),
      parkedMetric: () => metrics.count('LedgerWritesParked'),
    },
    msgs,
    {
      receiptWaitMs: RECEIPT_WAIT_MS,
      receiptCheckWaitMs: RECEIPT_CHECK_WAIT_MS,
      maxAttempts: Number.isSafeInteger(maxAttempts) && maxAttempts >= 1 ? maxAttempts : DEFAULT_LEDGER_WRITE_MAX_ATTEMPTS,
      remainingMs,
    },
  );
}
