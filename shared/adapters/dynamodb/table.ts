import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '../../config';
import { StoreUnavailableError } from '../../domain/errors';
import { awsClient } from '../../runtime/aws-client';

/**
 * The DynamoDB document client and table name, created once per container. The endpoint comes
 * from the SDK's own configuration (`AWS_ENDPOINT_URL_DYNAMODB` locally), so this code is the same
 * in AWS and on the local stack.
 */
let doc: DynamoDBDocumentClient | undefined;

/**
 * Every command goes through here: an outage or throttling that outlasts the SDK's own retries
 * becomes `StoreUnavailableError` (503 AUDIT_LOG_UNAVAILABLE, Retry-After), so no repository
 * method and no handler has to know the SDK's error names. Other errors pass unchanged.
 */
class StoreDocumentClient extends DynamoDBDocumentClient {
  constructor() {
    super(awsClient(new DynamoDBClient({})), { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });
  }

  // The base method is overloaded (promise or callback); the arguments pass through unchanged.
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's send is overloaded (promise or callback); an override must accept and return both
  override send(...args: any[]): any {
    const sent: unknown = Reflect.apply(super.send, this, args);
    return sent instanceof Promise
      ? sent.catch((err: unknown) => {
          throw asStoreError(err);
        })
      : sent;
  }
}

export function documentClient(): DynamoDBDocumentClient {
  doc ??= new StoreDocumentClient();
  return doc;
}

/**
 * SDK error names meaning "DynamoDB cannot serve this now" (throttled, overloaded, internal
 * failure, timed out) and Node network error codes (endpoint unreachable, connection dropped).
 */
const UNAVAILABLE =
  /^(ProvisionedThroughputExceededException|ThrottlingException|RequestLimitExceeded|InternalServerError|ServiceUnavailable(Exception)?|TimeoutError|RequestTimeout(Exception)?|NetworkingError|E(CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|PIPE|NOTFOUND|AI_AGAIN|HOSTUNREACH|NETUNREACH))$/;

/**
 * True when `err` says DynamoDB is unavailable rather than that the request was wrong: one of the
 * names or network codes above, or any server fault with HTTP 5xx. Condition failures, cancelled
 * transactions and validation errors are not.
 */
export function isStoreUnavailable(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown; $fault?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return (
    !!e &&
    (UNAVAILABLE.test(String(e.name)) ||
      UNAVAILABLE.test(String(e.code)) ||
      (e.$fault === 'server' && (e.$metadata?.httpStatusCode ?? 0) >= 500))
  );
}

/** `err` as StoreUnavailableError when DynamoDB is unavailable (see isStoreUnavailable), else unchanged. */
export function asStoreError(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !isStoreUnavailable(err)) return err;
  return new StoreUnavailableError(undefined, err); // the SDK's words stay in the log (cause), not in the answer
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

/**
 * One conditional UpdateItem on the table: true when it applied, false when its
 * ConditionExpression failed (the item is not in the state the change needs). Other errors are thrown.
 */
export async function conditionalUpdate(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<boolean> {
  try {
    await documentClient().send(new UpdateCommand({ TableName: tableName(), ...input }));
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}

/**
 * The next value of an atomic counter item (UpdateItem ADD: 1, 2, 3, … never repeated, also under
 * concurrency). Used for the per-year numbers of batches, loans and deposits.
 */
export async function nextCounterValue(key: { PK: string; SK: string }): Promise<number> {
  const r = await documentClient().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'ADD #v :one',
      ExpressionAttributeNames: { '#v': 'value' },
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(r.Attributes!.value);
}
