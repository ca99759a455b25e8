import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '../../config';

/**
 * The DynamoDB document client and table name, created once per container. The endpoint comes
 * from the SDK's own configuration (`AWS_ENDPOINT_URL_DYNAMODB` locally), so this code is the same
 * in AWS and on the local stack.
 */
let doc: DynamoDBDocumentClient | undefined;

export function documentClient(): DynamoDBDocumentClient {
  doc ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return doc;
}

export function tableName(): string {
  return requireEnv('TABLE_NAME');
}

/** Cancellation reason codes of a TransactionCanceledException, index-aligned with the items. */
export function cancellationCodes(err: unknown): string[] {
  const reasons = (err as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons;
  return Array.isArray(reasons) ? reasons.map((r) => r.Code ?? 'None') : [];
}

export function isTransactionCanceled(err: unknown): boolean {
  return (err as { name?: string }).name === 'TransactionCanceledException';
}

export function isConditionalCheckFailed(err: unknown): boolean {
  return (err as { name?: string }).name === 'ConditionalCheckFailedException';
}
