import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ChainEventParking } from '../../domain/ports/chain-watch';
import { keys, PARKED_CHAIN_EVENT } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/**
 * The chain watcher's failed events (ChainEventParking; keys.ts `CHAIN_EVENT#<chain_id>#<event_id>`):
 * one item per event that failed, its failed runs counted with an atomic ADD; a parked event is in
 * the sparse GSI2 partition PARKED_CHAIN_EVENT until an operator discards it.
 */
export class DynamoChainEventParking implements ChainEventParking {
  constructor(private readonly chainId: number) {}

  async eventFailed(eventId: string, reason: string, at: string): Promise<number> {
    const r = await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.chainEventFailure(this.chainId, eventId),
        UpdateExpression:
          'ADD attempts :one SET last_error = :e, last_failed_at = :at, event_id = :id, entity = :entity, chain_id = :chain',
        ExpressionAttributeValues: {
          ':one': 1,
          ':e': reason.slice(0, 1000),
          ':at': at,
          ':id': eventId,
          ':entity': 'CHAIN_EVENT_FAILURE',
          ':chain': this.chainId,
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(r.Attributes?.attempts ?? 1);
  }

  async park(eventId: string, event: Record<string, unknown>, reason: string, at: string): Promise<void> {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.chainEventFailure(this.chainId, eventId),
          UpdateExpression: 'SET parked_at = :at, reason = :r, event = :ev, GSI2PK = :pk, GSI2SK = :sk',
          ConditionExpression: 'attribute_not_exists(parked_at) AND attribute_not_exists(discarded_at)',
          ExpressionAttributeValues: {
            ':at': at,
            ':r': reason.slice(0, 1000),
            ':ev': event,
            ':pk': PARKED_CHAIN_EVENT,
            ':sk': `${at}#${eventId}`,
          },
        }),
      );
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err; // parked (or settled) already
    }
  }

  async parked(
    limit: number,
  ): Promise<Array<{ event_id: string; event: Record<string, unknown>; reason: string; attempts: number; parked_at: string }>> {
    const out: Array<{ event_id: string; event: Record<string, unknown>; reason: string; attempts: number; parked_at: string }> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'GSI2',
          KeyConditionExpression: 'GSI2PK = :pk',
          ExpressionAttributeValues: { ':pk': PARKED_CHAIN_EVENT },
          Limit: Math.min(100, limit - out.length),
          ExclusiveStartKey: start,
        }),
      );
      for (const i of r.Items ?? []) {
        if (Number(i.chain_id) !== this.chainId) continue;
        out.push({
          event_id: String(i.event_id),
          event: i.event as Record<string, unknown>,
          reason: String(i.reason),
          attempts: Number(i.attempts),
          parked_at: String(i.parked_at),
        });
      }
      start = r.LastEvaluatedKey;
    } while (start && out.length < limit);
    return out;
  }

  async discard(eventId: string, reason: string, at: string): Promise<boolean> {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.chainEventFailure(this.chainId, eventId),
          UpdateExpression: 'SET discarded_at = :at, discard_reason = :r REMOVE GSI2PK, GSI2SK',
          ConditionExpression: 'attribute_exists(parked_at) AND attribute_not_exists(discarded_at)',
          ExpressionAttributeValues: { ':at': at, ':r': reason.slice(0, 1000) },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }
}
