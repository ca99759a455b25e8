import type { Hex } from 'viem';
import { CLAIMS_AT_ONCE, FORM_AHEAD_AFTER_MS, STUCK_AFTER_BLOCKS } from '../../shared/domain/ledger-batching';
import type { BatchedCall, LedgerWriteGroups } from '../../shared/domain/ports/ledger';
import type { BatchLedgerTx, LedgerWriteGroup } from '../../shared/domain/records';
import { logger } from '../../shared/runtime/logger';
import { checkSentGroup, landInGroup, type BatchWriterDeps } from '../../shared/use-cases/ledger-batch-writer';

/**
 * The pipelined batched writer (docs/ledger.md#the-pipelined-writer) against an in-memory table
 * (the adapter's conditions: claims, one signing per group, the signer's next nonce only moving up)
 * and a chain that mines only when the test says so: a mempool, mined transactions by hash, the
 * signer's mined count and a block number.
 */

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

const hashOf = (raw: string): Hex => `0x${raw.slice(2).padStart(64, '0')}` as Hex;

function world(writes: BatchLedgerTx[]) {
  const txs = new Map(writes.map((w) => [w.ledger_tx_id, { ...w }]));
  const groups = new Map<string, LedgerWriteGroup>();
  const signer = { next: undefined as number | undefined, inFlight: new Set<string>() };
  /** Every signing: the call's token ids, its nonce, its raw bytes. */
  const signed: Array<{ kind: string; tokenIds: bigint[]; nonce: number; raw: Hex }> = [];
  const chain = {
    block: 100,
    mined: 0,
    mempool: new Map<Hex, { raw: Hex; nonce: number; tokenIds: bigint[] }>(),
    receipts: new Map<Hex, { block: number; tokenIds: bigint[] }>(),
    /** Mines each transaction as it arrives (a local chain with LEDGER_BLOCK_TIME_S=0). */
    automine: false,
    broadcasts: [] as Hex[],
    replacements: [] as Array<{ old: Hex; replacement: Hex }>,
    /** Receipt waits (ms > 0) for a hash not mined yet, and what the chain does during one. */
    waits: [] as Hex[],
    onWait: undefined as ((hash: Hex) => Promise<void> | void) | undefined,
  };
  const written: Array<[string, Hex]> = [];
  const refused: string[] = [];
  const checks: Array<{ group: string; key: string }> = [];
  let rawCounter = 0;

  const broadcast = (raw: Hex, nonce: number, tokenIds: bigint[]) => {
    chain.broadcasts.push(raw);
    if (!chain.receipts.has(hashOf(raw))) chain.mempool.set(hashOf(raw), { raw, nonce, tokenIds });
    if (chain.automine) mineBlock();
  };

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
    claim: async (gid, id) => {
      const t = txs.get(id);
      if (!t) return null;
      if (t.group_id === gid || (t.status === 'PENDING' && !t.raw_tx && !t.group_id && !t.parked_at)) {
        t.group_id = gid;
        return { ...t };
      }
      return null;
    },
    release: async (gid, id) => {
      const t = txs.get(id);
      if (!t || t.group_id !== gid || t.status !== 'PENDING' || t.raw_tx) return false;
      delete t.group_id;
      return true;
    },
    seal: async (gid, members) => {
      const g = groups.get(gid)!;
      if (g.status === 'CLAIMING') Object.assign(g, { status: 'SEALED', members });
    },
    setMembers: async (gid, members, splitOut) => {
      const g = groups.get(gid)!;
      if (g.status !== 'SEALED' || g.raw_tx) throw new Error('members of a signed group');
      Object.assign(g, { members, split_out: [...(g.split_out ?? []), ...splitOut] });
    },
    keepSigned: async (gid, s, _at, sentBlock) => {
      const g = groups.get(gid)!;
      if (g.status !== 'SEALED' || g.raw_tx) throw new Error('signed twice');
      if (signer.next !== undefined && signer.next > s.nonce) throw new Error(`nonce ${s.nonce} is kept already`);
      Object.assign(g, { status: 'SENT', raw_tx: s.rawTx, tx_hash: s.txHash, nonce: s.nonce, sent_block: sentBlock });
      signer.next = s.nonce + 1;
      signer.inFlight.add(gid);
    },
    keepReplacement: async (gid, oldHash, s, sentBlock) => {
      const g = groups.get(gid)!;
      if (g.status !== 'SENT' || g.tx_hash !== oldHash) throw new Error('replaced twice');
      Object.assign(g, {
        raw_tx: s.rawTx,
        tx_hash: s.txHash,
        sent_block: sentBlock,
        replaced_hashes: [...(g.replaced_hashes ?? []), oldHash],
      });
    },
    nextNonce: async () => signer.next,
    inFlight: async () =>
      [...signer.inFlight].map((id) => structuredClone(groups.get(id)!)).sort((a, b) => (a.nonce ?? 0) - (b.nonce ?? 0)),
    settle: async (gid) => {
      Object.assign(groups.get(gid)!, { status: 'SETTLED' });
      signer.inFlight.delete(gid);
    },
  };

  const sign = async (call: BatchedCall, keep: (s: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>, nonce?: number) => {
    if (nonce === undefined) throw new Error('the pipelined writer signs with the nonce it chose');
    const raw = `0x${(++rawCounter).toString(16).padStart(4, '0')}` as Hex;
    const tokenIds = call.records.map((r) => r.tokenId);
    signed.push({ kind: call.kind, tokenIds, nonce, raw });
    await keep({ rawTx: raw, txHash: hashOf(raw), nonce });
    broadcast(raw, nonce, tokenIds);
    return { txHash: hashOf(raw) };
  };
  const ledger: BatchWriterDeps['ledger'] = {
    mintBatchKept: (records, keep, nonce) => sign({ kind: 'MINT', records }, keep, nonce),
    recordStagesKept: (records, keep, nonce) => sign({ kind: 'TRACE_STAGE', records }, keep, nonce),
    batchCallError: async () => undefined,
    simulateBatch: async () => undefined,
    rebroadcast: async (raw, hash) => {
      expect(hashOf(raw)).toBe(hash);
      const original = signed.find((s) => s.raw === raw)!;
      broadcast(raw, original.nonce, original.tokenIds);
    },
    waitForReceipt: async (hash, ms) => {
      if (ms > 0 && !chain.receipts.has(hash)) {
        chain.waits.push(hash);
        await chain.onWait?.(hash); // what happens on the chain while the caller waits (a block mined…)
      }
      const r = chain.receipts.get(hash);
      return r ? { status: 'success', blockNumber: BigInt(r.block), txHash: hash } : null;
    },
    batchOutcomes: async (hash, _k, count) => {
      const ids = chain.receipts.get(hash)!.tokenIds;
      expect(ids).toHaveLength(count);
      return ids.map(() => ({ written: true as const }));
    },
    signerNonces: async () => {
      // Like a node: pending counts only the transactions that can run in order after the mined ones.
      const held = new Set([...chain.mempool.values()].map((t) => t.nonce));
      let pending = chain.mined;
      while (held.has(pending)) pending++;
      return { mined: chain.mined, pending };
    },
    blockNumber: async () => chain.block,
    isKnown: async (hash) => chain.mempool.has(hash) || chain.receipts.has(hash),
    replaceKept: async (raw, keep) => {
      const old = signed.find((s) => s.raw === raw)!;
      const replacement = `0x${(++rawCounter).toString(16).padStart(4, '0')}` as Hex;
      signed.push({ ...old, raw: replacement });
      await keep({ rawTx: replacement, txHash: hashOf(replacement), nonce: old.nonce });
      chain.replacements.push({ old: hashOf(raw), replacement: hashOf(replacement) });
      chain.mempool.delete(hashOf(raw)); // the node keeps the replacement only
      broadcast(replacement, old.nonce, old.tokenIds);
      return { txHash: hashOf(replacement) };
    },
  };
  const deps: BatchWriterDeps = {
    groups: store,
    ledger,
    getLedgerTx: async (id) => (txs.has(id) ? { ...txs.get(id)! } : null),
    written: async (t, hash) => {
      written.push([t.ledger_tx_id, hash]);
      txs.get(t.ledger_tx_id)!.status = 'CONFIRMED';
    },
    refused: async (t) => {
      refused.push(t.ledger_tx_id);
      txs.get(t.ledger_tx_id)!.status = 'FAILED';
    },
    now: () => new Date('2026-01-01T00:01:00Z'),
    queueReceiptCheck: async (g, key) => {
      // A FIFO queue's deduplication: the same group and key queued twice is one message.
      if (!checks.some((c) => c.group === g.group_id && c.key === key)) checks.push({ group: g.group_id, key });
    },
  };
  /** Mines the mempool's transactions (lowest nonce first, only those with no gap before them) in one block. */
  const mineBlock = (hashes?: Hex[]) => {
    chain.block++;
    const ready = [...chain.mempool.entries()].filter(([h]) => !hashes || hashes.includes(h)).sort((a, b) => a[1].nonce - b[1].nonce);
    for (const [hash, tx] of ready) {
      if (tx.nonce !== chain.mined) break;
      chain.receipts.set(hash, { block: chain.block, tokenIds: tx.tokenIds });
      chain.mempool.delete(hash);
      for (const [other, o] of chain.mempool) if (o.nonce === tx.nonce) chain.mempool.delete(other); // its replacement is void
      chain.mined++;
    }
  };
  return { deps, txs, groups, signer, signed, chain, written, refused, checks, mineBlock };
}

