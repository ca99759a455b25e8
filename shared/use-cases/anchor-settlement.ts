import { verifyAnchorProof, type BatchAnchor } from '../domain/anchoring';
import type { AnchoredRootLookup, AuditAnchorStore } from '../domain/ports/audit';
import type { AnchorLedgerTx, AuditAnchorRecord } from '../domain/records';
import { logger } from '../runtime/logger';

/**
 * Settling a periodic anchor once its AuditAnchor transaction is mined or refused (docs/api/anchoring.md#anchoring-of-the-audit-log):
 * what the single ledger writer calls back, and the anchorer as a repair. No tree is built here:
 * the anchor keeps each head's proof from when it was built (./anchoring.ts).
 */

/** The ports settling needs. */
export interface AnchorSettlementDeps {
  anchors: AuditAnchorStore;
  now: () => Date;
  /** AuditAnchor read back: where a root stands on chain (an anchor of a root the chain holds settles with it). */
  anchoredRoot?: AnchoredRootLookup;
}

/**
 * Settles a mined anchor (called by the single ledger writer once its transaction is mined, and
 * by the anchorer as a repair): every stored head's proof must lead to the anchored root, then each
 * batch's anchor is stored with its proof, the markers leave the pending index, and the anchor is
 * closed. Idempotent. Errors: Error when a proof does not lead to the root (the record was altered).
 */
export async function finishAnchor(
  deps: AnchorSettlementDeps,
  anchor: AuditAnchorRecord,
  mined: { tx_hash: string; block_number: number },
): Promise<void> {
  const root = anchor.root as `0x${string}`;
  const batchAnchors: Array<BatchAnchor & { batch_id: string }> = anchor.heads.map((h) => {
    const proof = h.proof as Array<`0x${string}`>;
    if (!verifyAnchorProof(h, { root, proof }))
      throw new Error(
        `anchor ${anchor.anchor_id}: the stored proof of ${h.batch_id} #${h.sequence_number} does not lead to the anchored root ${anchor.root}`,
      );
    return {
      batch_id: h.batch_id,
      anchor_id: anchor.anchor_id,
      head_sequence_number: h.sequence_number,
      head_hash: h.hash,
      root,
      proof,
      tx_hash: mined.tx_hash,
      block_number: mined.block_number,
    };
  });
  await deps.anchors.finish(anchor, batchAnchors, mined, deps.now().toISOString());
  logger.info('audit anchor mined', {
    anchor_id: anchor.anchor_id,
    tx_hash: mined.tx_hash,
    block_number: mined.block_number,
    heads: anchor.heads.length,
  });
}

/**
 * What the single ledger writer calls for an ANCHOR write: mined → `finishAnchor`; root already on
 * chain → `finishAnchor` with the block that holds it; refused → the anchor abandoned (its markers
 * go into the next one).
 */
export function anchorWriteOutcomes(deps: AnchorSettlementDeps) {
  const outcomes = {
    async mined(tx: AnchorLedgerTx, txHash: string, blockNumber: number): Promise<void> {
      const anchor = await deps.anchors.get(tx.anchor_id);
      if (!anchor) throw new Error(`anchor ${tx.anchor_id} of ledger write ${tx.ledger_tx_id} not found`);
      if (anchor.status === 'ANCHORED') return;
      await finishAnchor(deps, anchor, { tx_hash: txHash, block_number: blockNumber });
    },
    /**
     * A root the chain already holds is anchored, not an error (a duplicate or overlapping run, or
     * a transaction mined whose confirmation was lost): reads `anchoredAtBlock(root)` and, when
     * set, settles the anchor with that block and the transaction that anchored it. Returns that
     * block and transaction (the caller confirms the write with them), or null when the chain does
     * not hold the root (or cannot be asked: no reader configured).
     */
    async settleIfAnchored(tx: AnchorLedgerTx): Promise<{ block_number: number; tx_hash: string } | null> {
      if (!deps.anchoredRoot) return null;
      const onChain = await deps.anchoredRoot(tx.root as `0x${string}`);
      if (!onChain) return null;
      logger.warn('audit anchor root already on chain: settled with the block that holds it', {
        anchor_id: tx.anchor_id,
        root: tx.root,
        ...onChain,
      });
      await outcomes.mined(tx, onChain.tx_hash, onChain.block_number);
      return onChain;
    },
    async refused(tx: AnchorLedgerTx, reason: string): Promise<void> {
      logger.error('audit anchor refused by the ledger', { anchor_id: tx.anchor_id, reason });
      await deps.anchors.abandon(tx.anchor_id, reason, deps.now().toISOString());
    },
  };
  return outcomes;
}

/** What the ledger writer needs to settle ANCHOR writes. */
export type AnchorWriteOutcomes = ReturnType<typeof anchorWriteOutcomes>;
