import type { Hex } from 'viem';
import { LedgerRefusedError, LedgerTransportError } from '../../shared/domain/errors';
import { maxRecordsPerTx } from '../../shared/domain/ledger-batching';
import type { BatchedCall, Ledger, LedgerWriteGroups, LedgerWriteParking } from '../../shared/domain/ports/ledger';
import type { PayoutRequestMessage } from '../../shared/domain/ports/payouts';
import type { BatchLedgerTx, LedgerWriteGroup } from '../../shared/domain/records';
import type { BatchWriterDeps } from '../../shared/use-cases/ledger-batch-deps';
import { landInGroup } from '../../shared/use-cases/ledger-batch-writer';
import { landOrPark, type LedgerWriterDeps } from '../../shared/use-cases/ledger-writer';
import { fakeBatchStore, fakeCustodyStore, fakeLedger, fakeWorkQueue } from './support/fakes';

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

const STAGES = ['DELIVERED', 'GRADED', 'MILLED', 'WAREHOUSED', 'COMMITTED', 'EXPORTED', 'SETTLED'];

/**
 * In-memory groups and writes with the adapter's claim conditions; a ledger that records its
 * batched calls and, like the real adapter, cannot encode a record of an unknown stage (RangeError)
 * and refuses (LedgerRefusedError) a call holding a token of `revertWith`.
 */
