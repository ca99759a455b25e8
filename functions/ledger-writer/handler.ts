import { ledger } from '../../shared/composition';
import { custodyRepo } from '../../shared/composition/ledger-writes';
import { batchRepo, now } from '../../shared/composition/repos';
import { payoutRequestQueue } from '../../shared/adapters/aws/queues';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { writeLedgerTx, type LedgerWriteMessage } from '../../shared/use-cases/custody';

/**
 * The single ledger writer: consumer of the FIFO ledger-write queue (one message group, so one
 * write at a time and nonces in order) — BatchToken mints and trace-log records alike. Waits up to 30 s for each receipt; unmined writes are
 * retried by the queue and re-sent as the same signed transaction.
 */
export const handler = sqsConsumer<LedgerWriteMessage>(async (msg) => {
  await writeLedgerTx({ custody: custodyRepo(), ledger: await ledger(), batches: batchRepo(), payoutQueue: payoutRequestQueue(), now }, msg.ledger_tx_id, 30_000);
});
