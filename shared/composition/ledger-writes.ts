import { SqsWorkQueue } from '../adapters/aws/queues';
import { CustodyRepository } from '../adapters/dynamodb/custody-repo';
import type { LedgerWriteMessage } from '../use-cases/custody';

/**
 * The custody records and the single ledger writer's FIFO queue. Split from ./custody so that
 * functions that only queue ledger writes do not bundle the IPFS and chain-reading adapters.
 */
let custody: CustodyRepository | undefined;

export const custodyRepo = () => (custody ??= new CustodyRepository());
export const ledgerWriteQueue = () => new SqsWorkQueue<LedgerWriteMessage>('LEDGER_WRITE_QUEUE_URL', { fifoGroup: 'trace-log-writer' });
