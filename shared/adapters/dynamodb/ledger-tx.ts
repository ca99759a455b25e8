import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { VaultWriteStore } from '../../domain/ports/lending';
import type { LedgerTx, VaultLedgerTx } from '../../domain/records';
import { keys } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

export type { LedgerTx };

/**
 * The DynamoDB item of a ledger write, a batch's or a vault write (open in GSI2 until confirmed; a
 * batched one pending and unclaimed also in GSI1's ungrouped writes of its kind).
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
    entity: 'LEDGER_TX',
    ...tx,
  };
}

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
}
