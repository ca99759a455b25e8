import { SqsWorkQueue } from '../adapters/aws/queues';
import type { DdsFilingMessage } from '../domain/ports/eudr';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import type { WorkQueue } from '../domain/ports/messaging';
import type { PayoutRequestMessage } from '../domain/ports/payouts';

/**
 * The work queues (SQS), each addressed by the environment variable its function's manifest
 * entry provides.
 */

/** The single ledger writer's FIFO queue: one message group, so writes land one at a time in order. */
export const ledgerWriteQueue = (): WorkQueue<LedgerWriteMessage> =>
  new SqsWorkQueue<LedgerWriteMessage>('LEDGER_WRITE_QUEUE_URL', { fifoGroup: 'trace-log-writer' });
/** Requests to start a confirmed batch's NET_COFFEE_PAYMENT payout. */
export const payoutRequestQueue = (): WorkQueue<PayoutRequestMessage> => new SqsWorkQueue<PayoutRequestMessage>('PAYOUT_REQUEST_QUEUE_URL');
/** Due diligence statements to file with the EU Information System. */
export const ddsFilingQueue = (): WorkQueue<DdsFilingMessage> => new SqsWorkQueue<DdsFilingMessage>('DDS_FILING_QUEUE_URL');
