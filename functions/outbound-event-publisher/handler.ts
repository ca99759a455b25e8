import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { outboundDeps } from '../../shared/composition/outbound-webhooks';
import { instrumented } from '../../shared/runtime/instrument';
import { logger } from '../../shared/runtime/logger';
import { type EndpointListings, publishChanges } from '../../shared/use-cases/outbound-webhooks';

const image = (i: Record<string, unknown> | undefined) => (i ? unmarshall(i as Record<string, AttributeValue>) : undefined);

/**
 * Consumer of the table's DynamoDB stream (docs/api/outbound-webhooks.md#outbound-webhooks): each record's old and new image become
 * outbound webhook events and deliveries, in stream order. A record that fails is reported (and
 * the records after it), so the stream retries from there; the fan-out is idempotent.
 * Not Powertools Batch: its stream processor goes on with the records after a failed one
 * (concurrently by default, or in order with `processInParallel: false`) and reports each failure,
 * so a later change of an entity could be published before an earlier one that failed; this loop
 * stops at the first failure, which keeps the events in the stream's order.
 */
export const handler = instrumented(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const deps = outboundDeps();
  // Each owner's endpoints are listed once for the whole batch of records, not once per event.
  const listings: EndpointListings = new Map();
  for (const record of event.Records) {
    try {
      await publishChanges(deps, [{ oldImage: image(record.dynamodb?.OldImage), newImage: image(record.dynamodb?.NewImage) }], listings);
    } catch (err) {
      logger.warn('outbound event fan-out failed; the stream retries from this record', {
        sequence_number: record.dynamodb?.SequenceNumber,
        error: err as Error,
      });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
});
