import { BatchProcessor, EventType, processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from './logger';
import { instrumented } from './instrument';
import { metrics, type MetricName } from './metrics';

/** Options of {@link sqsConsumer}. */
export interface SqsConsumerOptions {
  /** Counted once per record that failed (e.g. LedgerWriteRetries). */
  retryMetric?: MetricName;
  /**
   * The queue is FIFO (shared/manifest.ts QUEUES `fifo`): records are handled one after the other
   * in queue order, and the first failure stops the batch: that record and every record after it
   * are reported as failures, unhandled, so the queue redelivers them in order.
   */
  fifo?: boolean;
}

/**
 * An SQS consumer that reports partial batch failures with Powertools Batch
 * (`processPartialResponse`): each record's JSON body goes to `handle`; a record that throws is
 * returned in `batchItemFailures`, so only it is retried (and after maxReceiveCount lands in the
 * dead-letter queue). A standard queue's records are handled concurrently (`BatchProcessor`); a
 * FIFO queue's in order, stopping at the first failure (`SqsFifoPartialProcessorAsync`, see
 * {@link SqsConsumerOptions.fifo}). When every record fails the batch is still answered with all
 * of them as failures (`throwOnFullBatchFailure: false`), as a partial failure is, rather than
 * thrown. Each failed record is logged (warn, with its message id) and counts `retryMetric`. A
 * processor keeps the state of one batch, so one is made per invocation (the local stack runs
 * several invocations of a consumer at once). The invocation runs with the Powertools middlewares
 * (./instrument.ts).
 */
export function sqsConsumer<T>(
  handle: (body: T) => Promise<void>,
  opts: SqsConsumerOptions = {},
): (event?: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const handleRecord = async (record: SQSRecord): Promise<void> => {
    try {
      await handle(JSON.parse(record.body) as T);
    } catch (err) {
      logger.warn('queue message failed; it will be retried', { message_id: record.messageId, error: err as Error });
      if (opts.retryMetric) metrics.count(opts.retryMetric);
      throw err;
    }
  };
  return instrumented(async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const processor = opts.fifo ? new SqsFifoPartialProcessorAsync() : new BatchProcessor(EventType.SQS);
    return processPartialResponse(event, handleRecord, processor, { context, throwOnFullBatchFailure: false });
  });
}
