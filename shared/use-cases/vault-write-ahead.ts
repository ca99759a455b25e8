import type { Hex } from 'viem';
import { LedgerRefusedError } from '../domain/errors';
import { FORM_AHEAD_AFTER_MS, LEDGER_MESSAGE_MARGIN_MS } from '../domain/ledger-batching';
import { vaultCallOf } from '../domain/vault-calls';
import { logger } from '../runtime/logger';
import { settleVaultReceipt, type LedgerWriterDeps } from './ledger-writer';

/**
 * Vault writes ahead of the backlog (docs/ledger.md#vault-writes-ahead-of-the-backlog): the single
 * writer, while it works through a backlog of queued messages, lands the oldest open vault write it
 * finds in the table without waiting for that write's own message — in the writes' message group,
 * so never two signers at once — the way `formAhead` forms the next batched group.
 */

/** Open vault writes read per look: the oldest, and the next one for when the oldest is settled in the same look. */
const VAULT_WRITES_PER_LOOK = 2;

/** What one look did (ids): vault writes settled from their mined receipts, the one signed and sent, the one left to its own message. */
export interface VaultAheadLook {
  settled: string[];
  sent?: string;
  /** The oldest open write, not sent: in flight (no receipt yet) or refused in simulation (`reason`). */
  held?: { id: string; reason: string };
}

/**
 * One look, at most once per `FORM_AHEAD_AFTER_MS` per container (`ahead.pace`) and only when
 * `remainingMs()` is at least `reserveMs` (what the message after it may need) plus
 * LEDGER_MESSAGE_MARGIN_MS; pipelined writers only (`groups` and `receiptCheckQueue` given). The
 * open vault writes are taken strictly in request order (`openVaultWrites`), each read again first
 * (consistent) and one at a time:
 * - settled meanwhile → skipped (the next one is the oldest);
 * - signed before (kept, SENT) → its receipt looked up once (no wait): mined → settled as its own
 *   message would settle it (`settleVaultReceipt`: the use case told, the write CONFIRMED, or
 *   refused when it reverted) and the next one looked at; not mined → broadcast again (the same
 *   bytes, never signed again) and the look ends: one vault write in flight at a time, so each is
 *   simulated on the state its predecessors left;
 * - PENDING → signed, kept and sent (`vaultCallKept` with `unlessRefused`) only when the vault
 *   accepts it in simulation; a refused simulation (e.g. a collateral lock whose token's mint is
 *   still pending) sends nothing and ends the look, so no later vault write passes it: it lands
 *   when its own message comes up (and a refusal is then recorded on chain as before).
 * At most one write signed per look; no receipt is waited for. The write's own message, reached
 * later, ends on the CONFIRMED write, or re-sends the kept transaction and waits for its receipt.
 * Errors: none thrown (a failure is logged and left to the writes' own messages).
 */
export async function landVaultWriteAhead(
  deps: LedgerWriterDeps,
  budget: { remainingMs: () => number; reserveMs: number },
): Promise<VaultAheadLook> {
  const look: VaultAheadLook = { settled: [] };
  const vault = deps.vault;
  const ahead = vault?.ahead;
  if (!vault || !ahead || !deps.groups || !deps.receiptCheckQueue) return look;
  const now = deps.now().getTime();
  const last = ahead.pace.lastLookMs;
  if (last !== undefined && now - last < FORM_AHEAD_AFTER_MS) return look;
  const timeLeft = () => budget.remainingMs() >= budget.reserveMs + LEDGER_MESSAGE_MARGIN_MS;
  if (!timeLeft()) return look;
  ahead.pace.lastLookMs = now;
  try {
    for (const listed of await ahead.writes.openVaultWrites(VAULT_WRITES_PER_LOOK)) {
      const tx = await deps.custody.getLedgerTx(listed.ledger_tx_id);
      if (tx?.kind !== 'VAULT' || tx.status === 'CONFIRMED' || tx.status === 'FAILED') continue;
      if (tx.raw_tx && tx.tx_hash) {
        const receipt = await deps.ledger.waitForReceipt(tx.tx_hash as Hex, 0);
        if (!receipt) {
          await deps.ledger.rebroadcast(tx.raw_tx as Hex, tx.tx_hash as Hex);
          look.held = { id: tx.ledger_tx_id, reason: 'in flight' };
          return look;
        }
        await settleVaultReceipt(deps, tx, tx.tx_hash as Hex, receipt);
        look.settled.push(tx.ledger_tx_id);
        if (!timeLeft()) return look;
        continue;
      }
      try {
        await vault.ledger.vaultCallKept(
          vaultCallOf(tx.vault_call),
          (signed) => deps.custody.keepSigned(tx.ledger_tx_id, signed, deps.now().toISOString()),
          { unlessRefused: true },
        );
        look.sent = tx.ledger_tx_id;
      } catch (err) {
        if (!(err instanceof LedgerRefusedError)) throw err;
        look.held = { id: tx.ledger_tx_id, reason: err.reason };
        logger.info('vault write not landed ahead: the vault refuses it on the current state; its own message lands it', {
          ledger_tx_id: tx.ledger_tx_id,
          kind: tx.vault_call.kind,
          reason: err.reason,
        });
      }
      return look;
    }
  } catch (err) {
    logger.warn('vault write not landed ahead of the backlog; its own message lands it', { error: err as Error });
  }
  return look;
}
