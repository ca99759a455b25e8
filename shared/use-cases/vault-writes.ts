import { storedVaultCall, type VaultCall } from '../domain/vault-calls';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import type { VaultWriteQueue, VaultWriteResult, VaultWriteStore } from '../domain/ports/lending';
import type { WorkQueue } from '../domain/ports/messaging';
import type { StoredVaultCall, VaultLedgerTx } from '../domain/records';
import { logger } from '../runtime/logger';

/**
 * Vault writes (lending) go through the single ledger writer like mints and trace-log records:
 * one signer, so one writer keeps its nonces in order. A use case asks for a write with
 * `VaultWriteQueue.request`; when the write is mined (or refused), the writer calls back the use
 * case that owns the write's kind through `VaultWriteOutcomes`.
 */

/** What the ledger writer calls once a vault write is settled on chain. Both are idempotent. */
export interface VaultWriteOutcomes {
  /** Mined and successful; `result` read from its receipt (null when the receipt had no vault log). */
  mined(tx: VaultLedgerTx, txHash: string, result: VaultWriteResult | null): Promise<void>;
  /** The chain refused the write (the transaction reverted). */
  refused(tx: VaultLedgerTx, reason: string): Promise<void>;
}

/** The use case answering for one kind of vault write. */
export interface VaultWriteHandler<C extends StoredVaultCall = StoredVaultCall> {
  mined(call: C, txHash: string, result: VaultWriteResult | null): Promise<void>;
  refused(call: C, reason: string): Promise<void>;
}

/** One handler per kind of vault write a deployment performs. */
export type VaultWriteHandlers = { [K in StoredVaultCall['kind']]?: VaultWriteHandler<Extract<StoredVaultCall, { kind: K }>> };

/**
 * Routes each settled vault write to the handler of its kind. A kind without a handler is an
 * error (thrown, so the queue keeps the write until a writer that knows it is deployed).
 */
export function vaultWriteOutcomes(handlers: VaultWriteHandlers): VaultWriteOutcomes {
  const handlerOf = (call: StoredVaultCall): VaultWriteHandler => {
    const h = handlers[call.kind] as VaultWriteHandler | undefined;
    if (!h) throw new Error(`no handler for vault writes of kind ${call.kind}`);
    return h;
  };
  return {
    mined: (tx, txHash, result) => handlerOf(tx.vault_call).mined(tx.vault_call, txHash, result),
    refused: (tx, reason) => {
      logger.error('vault write refused', { ledger_tx_id: tx.ledger_tx_id, kind: tx.vault_call.kind, ref: tx.vault_call.ref, reason });
      return handlerOf(tx.vault_call).refused(tx.vault_call, reason);
    },
  };
}

/** The ledger write record of a vault write (PENDING, not signed yet). */
export function vaultLedgerTx(id: string, call: VaultCall, at: string): VaultLedgerTx {
  return { ledger_tx_id: id, kind: 'VAULT', vault_call: storedVaultCall(call), status: 'PENDING', created_at: at };
}

/**
 * `VaultWriteQueue` over a store and the ledger-write queue: the write is stored first (once per
 * id; reconciliation finds it if the message is lost), then its message is sent. Sending again
 * for a stored id is harmless: the writer lands each write once.
 */
export function vaultWriteQueue(store: VaultWriteStore, queue: WorkQueue<LedgerWriteMessage>): VaultWriteQueue {
  return {
    async request(id, call, at) {
      await store.putVaultWrite(vaultLedgerTx(id, call, at));
      try {
        await queue.send({ ledger_tx_id: id });
      } catch (err) {
        logger.error('vault write could not be queued; reconciliation will queue it', { ledger_tx_id: id, error: err as Error });
      }
    },
  };
}
