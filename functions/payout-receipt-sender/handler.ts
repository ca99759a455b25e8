import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { payoutReceiptDeps } from '../../shared/composition/payouts';
import { instrumented } from '../../shared/runtime/instrument';
import { logger } from '../../shared/runtime/logger';
import { sendPayoutReceipt } from '../../shared/use-cases/payout-receipt';

const image = (i: Record<string, unknown> | undefined) => (i ? unmarshall(i as Record<string, AttributeValue>) : undefined);

/**
 * Consumer of the table's DynamoDB stream, payments only (docs/operations.md#sms-receipt-to-the-farmer):
 * a change that completed a farmer's mobile-money payout sends the farmer's SMS receipt, once per
 * payout (a conditioned mark on the payout). A record that fails is reported with the records
 * after it, so the stream delivers them again; those already sent are skipped by their mark.
 */
export const handler = instrumented(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const deps = payoutReceiptDeps();
  for (const record of event.Records) {
    try {
      await sendPayoutReceipt(deps, { oldImage: image(record.dynamodb?.OldImage), newImage: image(record.dynamodb?.NewImage) });
    } catch (err) {
      logger.warn('payout receipt not sent; the stream retries from this record', {
        sequence_number: record.dynamodb?.SequenceNumber,
        error: err as Error,
      });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
});