function world(
  writes: BatchLedgerTx[],
  opts: { skip?: Set<number>; minedAfter?: number; reverted?: boolean; revertWith?: Set<number> } = {},
) {
  const txs = new Map(writes.map((w) => [w.ledger_tx_id, { ...w }]));
  const groups = new Map<string, LedgerWriteGroup>();
  const calls: Array<{ kind: string; tokenIds: bigint[] }> = [];
  const simulations: number[] = [];
  const written: string[] = [];
  const refused: Array<[string, string]> = [];
  let polls = 0;
  const store: LedgerWriteGroups = {
    pendingOfKind: async (kind, limit) =>
      [...txs.values()]
        .filter((t) => t.kind === kind && t.status === 'PENDING' && !t.raw_tx && !t.group_id && !t.parked_at)
        .map((t) => ({ ...t }))
        .slice(0, limit),
    create: async (g) => {
      if (groups.has(g.group_id)) throw new Error('exists');
      groups.set(g.group_id, structuredClone(g));
    },
    getGroup: async (id) => structuredClone(groups.get(id) ?? null),
    writesWithGroups: async () => {
      throw new Error('the batched writer reads its writes one at a time');
    },
    claimAll: async (gid, ids) =>
      ids.map((id) => {
        const t = txs.get(id);
        if (!t) return null;
        if (t.group_id === gid || (t.status === 'PENDING' && !t.raw_tx && !t.group_id && !t.parked_at)) {
          t.group_id = gid;
          return { ...t };
        }
        return null;
      }),
    release: async (gid, w) => {
      const t = txs.get(w.ledger_tx_id);
      if (!t || t.group_id !== gid || t.status !== 'PENDING' || t.raw_tx) return false;
      delete t.group_id;
      return true;
    },
    setMembers: async (gid, members, splitOut) => {
      const g = groups.get(gid)!;
      if ((g.status !== 'SEALED' && g.status !== 'CLAIMING') || g.raw_tx) throw new Error('members of a signed group');
      Object.assign(g, { status: 'SEALED', members, split_out: [...(g.split_out ?? []), ...splitOut] });
    },
    keepSigned: async (gid, s, _at, _block, members) => {
      const g = groups.get(gid)!;
      if ((g.status !== 'SEALED' && g.status !== 'CLAIMING') || g.raw_tx) throw new Error('signed twice');
      Object.assign(g, { status: 'SENT', raw_tx: s.rawTx, tx_hash: s.txHash, nonce: s.nonce, members });
    },
    settle: async (gid) => void Object.assign(groups.get(gid)!, { status: 'SETTLED' }),
    // Not pipelined here (no queueReceiptCheck): see ledger-pipeline.test.ts.
    keepReplacement: async () => {
      throw new Error('unexpected keepReplacement');
    },
    nextNonce: async () => undefined,
    inFlight: async () => [],
  };
  /** What the real adapter throws before signing `call`, if anything. */
  const problem = (call: BatchedCall): Error | undefined => {
    for (const r of call.records) {
      if ('stage' in r && !STAGES.includes(r.stage)) return new RangeError(`recordStages: unknown stage ${r.stage}`);
      if (r.tokenId < 0n) return new RangeError('tokenId must be a bigint in 0 … 2^256-1');
    }
    return undefined;
  };
  const refusal = (call: BatchedCall): Error | undefined =>
    call.records.some((r) => opts.revertWith?.has(Number(r.tokenId))) ? new LedgerRefusedError(call.kind, 'Boom') : undefined;
  const sign = async (call: BatchedCall, keep: (s: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>) => {
    const err = problem(call) ?? refusal(call);
    if (err) throw err;
    calls.push({ kind: call.kind, tokenIds: call.records.map((r) => r.tokenId) });
    await keep({ rawTx: '0x01', txHash: HASH, nonce: calls.length });
    return { txHash: HASH };
  };
  const ledger: BatchWriterDeps['ledger'] = {
    mintBatchKept: (records, keep) => sign({ kind: 'MINT', records }, keep),
    recordStagesKept: (records, keep) => sign({ kind: 'TRACE_STAGE', records }, keep),
    batchCallError: async (call) => problem(call),
    estimateBatchGas: async (call) => {
      const err = problem(call) ?? refusal(call);
      if (err) throw err;
      return 100_000n;
    },
    simulateBatch: async (call) => {
      simulations.push(call.records.length);
      const err = problem(call) ?? refusal(call);
      if (err) throw err;
    },
    rebroadcast: async () => undefined,
    waitForReceipt: async () =>
      polls++ < (opts.minedAfter ?? 0) ? null : { status: opts.reverted ? 'reverted' : 'success', blockNumber: 7n, txHash: HASH },
    signerNonces: async () => ({ mined: 0, pending: 0 }),
    blockNumber: async () => 7,
    isKnown: async () => true,
    replaceKept: async () => {
      throw new Error('unexpected replaceKept');
    },
    batchOutcomes: async (_h, _k, count) => {
      const ids = calls.at(-1)!.tokenIds;
      expect(ids).toHaveLength(count);
      return ids.map((id) =>
        opts.skip?.has(Number(id)) ? { written: false as const, reason: `token ${id} skipped` } : { written: true as const },
      );
    },
  };
  const deps: BatchWriterDeps = {
    groups: store,
    ledger,
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
  return { deps, txs, groups, calls, simulations, written, refused };
}

/**
 * The single writer around `w` (writeLedgerTx with its poison-message policy, 3 attempts): delivers
 * the FIFO queue's messages in order, the head again while it fails; what was parked and failed.
 */
async function drainQueue(w: ReturnType<typeof world>, queue: string[], deliveries = 30, ledger: Partial<Ledger> = {}) {
  const parked: string[] = [];
  const failed: Array<[string, string]> = [];
  const writer: LedgerWriterDeps & { parking: Pick<LedgerWriteParking, 'recordFailedAttempt' | 'park'> } = {
    custody: fakeCustodyStore({
      getLedgerTx: async (id) => (w.txs.has(id) ? { ...w.txs.get(id)! } : null),
      keepSigned: async (id, signed) =>
        void Object.assign(w.txs.get(id)!, { raw_tx: signed.rawTx, tx_hash: signed.txHash, nonce: signed.nonce, status: 'SENT' }),
      confirm: async (t) => void Object.assign(w.txs.get(t.ledger_tx_id)!, { status: 'CONFIRMED' }),
      markFailed: async (id, reason) => {
        failed.push([id, reason]);
        Object.assign(w.txs.get(id)!, { status: 'FAILED', failure: reason });
      },
    }),
    ledger: fakeLedger({ ...w.deps.ledger, batchedCallsDeployed: async () => true, ...ledger }),
    batches: fakeBatchStore({ markMintFailed: async () => undefined }),
    payoutQueue: fakeWorkQueue<PayoutRequestMessage>('payoutQueue'),
    now: w.deps.now,
    groups: w.deps.groups,
    parking: {
      recordFailedAttempt: async (id) => {
        const t = w.txs.get(id)!;
        t.attempts = (t.attempts ?? 0) + 1;
        return t.attempts;
      },
      park: async (id) => {
        parked.push(id);
        Object.assign(w.txs.get(id)!, { status: 'FAILED', parked_at: 'now' });
        return true;
      },
    },
  };
  const pending = [...queue];
  for (let n = 0; n < deliveries && pending.length > 0; n++) {
    try {
      await landOrPark(writer, pending[0]!, { receiptWaitMs: 10, maxAttempts: 3 });
      pending.shift();
    } catch {
      // left at the head of its message group: delivered again
    }
  }
  return { parked, failed, pending };
}

/** A trace-log write the writer can never send: a stage the trace log does not know (as the ledger soak injects). */
function poison(n: number): BatchLedgerTx {
  return { ...write(n, 'TRACE_STAGE'), ledger_tx_id: `POISON-${n}`, stage: 'ROASTED' as BatchLedgerTx['stage'] };
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
    const cap = maxRecordsPerTx('MINT');
    const w = world(Array.from({ length: cap + 5 }, (_, i) => write(i + 1)));
    await landInGroup(w.deps, w.txs.get('b1-1')!, 1000);
    expect(w.calls[0]!.tokenIds).toHaveLength(cap);
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

  it('a crash after claiming, before signing: the redelivered write finishes the same group', async () => {
    const w = world([write(1), write(2)]);
    const realClaimAll = w.deps.groups.claimAll;
    w.deps.groups.claimAll = async (gid, ids, known) => {
      await realClaimAll(gid, ids, known);
      throw new Error('crash');
    };
    await expect(landInGroup(w.deps, w.txs.get('b1-1')!, 10)).rejects.toThrow('crash');
    expect([...w.groups.values()].map((g) => g.status)).toEqual(['CLAIMING']);
    w.deps.groups.claimAll = realClaimAll;
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

describe('one bad member never blocks its group', () => {
  const good = [1, 2, 3].map((n) => write(n, 'TRACE_STAGE'));

  it('a group holding one unencodable member + 3 good ones: the 3 land in one transaction, the bad one is split out and its own delivery throws', async () => {
    // The state a group formed before records were checked leaves behind: the poison claimed among the members.
    const w = world([good[0]!, poison(9), good[1]!, good[2]!]);
    const members = ['b1-1', 'POISON-9', 'b2-1', 'b3-1'];
    w.groups.set('G', { group_id: 'G', kind: 'TRACE_STAGE', status: 'SEALED', candidates: members, members, created_at: 'then' });
    for (const id of members) w.txs.get(id)!.group_id = 'G';

    await landInGroup(w.deps, w.txs.get('b1-1')!, 10);
    expect(w.calls).toEqual([{ kind: 'TRACE_STAGE', tokenIds: [1n, 2n, 3n] }]);
    expect(w.written.sort()).toEqual(['b1-1', 'b2-1', 'b3-1']);
    expect(w.groups.get('G')).toMatchObject({ status: 'SETTLED', members: ['b1-1', 'b2-1', 'b3-1'] });
    expect(w.groups.get('G')!.split_out).toEqual([{ ledger_tx_id: 'POISON-9', reason: 'recordStages: unknown stage ROASTED' }]);
    // Released: it is open, claimed by no group, and its own delivery fails alone (then retried and parked by the writer).
    expect(w.txs.get('POISON-9')).toMatchObject({ status: 'PENDING' });
    expect(w.txs.get('POISON-9')!.group_id).toBeUndefined();
    await expect(landInGroup(w.deps, w.txs.get('POISON-9')!, 10)).rejects.toThrow(RangeError);
    expect(w.calls).toHaveLength(1);
  });

  it.each([
    ['the poison queued first', ['POISON-9', 'b1-1', 'b2-1', 'b3-1']],
    ['the poison queued among the others', ['b1-1', 'POISON-9', 'b2-1', 'b3-1']],
  ])('through the single writer (%s): the 3 CONFIRMED in one transaction, the poison never claimed and parked alone', async (_, queue) => {
    const w = world([poison(9), ...good]);
    const { parked, failed, pending } = await drainQueue(w, queue);
    expect(pending).toEqual([]);
    expect(w.calls).toEqual([{ kind: 'TRACE_STAGE', tokenIds: [1n, 2n, 3n] }]);
    expect(good.map((g) => w.txs.get(g.ledger_tx_id)!.status)).toEqual(['CONFIRMED', 'CONFIRMED', 'CONFIRMED']);
    expect(parked).toEqual(['POISON-9']);
    expect(w.txs.get('POISON-9')).toMatchObject({ status: 'FAILED', attempts: 3 });
    expect(w.txs.get('POISON-9')!.group_id).toBeUndefined();
    expect(failed).toEqual([]);
  });

  it('a member the chain refuses (the batched call reverts with it): bisected out, the others land, it is settled as refused', async () => {
    const w = world(
      [1, 2, 3, 4, 5].map((n) => write(n, 'TRACE_STAGE')),
      { revertWith: new Set([4]) },
    );
    const { parked, failed, pending } = await drainQueue(w, ['b1-1', 'b2-1', 'b3-1', 'b4-1', 'b5-1']);
    expect(pending).toEqual([]);
    expect(w.calls).toEqual([{ kind: 'TRACE_STAGE', tokenIds: [1n, 2n, 3n, 5n] }]);
    expect(['b1-1', 'b2-1', 'b3-1', 'b5-1'].map((id) => w.txs.get(id)!.status)).toEqual([
      'CONFIRMED',
      'CONFIRMED',
      'CONFIRMED',
      'CONFIRMED',
    ]);
    // Refused at its own delivery, as a refused single write is: at once, not parked.
    expect(parked).toEqual([]);
    expect(failed).toEqual([['b4-1', 'The ledger refused TRACE_STAGE: Boom']]);
    // Found by bisection, not by simulating every member alone: [5] → [3] ok, [2] → [1] → [1] ok.
    expect(w.simulations.length).toBeLessThan(5 + 2);
  });

  it('a write still claimed by a group that split it out (a crash before its claim was released) is released and lands anew', async () => {
    const w = world([write(1), write(2)]);
    w.groups.set('OLD', {
      group_id: 'OLD',
      kind: 'MINT',
      status: 'SETTLED',
      candidates: ['b1-1', 'b2-1'],
      members: ['b1-1'],
      created_at: 'then',
    });
    Object.assign(w.txs.get('b1-1')!, { status: 'CONFIRMED', group_id: 'OLD' });
    w.txs.get('b2-1')!.group_id = 'OLD';
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10);
    expect(w.calls).toEqual([{ kind: 'MINT', tokenIds: [2n] }]);
    expect(w.written).toEqual(['b2-1']);
  });

  it('a transport failure while signing is not blamed on a member: nothing split out, the queue retries', async () => {
    const w = world([write(1), write(2)]);
    w.deps.ledger.mintBatchKept = async () => {
      throw new LedgerTransportError('down');
    };
    await expect(landInGroup(w.deps, w.txs.get('b1-1')!, 10)).rejects.toThrow('down');
    expect(w.simulations).toEqual([]);
    expect([...w.groups.values()][0]).toMatchObject({ status: 'CLAIMING', candidates: ['b1-1', 'b2-1'] }); // nothing split out; the retry claims again
  });

  it('contracts deployed before the batched functions: every write goes alone (one record per transaction), no group formed', async () => {
    const w = world([1, 2].map((n) => write(n, 'TRACE_STAGE')));
    const single: bigint[] = [];
    const { pending } = await drainQueue(w, ['b1-1', 'b2-1'], 30, {
      batchedCallsDeployed: async (kind) => {
        expect(kind).toBe('TRACE_STAGE');
        return false;
      },
      recordStageKept: async (input, keep) => {
        single.push(input.tokenId);
        await keep({ rawTx: '0x02', txHash: HASH, nonce: single.length });
        return { txHash: HASH };
      },
      waitForReceipt: async () => ({ status: 'success', blockNumber: 3n, txHash: HASH }),
    });
    expect(pending).toEqual([]);
    expect(single).toEqual([1n, 2n]);
    expect(w.calls).toEqual([]);
    expect(w.groups.size).toBe(0);
  });
});
