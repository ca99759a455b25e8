import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from './logger';
import { instrumented } from './instrument';
import { metrics, type MetricName } from './metrics';

/**
 * An SQS consumer that reports partial batch failures: the records of a batch are handled
 * concurrently, each on its own; a record that throws is returned in `batchItemFailures`, so only
 * it is retried (and after maxReceiveCount lands in the dead-letter queue). A consumer whose
 * messages must be handled in order (the FIFO ledger writer) takes batches of one (shared/manifest.ts).
 * `retryMetric` (e.g. LedgerWriteRetries) is counted once per failed record; the invocation is
 * traced and its metrics flushed when the batch is done (./instrument.ts).
 */
export function sqsConsumer<T>(handle: (body: T) => Promise<void>, opts: { retryMetric?: MetricName } = {}) {
  return instrumented(async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const outcomes = await Promise.allSettled(event.Records.map(async (record) => handle(JSON.parse(record.body) as T)));
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    outcomes.forEach((o, i) => {
      if (o.status === 'fulfilled') return;
      const record = event.Records[i]!;
      logger.warn('queue message failed; it will be retried', { message_id: record.messageId, error: o.reason as Error });
      if (opts.retryMetric) metrics.count(opts.retryMetric);
      failures.push({ itemIdentifier: record.messageId });
    });
    return { batchItemFailures: failures };
  });
}
