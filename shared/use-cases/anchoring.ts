import { anchorIdOf, buildAnchorTree, type BatchAnchor } from '../domain/anchoring';
import type { AuditAnchorStore, CustodyStore, LedgerWriteMessage, WorkQueue } from '../domain/ports';
import type { AnchorLedgerTx, AuditAnchorRecord } from '../domain/records';
import { logger } from '../runtime/logger';

/**
 * Periodic anchoring of audit logs (decisions §13). Every ANCHOR_INTERVAL_S the audit-anchorer
 * takes the pending markers (one per audit append, written in its transaction), reads the current
 * head of every batch they name, and commits all those heads as ONE Merkle root with
 * `AuditAnchor.anchor(root, headCount)`, sent by the single ledger writer like every ledger write.
 * When the transaction is mined, each batch keeps its head's proof and the markers leave the
 * pending index; entries appended meanwhile keep their markers for the next anchor. One anchor is
 * open at a time, so at most one anchor transaction is sent per interval whatever the number of batches.
 */

/** At most this many pending markers go into one anchor (the rest wait for the next interval). */
export const MAX_MARKERS_PER_ANCHOR = 20_000;

/** The ports anchoring needs. */
export interface AnchoringDeps {
  anchors: AuditAnchorStore;
  custody: Pick<CustodyStore, 'getLedgerTx'>;
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  now: () => Date;
}

/** What one run of the anchorer did. */
export type AnchorRunResult =
  | { outcome: 'NOTHING_PENDING' }
  | { outcome: 'WAITING'; anchor_id: string }
  | { outcome: 'OPENED'; anchor_id: string; root: string; heads: number; markers: number }
  | { outcome: 'BUSY' };

/**
 * One run of the scheduled audit-anchorer. An open anchor is settled first when its ledger write
 * has landed (mined → finished, refused → abandoned, its markers left for this run) and waited for
 * otherwise. Then, when markers are pending, a new anchor over the current heads of their batches
 * is stored with its ledger write (one transaction, refused while another anchor is open) and
 * queued for the single ledger writer. Errors: store or queue failures (the next run retries; a
 * lost queue message is re-queued by the ledger-write reconciler).
 */
export async function runAnchor(deps: AnchoringDeps): Promise<AnchorRunResult> {
  const open = await deps.anchors.openAnchor();
  if (open) {
    const write = await deps.custody.getLedgerTx(open.anchor_id);
    if (write?.status === 'CONFIRMED' && write.tx_hash && write.block_number !== undefined) {
      await finishAnchor(deps, open, { tx_hash: write.tx_hash, block_number: write.block_number });
    } else if (write?.status === 'FAILED' || !write) {
      await deps.anchors.abandon(open.anchor_id, write?.kind === 'ANCHOR' ? write.failure ?? 'its transaction was refused' : 'its ledger write is missing', deps.now().toISOString());
    } else {
      return { outcome: 'WAITING', anchor_id: open.anchor_id };
    }
  }
  const markers = await deps.anchors.pendingMarkers(MAX_MARKERS_PER_ANCHOR);
  if (markers.length === 0) return { outcome: 'NOTHING_PENDING' };
  // The heads are read after the markers: a head is never older than the entries its markers name.
  const heads = await deps.anchors.heads([...new Set(markers.flatMap((m) => m.batch_ids))]);
  if (heads.length === 0) return { outcome: 'NOTHING_PENDING' };
  const tree = buildAnchorTree(heads);
  const now = deps.now();
  const at = now.toISOString();
  const anchorId = anchorIdOf(now, tree.root);
  const anchor: AuditAnchorRecord = {
    anchor_id: anchorId, root: tree.root, heads: heads.map((h) => ({ batch_id: h.batch_id, sequence_number: h.sequence_number, hash: h.hash })),
    marker_ids: markers.map((m) => m.marker_id), status: 'OPEN', created_at: at,
  };
  const write: AnchorLedgerTx = { ledger_tx_id: anchorId, kind: 'ANCHOR', anchor_id: anchorId, root: tree.root, head_count: heads.length, status: 'PENDING', created_at: at };
  if (!(await deps.anchors.open(anchor, write))) return { outcome: 'BUSY' };
  await deps.ledgerQueue.send({ ledger_tx_id: anchorId }, { deduplicationId: anchorId });
  logger.info('audit anchor opened', { anchor_id: anchorId, root: tree.root, heads: heads.length, markers: markers.length });
  return { outcome: 'OPENED', anchor_id: anchorId, root: tree.root, heads: heads.length, markers: markers.length };
}

/**
 * Settles a mined anchor (called by the single ledger writer once its transaction is mined, and
 * by the anchorer as a repair): the tree is rebuilt from the stored heads (it must give the stored
 * root), each batch's anchor is stored with its proof, the markers leave the pending index, and the
 * anchor is closed. Idempotent. Errors: Error when the rebuilt root differs (the heads were altered).
 */
export async function finishAnchor(deps: Pick<AnchoringDeps, 'anchors' | 'now'>, anchor: AuditAnchorRecord, mined: { tx_hash: string; block_number: number }): Promise<void> {
  const tree = buildAnchorTree(anchor.heads);
  if (tree.root !== anchor.root) throw new Error(`anchor ${anchor.anchor_id}: its heads rebuild to root ${tree.root}, not the anchored ${anchor.root}`);
  const batchAnchors: Array<BatchAnchor & { batch_id: string }> = [...tree.proofs.values()].map((p) => ({
    batch_id: p.head.batch_id, anchor_id: anchor.anchor_id, head_sequence_number: p.head.sequence_number, head_hash: p.head.hash,
    root: p.root, proof: p.proof, tx_hash: mined.tx_hash, block_number: mined.block_number,
  }));
  await deps.anchors.finish(anchor, batchAnchors, mined, deps.now().toISOString());
  logger.info('audit anchor mined', { anchor_id: anchor.anchor_id, tx_hash: mined.tx_hash, block_number: mined.block_number, heads: anchor.heads.length });
}

/**
 * What the single ledger writer calls for an ANCHOR write: mined → `finishAnchor`; refused →
 * the anchor abandoned (its markers go into the next one).
 */
export function anchorWriteOutcomes(deps: Pick<AnchoringDeps, 'anchors' | 'now'>) {
  return {
    async mined(tx: AnchorLedgerTx, txHash: string, blockNumber: number): Promise<void> {
      const anchor = await deps.anchors.get(tx.anchor_id);
      if (!anchor) throw new Error(`anchor ${tx.anchor_id} of ledger write ${tx.ledger_tx_id} not found`);
      if (anchor.status === 'ANCHORED') return;
      await finishAnchor(deps, anchor, { tx_hash: txHash, block_number: blockNumber });
    },
    async refused(tx: AnchorLedgerTx, reason: string): Promise<void> {
      logger.error('audit anchor refused by the ledger', { anchor_id: tx.anchor_id, reason });
      await deps.anchors.abandon(tx.anchor_id, reason, deps.now().toISOString());
    },
  };
}

/** What the ledger writer needs to settle ANCHOR writes. */
export type AnchorWriteOutcomes = ReturnType<typeof anchorWriteOutcomes>;
