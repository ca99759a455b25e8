import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { VaultWriteStore } from '../../domain/ports/lending';
import type { LedgerTx, VaultLedgerTx } from '../../domain/records';
import { fromItem, keys, OPEN_VAULT_TX } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

export type { LedgerTx };

/**
 * The DynamoDB item of a ledger write, a batch's or a vault write (open in GSI2 until confirmed). In
 * GSI1 too: a batched write pending and unclaimed among the ungrouped writes of its kind
 * (`keys.ungroupedLedgerTxGsi`, until a group claims it); a vault write among the open vault writes
 * (`keys.openVaultTxGsi`, until it is confirmed or failed).
 */
export function ledgerTxItem(tx: LedgerTx): Record<string, unknown> {
  const ungrouped =
    (tx.kind === 'MINT' || tx.kind === 'TRACE_STAGE') && tx.status === 'PENDING' && !tx.raw_tx && !tx.group_id
      ? keys.ungroupedLedgerTxGsi(tx.kind, tx.created_at, tx.ledger_tx_id)
      : {};
  return {
    ...keys.ledgerTx(tx.ledger_tx_id),
    ...keys.openLedgerTxGsi(tx.created_at, tx.ledger_tx_id),
    ...ungrouped,
    ...(tx.kind === 'VAULT' ? keys.openVaultTxGsi(tx.created_at, vaultWriteStoredOrder(), tx.ledger_tx_id) : {}),
    entity: 'LEDGER_TX',
    ...tx,
  };
}

/** The last stored order handed out by this process: its millisecond and the count within it. */
const lastStored = { ms: 0, seq: 0 };

/**
 * When a vault write is stored, as a sort key that only grows within this process (the clock's ms,
 * then a count within the same ms): the writes one request stores one after the other (and queues in
 * that order) sort in that order even when they share their `created_at` and the same millisecond.
 */
export function vaultWriteStoredOrder(nowMs: number = Date.now()): string {
  if (nowMs > lastStored.ms) Object.assign(lastStored, { ms: nowMs, seq: 0 });
  else lastStored.seq++;
  return `${new Date(lastStored.ms).toISOString()}.${String(lastStored.seq).padStart(6, '0')}`;
}

/** Index entries read per page while looking for open vault writes (a parked one stays in the index, skipped). */
const OPEN_VAULT_PAGE = 25;

/** Vault writes stored for the single ledger writer (VaultWriteStore). */
export class VaultWriteRepository implements VaultWriteStore {
  /** Stores the write unless one with its id exists (then false: it was requested before). */
  async putVaultWrite(tx: VaultLedgerTx): Promise<boolean> {
    try {
      await documentClient().send(
        new PutCommand({ TableName: tableName(), Item: ledgerTxItem(tx), ConditionExpression: 'attribute_not_exists(PK)' }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }

  /**
   * Pages through the open vault writes' index (GSI1 OPEN_VAULT_TX, request order) keeping those
   * PENDING or SENT and not parked, at most `limit`. The index is eventually consistent: the writer
   * reads each write again before it signs it (a conditioned keep), so a stale entry is harmless.
   */
  async openVaultWrites(limit: number): Promise<VaultLedgerTx[]> {
    const writes: VaultLedgerTx[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk',
          FilterExpression: '#s IN (:p, :sent) AND attribute_not_exists(parked_at)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':pk': OPEN_VAULT_TX, ':p': 'PENDING', ':sent': 'SENT' },
          Limit: OPEN_VAULT_PAGE,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of r.Items ?? []) if (writes.length < limit) writes.push(fromItem<VaultLedgerTx>(item));
      start = r.LastEvaluatedKey;
    } while (start && writes.length < limit);
    return writes;
  }
}
