import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { ANCHOR_LEAF_TYPES, leafOf, type AnchorProof, type AuditHead } from './anchoring';

/**
 * Building the Merkle tree of a periodic anchor (docs/api/anchoring.md#anchoring-of-the-audit-log) with OpenZeppelin's
 * StandardMerkleTree — only the audit-anchorer builds trees, so only its bundle carries the
 * library; proofs are checked by `verifyAnchorProof` (./anchoring.ts).
 */

/** The tree of one anchor: its root, and each head's proof by batch id. */
export interface AnchorTree {
  root: `0x${string}`;
  proofs: Map<string, AnchorProof & { head: AuditHead }>;
}

/**
 * Builds the Merkle tree of an anchor over `heads` (one per batch, at least one). The tree is the
 * same whatever the order of `heads` (leaves are sorted), so any party can rebuild it from the heads.
 * Errors: Error on an empty list, a batch given twice, or a malformed head.
 */
export function buildAnchorTree(heads: readonly AuditHead[]): AnchorTree {
  if (heads.length === 0) throw new Error('anchor: no audit heads to anchor');
  const seen = new Set<string>();
  for (const h of heads) {
    if (seen.has(h.batch_id)) throw new Error(`anchor: batch ${h.batch_id} given twice; an anchor holds one head per batch`);
    seen.add(h.batch_id);
  }
  const byBatch = new Map(heads.map((h) => [h.batch_id, h]));
  const tree = StandardMerkleTree.of(heads.map(leafOf), [...ANCHOR_LEAF_TYPES]);
  const root = tree.root as `0x${string}`;
  const proofs = new Map<string, AnchorProof & { head: AuditHead }>();
  for (const [i, [batchId]] of tree.entries()) {
    proofs.set(batchId, { root, proof: tree.getProof(i) as Array<`0x${string}`>, head: byBatch.get(batchId)! });
  }
  return { root, proofs };
}
