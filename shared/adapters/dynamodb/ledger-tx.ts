import type { Stage } from '../../domain/records';
import { keys } from './keys';

/** A ledger write (BatchToken mint or trace-log record): committed with its cause, signed once, broadcast until it lands. */
export interface LedgerTx {
  ledger_tx_id: string;
  /** MINT: the BatchToken of a submitted batch; TRACE_STAGE: the trace-log record of a stage change. */
  kind: 'MINT' | 'TRACE_STAGE';
  batch_id: string;
  token_id: string;
  stage: Stage;
  /** TRACE_STAGE only. */
  evidence_cid?: string;
  audit_hash: string;
  audit_sequence_number: number;
  /** TRACE_STAGE only: the stage-history entry that gets the transaction hash. */
  history_index?: number;
  status: 'PENDING' | 'SENT' | 'CONFIRMED' | 'FAILED';
  raw_tx?: string;
  tx_hash?: string;
  nonce?: number;
  block_number?: number;
  job_id?: string;
  created_at: string;
  confirmed_at?: string;
}

/** The DynamoDB item of a ledger write (open in GSI2 until confirmed). */
export function ledgerTxItem(tx: LedgerTx): Record<string, unknown> {
  return { ...keys.ledgerTx(tx.ledger_tx_id), ...keys.openLedgerTxGsi(tx.created_at, tx.ledger_tx_id), entity: 'LEDGER_TX', ...tx };
}

