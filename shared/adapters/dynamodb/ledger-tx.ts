import type { LedgerTx } from '../../domain/records';
import { keys } from './keys';

export type { LedgerTx };

/** The DynamoDB item of a ledger write (open in GSI2 until confirmed). */
export function ledgerTxItem(tx: LedgerTx): Record<string, unknown> {
  return { ...keys.ledgerTx(tx.ledger_tx_id), ...keys.openLedgerTxGsi(tx.created_at, tx.ledger_tx_id), entity: 'LEDGER_TX', ...tx };
}

