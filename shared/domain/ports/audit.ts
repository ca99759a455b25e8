/**
 * Ports: The audit log checked against the ledger (chain trail, anchored roots, evidence) and its periodic anchors
 * on AuditAnchor (docs/api/anchoring.md).
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { Hex } from 'viem';
import type { AuditHead, BatchAnchor } from '../anchoring';
import type { AnchorLedgerTx, AuditAnchorRecord } from '../records';

/** Where an audit root stands on AuditAnchor: the block and transaction that anchored it, or null when never. */
export type AnchoredRootLookup = (root: Hex) => Promise<{ block_number: number; tx_hash: string } | null>;

/** Reads a BatchToken's trail from the ledger (mint and TraceLog events). Errors: any read failure. */
export type ChainTrailReader = (tokenId: bigint) => Promise<ChainTrail>;

/** A decoded `BatchToken.BatchMinted(tokenId, batchId, auditHash)` event. */
export interface ChainMint {
  tokenId: bigint;
  batchId: string;
  auditHash: Hex;
  txHash: Hex;
  /** The block it was mined in (the entry's anchor), when the reader gives it. */
  blockNumber?: bigint;
}

/** A decoded `TraceLog.StageRecorded(tokenId, stage, evidenceCid, auditHash, recorder)` event. */
export interface ChainStage {
  tokenId: bigint;
  /** Stage code (`STAGE_CODES`). */
  stage: number;
  evidenceCid: string;
  auditHash: Hex;
  txHash: Hex;
  logIndex: number;
  /** The block it was mined in (the entry's anchor), when the reader gives it. */
  blockNumber?: bigint;
}

/**
 * The block at which AuditAnchor committed `root` (`anchoredAtBlock`), null when it never did
 * (docs/api/anchoring.md#anchoring-of-the-audit-log). Errors: any read failure.
 */
export type AnchorRootReader = (root: Hex) => Promise<bigint | null>;

/** The ledger events of one batch token (see `readChainTrail`). */
export interface ChainTrail {
  mints: ChainMint[];
  stages: ChainStage[];
}

/**
 * Fetches an evidence directory by CID: its files (flat names, exact bytes), or `null` when the
 * content is not available. May throw; the failure is reported as an `evidence_cid` check.
 */
export type EvidenceFetcher = (cid: string) => Promise<{ files: Array<{ path: string; bytes: Uint8Array }> } | null>;

/**
 * Periodic anchors of audit logs. Every audit append also writes a pending marker (the batches it
 * appended to) in the same transaction; an anchor takes the markers, commits the batches' heads,
 * and removes the markers once its transaction is mined. Errors: StoreUnavailableError.
 */
export interface AuditAnchorStore {
  /** Pending markers, oldest first, at most `limit`: their ids and the batches they name. */
  pendingMarkers(limit: number): Promise<Array<{ marker_id: string; batch_ids: string[] }>>;
  /** The current audit heads of `batchIds` (sequence number and hash of each batch's newest entry). */
  heads(batchIds: string[]): Promise<AuditHead[]>;
  /**
   * Which of `heads` a mined anchor already covers (a batch anchor stored at exactly that head),
   * as `<batch_id>#<sequence_number>` keys.
   */
  anchoredHeads(heads: AuditHead[]): Promise<Set<string>>;
  /**
   * Stale markers leave the pending index without an anchor of their own: every batch they name
   * has its current head anchored already, so their entries are covered. Idempotent.
   */
  clearStaleMarkers(markerIds: string[], at: string): Promise<void>;
  /** The anchor built and not yet settled (at most one at a time), or null. */
  openAnchor(): Promise<AuditAnchorRecord | null>;
  /**
   * Stores `anchor` with its ledger write and makes it the open anchor, in one transaction;
   * false (nothing stored) when another anchor is open.
   */
  open(anchor: AuditAnchorRecord, write: AnchorLedgerTx): Promise<boolean>;
  /**
   * The anchor was mined: every batch's anchor (with its proof) stored, the anchor's markers
   * removed, the anchor ANCHORED and no longer open. Idempotent.
   */
  finish(
    anchor: AuditAnchorRecord,
    batchAnchors: Array<BatchAnchor & { batch_id: string }>,
    mined: { tx_hash: string; block_number: number },
    at: string,
  ): Promise<void>;
  /** The anchor's transaction was refused: FAILED and no longer open (its markers stay for the next anchor). Idempotent. */
  abandon(anchorId: string, reason: string, at: string): Promise<void>;
  get(anchorId: string): Promise<AuditAnchorRecord | null>;
  /** A batch's periodic anchors, by head sequence number. */
  ofBatch(batchId: string): Promise<BatchAnchor[]>;
}
