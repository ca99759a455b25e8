import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from './logger';

/**
 * An SQS consumer that reports partial batch failures: each record is handled on its own; a record
 * that throws is returned in `batchItemFailures`, so only it is retried (and after maxReceiveCount
 * lands in the dead-letter queue).
 */
export function sqsConsumer<T>(handle: (body: T) => Promise<void>) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        await handle(JSON.parse(record.body) as T);
      } catch (err) {
        logger.warn('queue message failed; it will be retried', { message_id: record.messageId, error: err as Error });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };
}
