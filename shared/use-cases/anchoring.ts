import { buildAnchorTree } from '../domain/anchor-tree';
import { anchorIdOf } from '../domain/anchoring';
import type { AuditAnchorStore } from '../domain/ports/audit';
import type { CustodyStore } from '../domain/ports/batches';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import type { WorkQueue } from '../domain/ports/messaging';
import type { AnchorLedgerTx, AuditAnchorRecord } from '../domain/records';
import { logger } from '../runtime/logger';
import { finishAnchor } from './anchor-settlement';

/**
 * Periodic anchoring of audit logs (docs/api/anchoring.md#anchoring-of-the-audit-log). Every ANCHOR_INTERVAL_S the audit-anchorer
 * takes the pending markers (one per audit append, written in its transaction), reads the current
 * head of every batch they name, and commits all those heads as ONE Merkle root with
 * `AuditAnchor.anchor(root, headCount)`, sent by the single ledger writer like every ledger write.
 * When the transaction is mined (./anchor-settlement.ts), each batch keeps its head's proof and the markers leave the
 * pending index; entries appended meanwhile keep their markers for the next anchor. One anchor is
 * open at a time, so at most one anchor transaction is sent per interval whatever the number of batches.
 */

/** At most this many pending markers go into one anchor (the rest wait for the next interval). */
const MAX_MARKERS_PER_ANCHOR = 20_000;

/** The ports anchoring needs. */
export interface AnchoringDeps {
  anchors: AuditAnchorStore;
  custody: Pick<CustodyStore, 'getLedgerTx'>;
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  now: () => Date;
}

/** What one run of the anchorer did. */
export type AnchorRunResult =
  | { outcome: 'NOTHING_PENDING'; stale_markers_cleared?: number }
  | { outcome: 'WAITING'; anchor_id: string }
  | { outcome: 'OPENED'; anchor_id: string; root: string; heads: number; markers: number; stale_markers_cleared?: number }
  | { outcome: 'BUSY' };

/**
 * One run of the scheduled audit-anchorer. An open anchor is settled first when its ledger write
 * has landed (mined → finished, refused → abandoned, its markers left for this run) and waited for
 * otherwise. Then, when markers are pending, a new anchor over the current heads of their batches
 * that no mined anchor covers yet is stored with its ledger write (one transaction, refused while
 * another anchor is open or one of the same id exists: a duplicate or overlapping run answers BUSY)
 * and queued for the single ledger writer; markers whose batches all have their current head
 * anchored already are cleared instead (a head is never anchored twice). Errors: store or queue failures (the next run retries; a
 * lost queue message is re-queued by the ledger-write reconciler).
 */
export async function runAnchor(deps: AnchoringDeps): Promise<AnchorRunResult> {
  const open = await deps.anchors.openAnchor();
  if (open) {
    const write = await deps.custody.getLedgerTx(open.anchor_id);
    if (write?.status === 'CONFIRMED' && write.tx_hash && write.block_number !== undefined) {
      await finishAnchor(deps, open, { tx_hash: write.tx_hash, block_number: write.block_number });
    } else if (write?.status === 'FAILED' || !write) {
      await deps.anchors.abandon(
        open.anchor_id,
        write?.kind === 'ANCHOR' ? (write.failure ?? 'its transaction was refused') : 'its ledger write is missing',
        deps.now().toISOString(),
      );
    } else {
      return { outcome: 'WAITING', anchor_id: open.anchor_id };
    }
  }
  const markers = await deps.anchors.pendingMarkers(MAX_MARKERS_PER_ANCHOR);
  if (markers.length === 0) return { outcome: 'NOTHING_PENDING' };
  // The heads are read after the markers: a head is never older than the entries its markers name.
  const current = await deps.anchors.heads([...new Set(markers.flatMap((m) => m.batch_ids))]);
  // A head already anchored is never anchored again. An entry appended between reading the markers
  // and reading the heads of a previous run is inside the head that run anchored, while its marker
  // was not among that anchor's markers: such a marker is stale — every batch it names has its
  // current head anchored — and is cleared against that head instead of anchoring it once more.
  const anchored = await deps.anchors.anchoredHeads(current);
  const heads = current.filter((h) => !anchored.has(`${h.batch_id}#${h.sequence_number}`));
  const fresh = new Set(heads.map((h) => h.batch_id));
  const stale = markers.filter((m) => !m.batch_ids.some((b) => fresh.has(b)));
  const covered = markers.filter((m) => m.batch_ids.some((b) => fresh.has(b)));
  if (stale.length > 0) {
    await deps.anchors.clearStaleMarkers(
      stale.map((m) => m.marker_id),
      deps.now().toISOString(),
    );
    logger.info('stale anchor markers cleared: their heads are anchored already', { markers: stale.length });
  }
  if (heads.length === 0) return { outcome: 'NOTHING_PENDING', ...(stale.length ? { stale_markers_cleared: stale.length } : {}) };
  const tree = buildAnchorTree(heads);
  const now = deps.now();
  const at = now.toISOString();
  const anchorId = anchorIdOf(now, tree.root);
  const anchor: AuditAnchorRecord = {
    // Each head with its proof, so settling the mined anchor needs no tree (and the writer no tree library).
    anchor_id: anchorId,
    root: tree.root,
    heads: [...tree.proofs.values()].map((p) => ({
      batch_id: p.head.batch_id,
      sequence_number: p.head.sequence_number,
      hash: p.head.hash,
      proof: p.proof,
    })),
    marker_ids: covered.map((m) => m.marker_id),
    status: 'OPEN',
    created_at: at,
  };
  const write: AnchorLedgerTx = {
    ledger_tx_id: anchorId,
    kind: 'ANCHOR',
    anchor_id: anchorId,
    root: tree.root,
    head_count: heads.length,
    status: 'PENDING',
    created_at: at,
  };
  if (!(await deps.anchors.open(anchor, write))) return { outcome: 'BUSY' };
  await deps.ledgerQueue.send({ ledger_tx_id: anchorId }, { deduplicationId: anchorId });
  logger.info('audit anchor opened', {
    anchor_id: anchorId,
    root: tree.root,
    heads: heads.length,
    markers: covered.length,
    stale_markers_cleared: stale.length,
  });
  return {
    outcome: 'OPENED',
    anchor_id: anchorId,
    root: tree.root,
    heads: heads.length,
    markers: covered.length,
    ...(stale.length ? { stale_markers_cleared: stale.length } : {}),
  };
}
