import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LedgerWriteParking } from '../../domain/ports/ledger';
import type { LedgerTx } from '../../domain/records';
import { fromItem, keys, OPEN_LEDGER_TX, PARKED_LEDGER_TX } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/**
 * Parking of ledger writes that keep failing (LedgerWriteParking; keys.ts): attempts are counted on
 * the write's own item, a parked write moves from the open index (GSI2 OPEN_LEDGER_TX, which the
 * reconciler re-sends from) to the parked one (GSI2 PARKED_LEDGER_TX). Every change is one
 * conditional update of that item, so a race with the writer confirming it is decided by DynamoDB.
 */
export class LedgerWriteParkingRepository implements LedgerWriteParking {
  async recordFailedAttempt(id: string, reason: string, at: string): Promise<number> {
    try {
      const r = await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.ledgerTx(id),
          UpdateExpression: 'ADD attempts :one SET last_error = :e, last_attempt_at = :at',
          ConditionExpression: 'attribute_exists(PK) AND #s IN (:p, :sent)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':one': 1, ':e': reason.slice(0, 1000), ':at': at, ':p': 'PENDING', ':sent': 'SENT' },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(r.Attributes?.attempts ?? 0);
    } catch (err) {
      if (isConditionalCheckFailed(err)) return 0;
      throw err;
    }
  }

  async park(id: string, reason: string, at: string): Promise<boolean> {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.ledgerTx(id),
          UpdateExpression: 'SET #s = :f, failure = :r, failed_at = :at, parked_at = :at, GSI2PK = :pk, GSI2SK = :sk',
          ConditionExpression: 'attribute_exists(PK) AND #s IN (:p, :sent)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':f': 'FAILED',
            ':r': reason.slice(0, 1000),
            ':at': at,
            ':pk': PARKED_LEDGER_TX,
            ':sk': keys.parkedLedgerTxGsi(at, id).GSI2SK,
            ':p': 'PENDING',
            ':sent': 'SENT',
          },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }

  async parked(limit: number): Promise<LedgerTx[]> {
    const out: LedgerTx[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'GSI2',
          KeyConditionExpression: 'GSI2PK = :pk',
          ExpressionAttributeValues: { ':pk': PARKED_LEDGER_TX },
          Limit: Math.min(100, limit - out.length),
          ExclusiveStartKey: start,
        }),
      );
      out.push(...(r.Items ?? []).map((i) => fromItem<LedgerTx>(i)));
      start = r.LastEvaluatedKey;
    } while (start && out.length < limit);
    return out;
  }

  async unpark(id: string, at: string): Promise<LedgerTx | null> {
    const current = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.ledgerTx(id), ConsistentRead: true }));
    const tx = current.Item ? fromItem<LedgerTx>(current.Item) : null;
    if (!tx?.parked_at || tx.status !== 'FAILED') return null;
    // Back where it stood before it was parked: SENT when a signed transaction is kept (re-sent as is), else PENDING.
    const open = keys.openLedgerTxGsi(tx.created_at, id);
    // A batched write back to PENDING, claimed by no group: among the ungrouped writes again.
    const batched = (tx.kind === 'MINT' || tx.kind === 'TRACE_STAGE') && !tx.raw_tx && !tx.group_id;
    const ungrouped = batched ? keys.ungroupedLedgerTxGsi(tx.kind as 'MINT' | 'TRACE_STAGE', tx.created_at, id) : undefined;
    try {
      const r = await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.ledgerTx(id),
          UpdateExpression: `SET #s = :s, attempts = :zero, unparked_at = :at, GSI2PK = :pk, GSI2SK = :sk${ungrouped ? ', GSI1PK = :upk, GSI1SK = :usk' : ''} REMOVE parked_at, failure, failed_at`,
          ConditionExpression: 'parked_at = :parked AND #s = :f',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':s': tx.raw_tx ? 'SENT' : 'PENDING',
            ':zero': 0,
            ':at': at,
            ':pk': open.GSI2PK,
            ':sk': open.GSI2SK,
            ':parked': tx.parked_at,
            ':f': 'FAILED',
            ...(ungrouped ? { ':upk': ungrouped.GSI1PK, ':usk': ungrouped.GSI1SK } : {}),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return fromItem<LedgerTx>(r.Attributes!);
    } catch (err) {
      if (isConditionalCheckFailed(err)) return null;
      throw err;
    }
  }

  async discard(id: string, reason: string, at: string): Promise<boolean> {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.ledgerTx(id),
          UpdateExpression: 'SET discarded_at = :at, failure = :r REMOVE parked_at, GSI2PK, GSI2SK',
          ConditionExpression: 'attribute_exists(parked_at)',
          ExpressionAttributeValues: { ':at': at, ':r': reason.slice(0, 1000) },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }

  async oldestOpen(): Promise<LedgerTx | null> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': OPEN_LEDGER_TX },
        Limit: 1,
      }),
    );
    const item = r.Items?.[0];
    return item ? fromItem<LedgerTx>(item) : null;
  }
}
