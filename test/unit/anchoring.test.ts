import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { buildAnchorTree } from '../../shared/domain/anchor-tree';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { ANCHOR_LEAF_TYPES, anchorLeafHash, verifyAnchorProof, type AuditHead } from '../../shared/domain/anchoring';

/** Anchoring primitives (issue 13, docs/api/anchoring.md#anchoring-of-the-audit-log): one Merkle root over many batches' audit heads, a proof per head. */
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const head = (i: number, seq = 3): AuditHead => ({
  batch_id: `BATCH-2026-${String(i).padStart(6, '0')}`,
  sequence_number: seq,
  hash: sha(`entry ${i} ${seq}`),
});

describe('buildAnchorTree', () => {
  it('gives every head a proof that verifies under the root, and the same root in any order', () => {
    const heads = Array.from({ length: 9 }, (_, i) => head(i + 1, i + 2));
    const tree = buildAnchorTree(heads);
    expect(tree.root).toMatch(/^0x[0-9a-f]{64}$/);
    expect(tree.proofs.size).toBe(9);
    for (const h of heads) expect(verifyAnchorProof(h, tree.proofs.get(h.batch_id)!)).toBe(true);
    expect(buildAnchorTree([...heads].reverse()).root).toBe(tree.root);
  });

  it('a rewritten entry (another hash or sequence number) or another batch id does not verify', () => {
    const heads = [head(1), head(2), head(3)];
    const tree = buildAnchorTree(heads);
    const p = tree.proofs.get(heads[1]!.batch_id)!;
    expect(verifyAnchorProof({ ...heads[1]!, hash: sha('rewritten payout entry') }, p)).toBe(false);
    expect(verifyAnchorProof({ ...heads[1]!, sequence_number: 4 }, p)).toBe(false);
    expect(verifyAnchorProof({ ...heads[1]!, batch_id: heads[0]!.batch_id }, p)).toBe(false);
    expect(verifyAnchorProof(heads[1]!, { ...p, root: buildAnchorTree([head(7)]).root })).toBe(false);
  });

  it('one head: the root is its leaf and the proof is empty', () => {
    const tree = buildAnchorTree([head(5)]);
    expect(tree.proofs.get(head(5).batch_id)!.proof).toEqual([]);
    expect(tree.root).toBe(anchorLeafHash(head(5)));
  });

  it('refuses no heads, a batch twice, and a malformed hash or sequence number', () => {
    expect(() => buildAnchorTree([])).toThrow(/no audit heads/);
    expect(() => buildAnchorTree([head(1), head(1, 9)])).toThrow(/given twice/);
    expect(() => buildAnchorTree([{ ...head(1), hash: 'ABC' }])).toThrow(/64 lowercase hex/);
    expect(() => buildAnchorTree([{ ...head(1), sequence_number: 0 }])).toThrow(/sequence number/);
  });

  it('property: for any set of heads, every proof verifies and no proof verifies another head', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 999_999 }), { minLength: 1, maxLength: 40 }), fc.nat(), (ids, pick) => {
        const heads = ids.map((i) => head(i, (i % 17) + 1));
        const tree = buildAnchorTree(heads);
        const a = heads[pick % heads.length]!;
        const b = heads[(pick + 1) % heads.length]!;
        return verifyAnchorProof(a, tree.proofs.get(a.batch_id)!) && (a === b || !verifyAnchorProof(b, tree.proofs.get(a.batch_id)!));
      }),
      { numRuns: 200 },
    );
  });

  it('property: the viem verifier and leaf hash agree with OpenZeppelin StandardMerkleTree for any heads and any (also forged) proof', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 999_999 }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.boolean(),
        (ids, pick, forge) => {
          const heads = ids.map((i) => head(i, (i % 17) + 1));
          const tree = buildAnchorTree(heads);
          const a = heads[pick % heads.length]!;
          const p = tree.proofs.get(a.batch_id)!;
          const proof = forge && p.proof.length > 0 ? [...p.proof.slice(1), p.proof[0]!] : p.proof;
          const leaf = [a.batch_id, String(a.sequence_number), `0x${a.hash}`];
          const library = StandardMerkleTree.verify(p.root, [...ANCHOR_LEAF_TYPES], leaf, proof);
          const ours = verifyAnchorProof(a, { root: p.root, proof });
          const single = StandardMerkleTree.of([leaf], [...ANCHOR_LEAF_TYPES]);
          return library === ours && single.leafHash(leaf) === anchorLeafHash(a);
        },
      ),
      { numRuns: 200 },
    );
  });
});
