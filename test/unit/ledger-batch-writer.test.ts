import type { Hex } from 'viem';
import type { LedgerWriteGroups } from '../../shared/domain/ports/ledger';
import type { BatchLedgerTx, LedgerWriteGroup } from '../../shared/domain/records';
import { landInGroup, type BatchWriterDeps } from '../../shared/use-cases/ledger-batch-writer';

const HASH = `0x${'ab'.repeat(32)}` as Hex;

function write(n: number, kind: 'MINT' | 'TRACE_STAGE' = 'MINT'): BatchLedgerTx {
  return {
    ledger_tx_id: `b${n}-1`,
    kind,
    batch_id: `b${n}`,
    token_id: String(n),
    stage: kind === 'MINT' ? 'DELIVERED' : 'GRADED',
    ...(kind === 'TRACE_STAGE' ? { evidence_cid: 'bafy' } : {}),
    audit_hash: 'cd'.repeat(32),
    audit_sequence_number: 1,
    status: 'PENDING',
    created_at: `2026-01-01T00:00:0${n}Z`,
  };
}

/** In-memory groups and writes with the adapter's claim conditions; a ledger that records its batched calls. */
function world(writes: BatchLedgerTx[], opts: { skip?: Set<number>; minedAfter?: number; reverted?: boolean } = {}) {
  const txs = new Map(writes.map((w) => [w.ledger_tx_id, { ...w }]));
  const groups = new Map<string, LedgerWriteGroup>();
  const calls: Array<{ kind: string; tokenIds: bigint[] }> = [];
  const written: string[] = [];
  const refused: Array<[string, string]> = [];
  let polls = 0;
  const store: LedgerWriteGroups = {
    pendingOfKind: async (kind, limit) =>
      [...txs.values()]
        .filter((t) => t.kind === kind && t.status === 'PENDING' && !t.raw_tx && !t.group_id && !t.parked_at)
        .map((t) => t.ledger_tx_id)
        .slice(0, limit),
    create: async (g) => {
      if (groups.has(g.group_id)) throw new Error('exists');
      groups.set(g.group_id, structuredClone(g));
    },
    getGroup: async (id) => structuredClone(groups.get(id) ?? null),
    claim: async (gid, id) => {
      const t = txs.get(id);
      if (!t) return null;
      if (t.group_id === gid || (t.status === 'PENDING' && !t.raw_tx && !t.group_id && !t.parked_at)) {
        t.group_id = gid;
        return { ...t };
      }
      return null;
    },
    seal: async (gid, members) => {
      const g = groups.get(gid)!;
      if (g.status === 'CLAIMING') Object.assign(g, { status: 'SEALED', members });
    },
    keepSigned: async (gid, s) => {
      const g = groups.get(gid)!;
      if (g.status !== 'SEALED' || g.raw_tx) throw new Error('signed twice');
      Object.assign(g, { status: 'SENT', raw_tx: s.rawTx, tx_hash: s.txHash, nonce: s.nonce });
    },
    settle: async (gid) => void Object.assign(groups.get(gid)!, { status: 'SETTLED' }),
  };
  const sign = (kind: string, ids: bigint[], keep: (s: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>) => {
    calls.push({ kind, tokenIds: ids });
    return keep({ rawTx: '0x01', txHash: HASH, nonce: calls.length }).then(() => ({ txHash: HASH }));
  };
  const deps: BatchWriterDeps = {
    groups: store,
    ledger: {
      mintBatchKept: (records, keep) =>
        sign(
          'MINT',
          records.map((r) => r.tokenId),
          keep,
        ),
      recordStagesKept: (records, keep) =>
        sign(
          'TRACE_STAGE',
          records.map((r) => r.tokenId),
          keep,
        ),
      rebroadcast: async () => undefined,
      waitForReceipt: async () =>
        polls++ < (opts.minedAfter ?? 0) ? null : { status: opts.reverted ? 'reverted' : 'success', blockNumber: 7n, txHash: HASH },
      batchOutcomes: async (_h, _k, count) => {
        const ids = calls.at(-1)!.tokenIds;
        expect(ids).toHaveLength(count);
        return ids.map((id) =>
          opts.skip?.has(Number(id)) ? { written: false as const, reason: `token ${id} skipped` } : { written: true as const },
        );
      },
    },
    getLedgerTx: async (id) => (txs.has(id) ? { ...txs.get(id)! } : null),
    written: async (t) => {
      written.push(t.ledger_tx_id);
      txs.get(t.ledger_tx_id)!.status = 'CONFIRMED';
    },
    refused: async (t, reason) => {
      refused.push([t.ledger_tx_id, reason]);
      txs.get(t.ledger_tx_id)!.status = 'FAILED';
    },
    now: () => new Date('2026-01-01T00:01:00Z'),
  };
  return { deps, txs, groups, calls, written, refused };
}

describe('batched ledger writer (landInGroup)', () => {
  it('lands every pending write of the kind in ONE transaction, the triggering write first, and confirms each member', async () => {
    const w = world([write(1), write(2), write(3), write(4, 'TRACE_STAGE')]);
    await landInGroup(w.deps, w.txs.get('b2-1')!, 1000);
    expect(w.calls).toEqual([{ kind: 'MINT', tokenIds: [2n, 1n, 3n] }]);
    expect(w.written.sort()).toEqual(['b1-1', 'b2-1', 'b3-1']);
    expect(w.txs.get('b4-1')!.status).toBe('PENDING');
    // Redelivery of another member's message: its group is settled, nothing signed again.
    await landInGroup(w.deps, w.txs.get('b1-1')!, 1000);
    expect(w.calls).toHaveLength(1);
  });

  it('settles a skipped record as refused and confirms the others (a bad record never blocks the rest)', async () => {
    const w = world([write(1, 'TRACE_STAGE'), write(2, 'TRACE_STAGE'), write(3, 'TRACE_STAGE')], { skip: new Set([2]) });
    await landInGroup(w.deps, w.txs.get('b1-1')!, 1000);
    expect(w.written.sort()).toEqual(['b1-1', 'b3-1']);
    expect(w.refused).toEqual([['b2-1', 'token 2 skipped']]);
  });

  it('caps a transaction at the kind’s record limit; the rest wait for the next one', async () => {
    const w = world(Array.from({ length: 105 }, (_, i) => write(i + 1)));
    await landInGroup(w.deps, w.txs.get('b1-1')!, 1000);
    expect(w.calls[0]!.tokenIds).toHaveLength(100);
    expect([...w.txs.values()].filter((t) => t.status === 'PENDING')).toHaveLength(5);
  });

  it('not mined yet → throws, keeps the signed transaction; the retry re-sends it and never signs again', async () => {
    const w = world([write(1), write(2)], { minedAfter: 1 });
    await expect(landInGroup(w.deps, w.txs.get('b1-1')!, 10)).rejects.toThrow(/not mined yet/);
    expect(w.written).toEqual([]);
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10);
    expect(w.calls).toHaveLength(1);
    expect(w.written.sort()).toEqual(['b1-1', 'b2-1']);
  });

  it('a crash after claiming, before sealing: the redelivered write finishes the same group', async () => {
    const w = world([write(1), write(2)]);
    const realSeal = w.deps.groups.seal;
    w.deps.groups.seal = async () => {
      throw new Error('crash');
    };
    await expect(landInGroup(w.deps, w.txs.get('b1-1')!, 10)).rejects.toThrow('crash');
    w.deps.groups.seal = realSeal;
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10);
    expect(w.groups.size).toBe(1);
    expect(w.calls).toEqual([{ kind: 'MINT', tokenIds: [1n, 2n] }]);
  });

  it('a transaction reverted as a whole refuses every member', async () => {
    const w = world([write(1), write(2)], { reverted: true });
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10);
    expect(w.refused.map(([id]) => id).sort()).toEqual(['b1-1', 'b2-1']);
  });
});
