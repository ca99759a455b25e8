import { ledgerWriterDeps } from '../../shared/composition';
import type { LedgerWriteMessage } from '../../shared/domain/ports';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { writeLedgerTx } from '../../shared/use-cases/ledger-writer';
import { meteredLedgerConfirm } from '../../shared/use-cases/metered-stores';

/** How long the writer waits for one receipt before the queue retries the write (ms). */
const RECEIPT_WAIT_MS = 30_000;

/**
 * The single ledger writer: consumer of the FIFO ledger-write queue (one message group, so one
 * write at a time and nonces in order) — BatchToken mints and trace-log records alike. Waits up to
 * 30 s for each receipt; unmined writes are retried by the queue and re-sent as the same signed
 * transaction. Metrics: LedgerWriteLag (commit → mined) on each confirmation, LedgerWriteRetries
 * for each delivery that did not land.
 */
export const handler = sqsConsumer<LedgerWriteMessage>(async (msg) => {
  const deps = ledgerWriterDeps();
  await writeLedgerTx({ ...deps, custody: meteredLedgerConfirm(deps.custody) }, msg.ledger_tx_id, RECEIPT_WAIT_MS);
}, { retryMetric: 'LedgerWriteRetries' });
