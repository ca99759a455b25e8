import { ledgerParkingRepo, ledgerWriterDeps } from '../../shared/composition/ledger';
import { envOr } from '../../shared/config';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import { metrics } from '../../shared/runtime/metrics';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { RECEIPT_CHECK_WAIT_MS } from '../../shared/domain/ledger-batching';
import { checkLedgerGroupReceipt, DEFAULT_LEDGER_WRITE_MAX_ATTEMPTS, landOrPark } from '../../shared/use-cases/ledger-writer';
import { meteredLedgerConfirm } from '../../shared/use-cases/metered-stores';

/** How long the writer waits for one receipt before the queue retries the write (ms). */
const RECEIPT_WAIT_MS = 30_000;

/**
 * The single ledger writer: consumer of the FIFO ledger-write queue (the writes' message group, so
 * one write at a time and nonces in order) — BatchToken mints, trace-log records, vault writes and
 * audit anchors alike. Mints and stage records are pipelined (docs/ledger.md#the-pipelined-writer):
 * their batched transaction is sent without waiting, and `receipt_check` messages, in the queue's
 * second message group (run beside the writes, one at a time), gather its receipt and settle the
 * members (each waits up to RECEIPT_CHECK_WAIT_MS, then queues the next). Other writes wait up to
 * 30 s for their receipt; unmined writes are retried by the queue and re-sent as the same signed
 * transaction. A write the chain refuses (a revert when simulated,
 * estimated or mined) is settled as refused at once; one that fails LEDGER_WRITE_MAX_ATTEMPTS
 * times (default 8, transport failures not counted) is parked so the writes behind it proceed.
 * Metrics: LedgerWriteLag (commit → mined) on each confirmation, LedgerWriteRetries for each
 * delivery that did not land, LedgerWritesParked. Handled as a FIFO batch (`fifo: true`): a write
 * that fails stops the batch, and it and the writes behind it are reported as failures unhandled.
 */
export const handler = sqsConsumer<LedgerWriteMessage>(
  async (msg) => {
    const deps = ledgerWriterDeps();
    if (msg.receipt_check) {
      await checkLedgerGroupReceipt({ ...deps, custody: meteredLedgerConfirm(deps.custody) }, msg.receipt_check, RECEIPT_CHECK_WAIT_MS);
      return;
    }
    const maxAttempts = Number(envOr('LEDGER_WRITE_MAX_ATTEMPTS', String(DEFAULT_LEDGER_WRITE_MAX_ATTEMPTS)));
    await landOrPark(
      {
        ...deps,
        custody: meteredLedgerConfirm(deps.custody),
        parking: ledgerParkingRepo(),
        parkedMetric: () => metrics.count('LedgerWritesParked'),
      },
      msg.ledger_tx_id,
      {
        receiptWaitMs: RECEIPT_WAIT_MS,
        maxAttempts: Number.isSafeInteger(maxAttempts) && maxAttempts >= 1 ? maxAttempts : DEFAULT_LEDGER_WRITE_MAX_ATTEMPTS,
      },
    );
  },
  { retryMetric: 'LedgerWriteRetries', fifo: true },
);