describe('pipelined batched writer: send without waiting, receipts gathered apart', () => {
  it('two groups are sent before either receipt, with consecutive nonces; one receipt check settles both once mined', async () => {
    const w = world([write(1), write(2)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    // Sent, not waited for: nothing confirmed, the write still open, a receipt check queued.
    expect(w.signed.map((s) => [s.tokenIds, s.nonce])).toEqual([[[1n, 2n], 0]]);
    expect(w.written).toEqual([]);
    expect(w.checks).toEqual([{ group: [...w.groups.keys()][0], key: 'sent' }]);
    // The other member's own message: its group is in flight, nothing signed, nothing waited for.
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10_000);
    expect(w.signed).toHaveLength(1);

    // Writes committed meanwhile: the next groups go out at once, nonces 1 and 2, the first still unmined.
    w.txs.set('b3-1', write(3));
    w.txs.set('b4-1', write(4, 'TRACE_STAGE'));
    await landInGroup(w.deps, w.txs.get('b3-1')!, 10_000);
    await landInGroup(w.deps, w.txs.get('b4-1')!, 10_000);
    expect(w.signed.map((s) => [s.kind, s.nonce])).toEqual([
      ['MINT', 0],
      ['MINT', 1],
      ['TRACE_STAGE', 2],
    ]);
    expect(w.chain.receipts.size).toBe(0);
    expect(w.signer).toMatchObject({ next: 3 });
    expect(w.signer.inFlight.size).toBe(3);

    w.mineBlock();
    await checkSentGroup(w.deps, w.checks[0]!.group, 10);
    expect(w.written.map(([id]) => id).sort()).toEqual(['b1-1', 'b2-1', 'b3-1', 'b4-1']);
    expect(w.signer.inFlight.size).toBe(0);
    expect([...w.groups.values()].map((g) => g.status)).toEqual(['SETTLED', 'SETTLED', 'SETTLED']);
    // Their own receipt checks, delivered later: nothing left to settle, nothing queued again.
    const queued = w.checks.length;
    for (const c of [...w.checks]) await checkSentGroup(w.deps, c.group, 10);
    expect(w.written).toHaveLength(4);
    expect(w.checks).toHaveLength(queued);
  });

  it('on a chain that mines on arrival, the delivery that sent the group settles it: no receipt check in between', async () => {
    const w = world([write(1), write(2)]);
    w.chain.automine = true;
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const [sent] = w.signed;
    expect(w.written).toEqual([
      ['b1-1', hashOf(sent!.raw)],
      ['b2-1', hashOf(sent!.raw)],
    ]);
    expect([...w.groups.values()].map((g) => g.status)).toEqual(['SETTLED']);
    expect(w.signer.inFlight.size).toBe(0);
    // Settled in the delivery that sent it: no receipt check queued at all.
    expect(w.checks).toEqual([]);
    // The other member's own message: its group is settled, nothing more.
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10_000);
    expect(w.written).toHaveLength(2);
    expect(w.signed).toHaveLength(1);
  });

  it('a group not mined at its receipt check: the next check is queued, the writes behind it are not held', async () => {
    const w = world([write(1)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const group = w.checks[0]!.group;
    await checkSentGroup(w.deps, group, 10);
    expect(w.checks.map((c) => c.key)).toEqual(['sent', `check-${Date.parse('2026-01-01T00:01:00Z')}`]);
    expect(w.written).toEqual([]);
  });

  it('the next nonce is the chain’s pending count when a transaction outside the table took the one the table holds', async () => {
    const w = world([write(1), write(2)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000); // nonce 0
    w.mineBlock();
    w.chain.mined = 3; // e.g. single vault writes signed with nonces 1 and 2, mined
    w.txs.set('b3-1', write(3));
    await landInGroup(w.deps, w.txs.get('b3-1')!, 10_000);
    expect(w.signed.map((s) => s.nonce)).toEqual([0, 3]);
  });

  it('a crash after send (before the receipt check was queued): the redelivery neither signs again nor confirms twice', async () => {
    const w = world([write(1), write(2)]);
    const queue = w.deps.queueReceiptCheck!;
    w.deps.queueReceiptCheck = async () => {
      throw new Error('crash');
    };
    await expect(landInGroup(w.deps, w.txs.get('b1-1')!, 10_000)).rejects.toThrow('crash');
    expect(w.signed).toHaveLength(1);
    w.deps.queueReceiptCheck = queue;

    // The same message again: the kept group found, no second signing, the receipt check queued now.
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    expect(w.signed).toHaveLength(1);
    expect(w.checks).toHaveLength(1);
    w.mineBlock();
    await checkSentGroup(w.deps, w.checks[0]!.group, 10);
    // Redelivered again after it settled, and the other member's message: nothing more.
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10_000);
    await checkSentGroup(w.deps, w.checks[0]!.group, 10);
    expect(w.written.map(([id]) => id).sort()).toEqual(['b1-1', 'b2-1']);
    expect(w.signed).toHaveLength(1);
  });

  it('a lost transaction (neither mined nor known to the node) is broadcast again as the same bytes, never signed again', async () => {
    const w = world([write(1)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const [first] = w.signed;
    w.chain.mempool.clear(); // dropped by the node
    await checkSentGroup(w.deps, w.checks[0]!.group, 10);
    expect(w.chain.broadcasts).toEqual([first!.raw, first!.raw]);
    expect(w.signed).toHaveLength(1);
    w.mineBlock();
    await checkSentGroup(w.deps, w.checks[0]!.group, 10);
    expect(w.written).toEqual([['b1-1', hashOf(first!.raw)]]);
  });

  it.each([
    ['the replacement', 1],
    ['the stuck original', 0],
  ])('a stuck transaction is replaced (same nonce, kept first); %s mined settles the members once', async (_, minedIndex) => {
    const w = world([write(1), write(2)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const groupId = w.checks[0]!.group;
    // Not stuck yet: nothing replaced.
    w.chain.block += STUCK_AFTER_BLOCKS - 1;
    await checkSentGroup(w.deps, groupId, 10);
    expect(w.chain.replacements).toEqual([]);
    w.chain.block += 1;
    await checkSentGroup(w.deps, groupId, 10);
    const [original, replacement] = w.signed;
    expect(w.chain.replacements).toEqual([{ old: hashOf(original!.raw), replacement: hashOf(replacement!.raw) }]);
    expect(replacement!.nonce).toBe(original!.nonce);
    expect(w.groups.get(groupId)).toMatchObject({ tx_hash: hashOf(replacement!.raw), replaced_hashes: [hashOf(original!.raw)] });

    // Whichever of the two the chain mines settles the members.
    const mined = hashOf(w.signed[minedIndex]!.raw);
    w.chain.mempool.set(mined, { raw: w.signed[minedIndex]!.raw, nonce: 0, tokenIds: [1n, 2n] });
    w.mineBlock([mined]);
    await checkSentGroup(w.deps, groupId, 10);
    await checkSentGroup(w.deps, groupId, 10);
    expect(w.written).toEqual([
      ['b1-1', mined],
      ['b2-1', mined],
    ]);
    expect(w.groups.get(groupId)!.status).toBe('SETTLED');
  });

  it('a group whose nonce another transaction took is abandoned: its writes are released to be grouped anew', async () => {
    const w = world([write(1)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    w.chain.mempool.clear();
    w.chain.mined = 1; // nonce 0 mined by a transaction the table does not hold
    await checkSentGroup(w.deps, w.checks[0]!.group, 10);
    expect(w.groups.get(w.checks[0]!.group)!.status).toBe('SETTLED');
    expect(w.txs.get('b1-1')).toMatchObject({ status: 'PENDING' });
    expect(w.txs.get('b1-1')!.group_id).toBeUndefined();
    w.deps.now = () => new Date('2026-01-01T00:02:00Z'); // (a group's id names its creation time)
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    expect(w.signed.map((s) => s.nonce)).toEqual([0, 1]);
  });

  it('a group mined between its receipt look-up and the read of the signer’s counts is not abandoned: the next check settles it', async () => {
    const w = world([write(1)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const groupId = w.checks[0]!.group;
    const lookUp = w.deps.ledger.waitForReceipt;
    let raced = false;
    w.deps.ledger = {
      ...w.deps.ledger,
      waitForReceipt: async (hash, ms) => {
        const receipt = await lookUp(hash, ms);
        if (!raced) {
          raced = true;
          w.mineBlock(); // the block lands just after the look-up found nothing
        }
        return receipt;
      },
    };
    await checkSentGroup(w.deps, groupId, 0); // no waiting: one look-up of its hash
    expect(w.groups.get(groupId)!.status).toBe('SENT');
    expect(w.txs.get('b1-1')!.group_id).toBe(groupId);
    await checkSentGroup(w.deps, groupId, 10);
    expect(w.written).toEqual([['b1-1', hashOf(w.signed[0]!.raw)]]);
    expect(w.signed).toHaveLength(1);
    expect(w.groups.get(groupId)!.status).toBe('SETTLED');
  });

  it('a nonce gap below the groups in flight (nonces nothing holds) is reported with its alarm key and the missing nonces', async () => {
    const w = world([write(1)]);
    w.signer.next = 3; // nonces 0-2 kept by writes whose transactions are gone, none of them a group in flight
    const errors = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
    try {
      await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
      expect(w.signed.map((s) => s.nonce)).toEqual([3]);
      await checkSentGroup(w.deps, w.checks[0]!.group, 10);
      expect(errors).toHaveBeenCalledWith(
        expect.stringMatching(/^nonce gap/),
        expect.objectContaining({ alarm: 'LEDGER_NONCE_GAP', missing_nonces: [0, 1, 2] }),
      );
      // Still in flight, still checked: nothing abandoned or replaced while it waits on the gap.
      expect(w.groups.get(w.checks[0]!.group)!.status).toBe('SENT');
      expect(w.checks).toHaveLength(2);
    } finally {
      errors.mockRestore();
    }
  });
});

describe('pipelined batched writer at block speed: the writer’s path kept short, settling beside it', () => {
  /** `deps` whose table reads and chain calls are counted. */
  function counted(deps: BatchWriterDeps) {
    const reads = { writes: 0, groups: 0, chain: 0 };
    const ledger = new Proxy(deps.ledger, {
      get: (target, key) => {
        const value = Reflect.get(target, key);
        return typeof value === 'function'
          ? (...args: unknown[]) => {
              reads.chain++;
              return value.apply(target, args);
            }
          : value;
      },
    });
    const counting: BatchWriterDeps = {
      ...deps,
      ledger,
      getLedgerTx: (id) => {
        reads.writes++;
        return deps.getLedgerTx(id);
      },
      groups: {
        ...deps.groups,
        getGroup: (id) => {
          reads.groups++;
          return deps.groups.getGroup(id);
        },
      },
    };
    return { deps: counting, reads };
  }

  it('a member’s delivery of a SENT group reads its group once: no member read, no chain call, nothing settled', async () => {
    const w = world([write(1), write(2), write(3)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    w.mineBlock(); // mined; settling is its receipt check's
    for (const id of ['b2-1', 'b3-1']) {
      const { deps, reads } = counted(w.deps);
      await landInGroup(deps, { ...w.txs.get(id)! }, 10_000);
      expect(reads).toEqual({ writes: 0, groups: 1, chain: 0 });
    }
    expect(w.written).toEqual([]);
    expect(w.signed).toHaveLength(1);
    expect(w.checks).toHaveLength(1); // the one queued when it was sent; members queue none
    await checkSentGroup(w.deps, w.checks[0]!.group, 10);
    expect(w.written.map(([id]) => id)).toEqual(['b1-1', 'b2-1', 'b3-1']);
  });

  it('forming and sending a group reads no member again: the claims answer the writes as they stand', async () => {
    const w = world([write(1), write(2), write(3)]);
    const { deps, reads } = counted(w.deps);
    await landInGroup(deps, w.txs.get('b1-1')!, 10_000);
    expect(w.signed[0]!.tokenIds).toEqual([1n, 2n, 3n]);
    expect(reads.writes).toBe(0);
    expect(reads.groups).toBe(2); // the group as created, then as sealed
  });

  it('a member of a group in flight for a minute queues a receipt check (its checks may be lost), once per window', async () => {
    const w = world([write(1), write(2)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const groupId = w.checks[0]!.group;
    w.groups.get(groupId)!.sent_at = '2026-01-01T00:00:00Z'; // a minute before the clock
    await landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000);
    await landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000);
    expect(w.checks.map((c) => c.group)).toEqual([groupId, groupId]);
    expect(w.checks[1]!.key).toMatch(/^stale-\d+$/);
  });

  it('a group is formed and sent while the receipt check of the previous one is still settling its members', async () => {
    const w = world([write(1), write(2)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const first = w.checks[0]!.group;
    w.mineBlock();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const written = w.deps.written;
    w.deps.written = async (t, hash, block) => {
      await gate; // settling a member takes table writes: here it takes until the test says so
      return written(t, hash, block);
    };
    const check = checkSentGroup(w.deps, first, 10);
    w.txs.set('b3-1', write(3));
    const landed = landInGroup(w.deps, w.txs.get('b3-1')!, 10_000).then(() => 'sent');
    const outcome = await Promise.race([landed, new Promise((resolve) => setTimeout(() => resolve('held'), 300))]);
    expect(outcome).toBe('sent');
    expect(w.signed.map((s) => [s.tokenIds, s.nonce])).toEqual([
      [[1n, 2n], 0],
      [[3n], 1],
    ]);
    expect(w.written).toEqual([]);
    release();
    await check;
    expect(w.written.map(([id]) => id)).toEqual(['b1-1', 'b2-1']);
  });

  it('at most one group of a kind per block: the next waits for the last one’s block, then takes what came meanwhile', async () => {
    const w = world([write(1)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000); // sent at block 100, heading for 101
    w.txs.set('b2-1', write(2));
    w.txs.set('b4-1', write(4, 'TRACE_STAGE'));
    // Another kind does not wait: its transaction may share the block.
    await landInGroup(w.deps, w.txs.get('b4-1')!, 10_000);
    expect(w.chain.waits).toEqual([]);
    // A mint waits for the last mint group's receipt; meanwhile a write is committed and the block comes.
    w.chain.onWait = () => {
      w.txs.set('b3-1', write(3));
      w.mineBlock();
    };
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10_000);
    expect(w.chain.waits).toEqual([hashOf(w.signed[0]!.raw)]);
    expect(w.signed.map((s) => [s.kind, s.tokenIds])).toEqual([
      ['MINT', [1n]],
      ['TRACE_STAGE', [4n]],
      ['MINT', [2n, 3n]],
    ]);
    w.chain.onWait = undefined;
    w.mineBlock();
    const blockOf = (i: number) => w.chain.receipts.get(hashOf(w.signed[i]!.raw))!.block;
    expect([blockOf(0), blockOf(1), blockOf(2)]).toEqual([101, 101, 102]);

    // A mint group unmined for longer than a block (stuck: its checks replace it) holds nothing back.
    w.chain.mempool.clear();
    w.txs.set('b5-1', write(5));
    await landInGroup(w.deps, w.txs.get('b5-1')!, 10_000); // sent at 102
    w.chain.mempool.clear(); // never mined
    w.chain.block += 2;
    w.txs.set('b6-1', write(6));
    w.deps.now = () => new Date('2026-01-01T00:02:00Z');
    await landInGroup(w.deps, w.txs.get('b6-1')!, 10_000);
    expect(w.chain.waits).toHaveLength(1);
    expect(w.signed.at(-1)!.tokenIds).toEqual([6n]);
  });

  it('on a chain that mines on arrival nothing waits: each group is mined before the next is formed', async () => {
    const w = world([write(1)]);
    w.chain.automine = true;
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    w.txs.set('b2-1', write(2));
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10_000);
    expect(w.chain.waits).toEqual([]);
    expect(w.written.map(([id]) => id)).toEqual(['b1-1', 'b2-1']);
  });

  it(`claims run ${CLAIMS_AT_ONCE} at a time, finishing in any order, and the members keep the candidates' order`, async () => {
    const writes = Array.from({ length: 60 }, (_, i) => ({
      ...write(i + 1),
      created_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
    }));
    const w = world(writes);
    let running = 0;
    let most = 0;
    const claim = w.deps.groups.claim;
    w.deps.groups = {
      ...w.deps.groups,
      claim: async (gid, id) => {
        if (id === 'b30-1') w.txs.get(id)!.group_id = 'ANOTHER'; // claimed by another group meanwhile: not claimable
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, (60 - Number(id.slice(1, -2))) % 7)); // later candidates often finish first
        running--;
        return claim(gid, id);
      },
    };
    // One candidate not claimable any more is left out; the others keep their order.
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    expect(most).toBe(CLAIMS_AT_ONCE);
    const expected = writes.map((t) => BigInt(t.token_id)).filter((id) => id !== 30n);
    expect(w.signed[0]!.tokenIds).toEqual(expected);
    expect(w.groups.get(w.checks[0]!.group)!.members).toEqual(expected.map((id) => `b${id}-1`));
  });

  it('settling beside the writer settles each member once: checks racing each other, member redeliveries and a new group', async () => {
    const w = world([write(1), write(2)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const first = w.checks[0]!.group;
    w.mineBlock();
    // The table's conditioned settlement (the write CONFIRMED only while it is not; a mint's batch
    // DELIVERED and its payout requested only by the update that applied): effects applied once.
    const applied: string[] = [];
    const calls: string[] = [];
    w.deps.written = async (t, hash) => {
      calls.push(t.ledger_tx_id);
      await new Promise((resolve) => setImmediate(resolve));
      const row = w.txs.get(t.ledger_tx_id)!;
      if (row.status === 'CONFIRMED') return; // ConditionExpression failed: nothing changed
      row.status = 'CONFIRMED';
      applied.push(`${t.ledger_tx_id}@${hash}`);
    };
    w.txs.set('b3-1', write(3));
    await Promise.all([
      checkSentGroup(w.deps, first, 10),
      checkSentGroup(w.deps, first, 10), // the same check handed out twice
      landInGroup(w.deps, { ...w.txs.get('b1-1')! }, 10_000), // the sender's message redelivered
      landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000),
      landInGroup(w.deps, w.txs.get('b3-1')!, 10_000), // a new group formed meanwhile
    ]);
    const minedHash = hashOf(w.signed[0]!.raw);
    expect(applied.sort()).toEqual([`b1-1@${minedHash}`, `b2-1@${minedHash}`]);
    expect(calls.every((id) => id !== 'b3-1')).toBe(true);
    expect(w.groups.get(first)!.status).toBe('SETTLED');
    expect(w.signed.map((s) => s.tokenIds)).toEqual([[1n, 2n], [3n]]);
  });

  it('a group abandoned by a receipt check while the writer forms a group: every write is signed in one live group, minted once', async () => {
    const w = world([write(1), write(2)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    const first = w.checks[0]!.group;
    w.chain.mempool.clear();
    w.chain.mined = 1; // its nonce taken by another transaction: the check abandons it, releasing b1 and b2
    w.txs.set('b3-1', write(3));
    w.deps.now = () => new Date('2026-01-01T00:02:00Z');
    await Promise.all([checkSentGroup(w.deps, first, 10), landInGroup(w.deps, w.txs.get('b3-1')!, 10_000)]);
    // The writes released after the new group took its candidates are grouped anew by their own messages.
    w.deps.now = () => new Date('2026-01-01T00:03:00Z');
    for (const id of ['b1-1', 'b2-1']) await landInGroup(w.deps, { ...w.txs.get(id)! }, 10_000);
    const live = w.signed.slice(1).flatMap((s) => s.tokenIds);
    expect(live.sort()).toEqual([1n, 2n, 3n]);
    w.mineBlock();
    for (const c of [...w.checks]) await checkSentGroup(w.deps, c.group, 10);
    expect(w.written.map(([id]) => id).sort()).toEqual(['b1-1', 'b2-1', 'b3-1']);
    expect(w.groups.get(first)!.status).toBe('SETTLED');
  });
});

describe('pipelined batched writer: groups keep leaving once a block while members’ messages queue', () => {
  it('a member’s delivery forms the next group with everything pending once a block has passed since the last one', async () => {
    const w = world([write(1), write(2)]);
    w.deps.pace = { lastLookMs: {} };
    let clock = Date.parse('2026-01-01T00:01:00Z');
    w.deps.now = () => new Date(clock);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000); // G1 = [1, 2], sent at block 100
    w.txs.set('b3-1', write(3));
    w.txs.set('b4-1', write(4));
    // Within the block: the member's delivery ends at once, nothing formed.
    await landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000);
    expect(w.signed).toHaveLength(1);
    // A block later, the next member delivery (here the same message redelivered) forms the next group after G1's block.
    clock += FORM_AHEAD_AFTER_MS;
    w.chain.onWait = () => w.mineBlock();
    await landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000);
    expect(w.signed.map((s) => s.tokenIds)).toEqual([
      [1n, 2n],
      [3n, 4n],
    ]);
    // The writes' own messages then end at once; nothing pending: the next look comes a block later, and finds nothing.
    await landInGroup(w.deps, { ...w.txs.get('b3-1')! }, 10_000);
    clock += FORM_AHEAD_AFTER_MS;
    await landInGroup(w.deps, { ...w.txs.get('b4-1')! }, 10_000);
    expect(w.signed).toHaveLength(2);
  });

  it('a write that cannot be encoded found ahead does not fail the member’s delivery: its own message deals with it', async () => {
    const w = world([write(1), write(2)]);
    w.deps.pace = { lastLookMs: {} };
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    w.txs.set('b3-1', { ...write(3), token_id: 'not-a-number' });
    w.deps.ledger = {
      ...w.deps.ledger,
      batchCallError: async (call) => (call.records.some((r) => r.tokenId < 0n) ? new RangeError('bad id') : undefined),
    };
    w.deps.now = () => new Date('2026-01-01T00:01:05Z');
    const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      await landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000);
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/not formed ahead/), expect.objectContaining({ kind: 'MINT' }));
    } finally {
      warn.mockRestore();
    }
    expect(w.signed).toHaveLength(1);
  });
});
