import { concat, encodeAbiParameters, keccak256 } from 'viem';

/**
 * Anchoring of audit logs (docs/api/anchoring.md#anchoring-of-the-audit-log): a periodic anchor commits the audit heads of every
 * batch written since the previous anchor as ONE Merkle root on the ledger (the AuditAnchor
 * contract, infra/ledger/contracts/AuditAnchor.sol). A head is `(batch_id, sequence_number,
 * hash)` of a batch's newest entry; the hash chain links every earlier entry to it, so anchoring
 * the head anchors them all. Trees are OpenZeppelin StandardMerkleTrees over the leaf types below,
 * which the contract's `headLeaf` and OpenZeppelin's `MerkleProof` verify on chain.
 */

/** Leaf types of an audit head: batch id, sequence number of the entry, entry hash (SHA-256, as bytes32). */
export const ANCHOR_LEAF_TYPES = ['string', 'uint256', 'bytes32'] as const;

/** A batch's audit head: its newest entry at the time of the anchor. */
export interface AuditHead {
  batch_id: string;
  sequence_number: number;
  /** The entry's SHA-256 hash, 64 lowercase hex digits (as AuditEntry.hash). */
  hash: string;
}

/** A head's place in an anchor: the anchor's root and the head's proof (sibling hashes, bottom up), all 0x-hex. */
export interface AnchorProof {
  root: `0x${string}`;
  proof: Array<`0x${string}`>;
}

const HASH = /^[0-9a-f]{64}$/;

/** A head as its leaf values `[batch_id, sequence_number, 0x<hash>]`. Errors: Error for a malformed head. */
export function leafOf(head: AuditHead): [string, string, string] {
  if (!HASH.test(head.hash))
    throw new Error(`anchor: the audit hash of ${head.batch_id} #${head.sequence_number} is not 64 lowercase hex digits`);
  if (!Number.isSafeInteger(head.sequence_number) || head.sequence_number < 1)
    throw new Error(`anchor: bad sequence number ${head.sequence_number} of ${head.batch_id}`);
  return [head.batch_id, String(head.sequence_number), `0x${head.hash}`];
}

/**
 * True when `proof` shows `head` under `root`: OpenZeppelin's MerkleProof.processProof (siblings
 * hashed in sorted pairs, keccak-256) from the head's standard leaf — the check the contract's
 * `isAnchoredHead` makes, less the on-chain part. Done with viem (in every ledger bundle already)
 * rather than @openzeppelin/merkle-tree, whose ABI coder and hashes would put the read paths over
 * their bundle budgets; test/unit/anchoring.test.ts proves it agrees with StandardMerkleTree.verify.
 */
export function verifyAnchorProof(head: AuditHead, anchor: AnchorProof): boolean {
  try {
    let node = anchorLeafHash(head);
    for (const sibling of anchor.proof) {
      if (!BYTES32.test(sibling)) return false;
      const [a, b] = node.toLowerCase() < sibling.toLowerCase() ? [node, sibling] : [sibling, node];
      node = keccak256(concat([a, b]));
    }
    return node.toLowerCase() === anchor.root.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * The standard leaf hash of a head (0x-hex): keccak256(keccak256(abi.encode(batch_id, sequence_number,
 * 0x<hash>))), as StandardMerkleTree and the contract's `headLeaf` compute it.
 * Errors: Error for a malformed head.
 */
export function anchorLeafHash(head: AuditHead): `0x${string}` {
  const [batchId, seq, hash] = leafOf(head);
  return keccak256(keccak256(encodeAbiParameters(LEAF_PARAMS, [batchId, BigInt(seq), hash as `0x${string}`])));
}

const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const LEAF_PARAMS = [{ type: 'string' }, { type: 'uint256' }, { type: 'bytes32' }] as const;

/** Seconds between periodic anchors unless ANCHOR_INTERVAL_S says otherwise (docs/api/anchoring.md#anchoring-of-the-audit-log; locally × LOCAL_TIME_SCALE). */
export const DEFAULT_ANCHOR_INTERVAL_S = 300;

/**
 * A batch's place in one mined periodic anchor, as stored and shown: the batch's head when the
 * anchor was built, the anchor's root and the head's proof, and the anchor transaction. It anchors
 * every entry of the batch up to `head_sequence_number` (the hash chain links them to the head).
 */
export interface BatchAnchor {
  anchor_id: string;
  head_sequence_number: number;
  /** The head entry's hash, 64 lowercase hex digits. */
  head_hash: string;
  root: `0x${string}`;
  proof: Array<`0x${string}`>;
  tx_hash: string;
  block_number: number;
}

/**
 * How one audit entry is anchored on the ledger (the `anchor` of `GET /batch/{id}/audit`): the
 * mint or trace-log transaction of the entry itself (tx and block only), or the periodic anchor
 * whose head covers it (with the root, the head's proof, and which head it proves).
 */
export interface EntryAnchor {
  tx_hash: string;
  block_number: number;
  root?: string;
  proof?: string[];
  head_sequence_number?: number;
  head_hash?: string;
}

/** The periodic anchor of a batch as an entry's `anchor`. */
export function entryAnchorOf(a: BatchAnchor): EntryAnchor {
  return {
    tx_hash: a.tx_hash,
    block_number: a.block_number,
    root: a.root,
    proof: a.proof,
    head_sequence_number: a.head_sequence_number,
    head_hash: a.head_hash,
  };
}

/**
 * The id of the anchor built at `at` over `root`: `ANCHOR-<yyyymmddThhmmss>-<first 8 hex of the root>`
 * (sortable by time; also the id of its ledger write).
 */
export function anchorIdOf(at: Date, root: `0x${string}`): string {
  return `ANCHOR-${at.toISOString().replace(/[-:]/g, '').slice(0, 15)}-${root.slice(2, 10)}`;
}
