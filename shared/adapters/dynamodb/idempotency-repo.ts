import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { IdempotencyClaim, IdempotencyStore } from '../../domain/ports/messaging';
import { keys } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/** How long an idempotency key is remembered (seconds). */
const IDEMPOTENCY_TTL_S = 24 * 3600;

/**
 * `Idempotency-Key` records: a key is claimed with a conditional put (so two concurrent requests
 * with the same key cannot both run), then completed with the response to replay. A key whose
 * request failed is released for a retry.
 */
export class IdempotencyRepository implements IdempotencyStore {
  async claim(scope: string, key: string, requestHash: string, at: Date): Promise<IdempotencyClaim> {
    const k = keys.idempotency(scope, key);
    try {
      await documentClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: {
            ...k,
            entity: 'IDEMPOTENCY',
            status: 'IN_PROGRESS',
            request_hash: requestHash,
            created_at: at.toISOString(),
            expires_at_epoch: Math.floor(at.getTime() / 1000) + IDEMPOTENCY_TTL_S,
          },
          ConditionExpression: 'attribute_not_exists(PK) OR #s = :released',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':released': 'RELEASED' },
        }),
      );
      return { kind: 'claimed' };
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: k, ConsistentRead: true }));
    if (!r.Item) return { kind: 'in-progress' };
    if (r.Item.request_hash !== requestHash) return { kind: 'mismatch' };
    if (r.Item.status === 'COMPLETED') return { kind: 'replay', status: Number(r.Item.response_status), body: r.Item.response_body };
    return { kind: 'in-progress' };
  }

  async complete(scope: string, key: string, status: number, body: unknown): Promise<void> {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.idempotency(scope, key),
        UpdateExpression: 'SET #s = :c, response_status = :st, response_body = :b',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':c': 'COMPLETED', ':st': status, ':b': body },
      }),
    );
  }

  /** The request failed before it changed anything the key stands for: a retry may run it again. */
  async release(scope: string, key: string): Promise<void> {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.idempotency(scope, key),
        UpdateExpression: 'SET #s = :r',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':r': 'RELEASED' },
      }),
    );
  }
}
