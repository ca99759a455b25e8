import { FORM_AHEAD_AFTER_MS, FORM_AHEAD_ROUNDS } from '../../shared/domain/ledger-batching';
import { logger } from '../../shared/runtime/logger';
import type { BatchWriterDeps } from '../../shared/use-cases/ledger-batch-deps';
import { formAheadEach, landInGroup } from '../../shared/use-cases/ledger-batch-writer';
import { checkSentGroup } from '../../shared/use-cases/ledger-receipt-step';
import { hashOf, world, write } from './support/ledger-pipeline-world';

/**
 * The pipelined batched writer at block speed (docs/ledger.md#the-pipelined-writer): the writer's
 * path kept short (members end at once, claims concurrent, one group of a kind per block, groups
 * formed ahead) and settling beside it, against the in-memory table and on-demand chain of
 * ./support/ledger-pipeline-world.ts.
 */

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
    expect(reads.groups).toBe(0); // neither the group as created nor as sealed is read back
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

  it('at most one group of a kind per block: the next is claimed at once and signed after the last one’s block; what came meanwhile waits for the one after', async () => {
    const w = world([write(1)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000); // sent at block 100, heading for 101
    w.txs.set('b2-1', write(2));
    w.txs.set('b4-1', write(4, 'TRACE_STAGE'));
    // Another kind does not wait: its transaction may share the block.
    await landInGroup(w.deps, w.txs.get('b4-1')!, 10_000);
    expect(w.chain.waits).toEqual([]);
    // A mint group waits for the last mint group's receipt before it is signed (the wait beside its
    // claims and sealing, its gas estimated meanwhile); a write committed during the wait is left
    // for the next group.
    w.chain.onWait = () => {
      expect(w.groups.get(`MINT-${w.deps.now().getTime()}-b2-1`)).toMatchObject({ candidates: ['b2-1'] });
      expect(w.signed).toHaveLength(2);
      w.txs.set('b3-1', write(3));
      w.mineBlock();
    };
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10_000);
    expect(w.estimates).toEqual([1, 1, 1]);
    expect(w.chain.waits).toEqual([hashOf(w.signed[0]!.raw)]);
    expect(w.signed.map((s) => [s.kind, s.tokenIds])).toEqual([
      ['MINT', [1n]],
      ['TRACE_STAGE', [4n]],
      ['MINT', [2n]],
    ]);
    expect(w.txs.get('b3-1')!.group_id).toBeUndefined();
    // Signed with the estimate made ahead and its margin (10,000 gas a record here, + 20 %).
    expect(w.signed.map((x) => x.gas)).toEqual([12_000n, 12_000n, 12_000n]);
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

  it('the wait for the last group’s block runs beside the next group’s claims: claims that end only once the wait has begun still land', async () => {
    const w = world([write(1)]);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000); // sent, heading for the next block
    w.txs.set('b2-1', write(2));
    let waitBegun!: () => void;
    const begun = new Promise<void>((resolve) => {
      waitBegun = resolve;
    });
    w.chain.onWait = () => {
      waitBegun();
      w.mineBlock();
    };
    const claimAll = w.deps.groups.claimAll.bind(w.deps.groups);
    const order: string[] = [];
    w.deps.groups = {
      ...w.deps.groups,
      claimAll: async (gid, ids) => {
        // Held until the wait has begun (one after the other, this would never end: the race fails it).
        const held = await Promise.race([begun.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1_000))]);
        order.push(held ? 'claimed after the wait began' : 'claimed alone');
        // The new group's gas is estimated over its candidates beside the claims, not after them.
        order.push(`estimates so far: ${w.estimates.length}`);
        return claimAll(gid, ids);
      },
    };
    await landInGroup(w.deps, w.txs.get('b2-1')!, 10_000);
    expect(order).toEqual(['claimed after the wait began', 'estimates so far: 2']);
    expect(w.signed.map((s) => s.tokenIds)).toEqual([[1n], [2n]]);
    const blockOf = (i: number) => w.chain.receipts.get(hashOf(w.signed[i]!.raw))?.block;
    w.mineBlock();
    expect(blockOf(1)).toBe(blockOf(0)! + 1);
  });

  it('a write claimed for a group whose item was never stored (a crash while it was being stored) is released and grouped anew by its own message', async () => {
    const w = world([write(1), write(2)]);
    w.txs.get('b1-1')!.group_id = 'MINT-1767225600000-b1-1'; // claimed; the group's item never written
    w.txs.get('b2-1')!.group_id = 'MINT-1767225600000-b1-1';
    await landInGroup(w.deps, { ...w.txs.get('b1-1')! }, 10_000);
    expect(w.signed.map((s) => s.tokenIds)).toEqual([[1n]]);
    await landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000);
    expect(w.signed.map((s) => s.tokenIds)).toEqual([[1n], [2n]]);
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

  it("a group's candidates are claimed in one call; one not claimable any more is left out and the members keep the candidates' order", async () => {
    const writes = Array.from({ length: 60 }, (_, i) => ({
      ...write(i + 1),
      created_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
    }));
    const w = world(writes);
    const calls: number[] = [];
    const claimAll = w.deps.groups.claimAll;
    w.deps.groups = {
      ...w.deps.groups,
      claimAll: async (gid, ids) => {
        calls.push(ids.length);
        w.txs.get('b30-1')!.group_id = 'ANOTHER'; // claimed by another group meanwhile: not claimable
        return claimAll(gid, ids);
      },
    };
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    expect(calls).toEqual([60]);
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
  it('a member’s delivery right after a group was sent forms the next group with everything pending; with nothing pending, the next look comes FORM_AHEAD_AFTER_MS later', async () => {
    const w = world([write(1), write(2)]);
    w.deps.pace = { lastLookMs: {} };
    let clock = Date.parse('2026-01-01T00:01:00Z');
    w.deps.now = () => new Date(clock);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000); // G1 = [1, 2], sent at block 100
    w.txs.set('b3-1', write(3));
    w.txs.set('b4-1', write(4));
    // At once, within the block: the next member delivery forms G2 with the writes accepted
    // meanwhile, claimed now and signed after G1's block; the pending writes read once for it.
    w.chain.onWait = () => w.mineBlock();
    const pendingOfKind = w.deps.groups.pendingOfKind.bind(w.deps.groups);
    let pendingReads = 0;
    w.deps.groups = {
      ...w.deps.groups,
      pendingOfKind: (kind, limit) => {
        pendingReads++;
        return pendingOfKind(kind, limit);
      },
    };
    await landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000);
    expect(pendingReads).toBe(2); // one for each kind: the mints found and grouped, no stage record pending
    expect(w.signed.map((s) => s.tokenIds)).toEqual([
      [1n, 2n],
      [3n, 4n],
    ]);
    expect(w.signed[1]!.nonce).toBe(1);
    // The writes' own messages then end at once; the look after G2's send finds nothing pending, so
    // a write accepted now waits for the next look, FORM_AHEAD_AFTER_MS later.
    await landInGroup(w.deps, { ...w.txs.get('b3-1')! }, 10_000);
    w.txs.set('b5-1', write(5));
    await landInGroup(w.deps, { ...w.txs.get('b4-1')! }, 10_000);
    expect(w.signed).toHaveLength(2);
    clock += FORM_AHEAD_AFTER_MS;
    await landInGroup(w.deps, { ...w.txs.get('b4-1')! }, 10_000);
    expect(w.signed.map((s) => s.tokenIds)).toEqual([[1n, 2n], [3n, 4n], [5n]]);
  });

  it('a mint member’s delivery also forms the next group of stage records accepted meanwhile (their messages queue behind the mints’)', async () => {
    const w = world([write(1), write(2)]);
    w.deps.pace = { lastLookMs: {} };
    let clock = Date.parse('2026-01-01T00:01:00Z');
    w.deps.now = () => new Date(clock);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000); // the mints [1, 2], sent
    w.txs.set('b5-1', write(5, 'TRACE_STAGE'));
    w.txs.set('b6-1', write(6, 'TRACE_STAGE'));
    clock += FORM_AHEAD_AFTER_MS;
    await landInGroup(w.deps, { ...w.txs.get('b2-1')! }, 10_000); // a mint member's message
    expect(w.signed.map((x) => [x.kind, x.tokenIds])).toEqual([
      ['MINT', [1n, 2n]],
      ['TRACE_STAGE', [5n, 6n]],
    ]);
  });

  it(`while writes keep arriving, one member’s delivery forms up to ${FORM_AHEAD_ROUNDS} groups one after the other, each signed after the last one’s block`, async () => {
    const w = world([write(1)]);
    w.deps.pace = { lastLookMs: {} };
    let clock = Date.parse('2026-01-01T00:01:00Z');
    w.deps.now = () => new Date(clock);
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000); // G1 = [1], sent
    w.txs.set('b2-1', write(2));
    let next = 3;
    // During each wait for the last group's block, one more write is accepted, then the block comes.
    w.chain.onWait = () => {
      w.txs.set(`b${next}-1`, write(next));
      next++;
      w.mineBlock();
    };
    clock += FORM_AHEAD_AFTER_MS;
    // 12 s left in the invocation: one round only (a second needs NEXT_GROUP_WAIT_MS and LEDGER_MESSAGE_MARGIN_MS, 13 s).
    await formAheadEach(w.deps, () => 12_000);
    expect(w.signed.map((x) => x.tokenIds)).toEqual([[1n], [2n]]);
    clock += FORM_AHEAD_AFTER_MS;
    // With a minute left: round after round while each lands a group.
    await formAheadEach(w.deps, () => 60_000);
    expect(w.signed.map((x) => x.tokenIds)).toEqual([[1n], [2n], ...Array.from({ length: FORM_AHEAD_ROUNDS }, (_, k) => [BigInt(k + 3)])]);
    // Each was signed after the block of the one before: one mint transaction a block.
    const blocks = w.signed.map((x) => w.chain.receipts.get(hashOf(x.raw))?.block);
    expect(new Set(blocks.filter((b) => b !== undefined)).size).toBe(blocks.filter((b) => b !== undefined).length);
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

  it('a new group’s pending records are checked together, one by one only when that fails', async () => {
    const w = world([write(1), write(2), write(3), write(4), write(5)]);
    const checked: number[] = [];
    w.deps.ledger = {
      ...w.deps.ledger,
      batchCallError: async (call) => {
        checked.push(call.records.length);
        return undefined;
      },
    };
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    // All encodable: the write alone, then the four others in one check.
    expect(checked).toEqual([1, 4]);
    expect(w.signed.map((s) => s.tokenIds)).toEqual([[1n, 2n, 3n, 4n, 5n]]);
  });

  it('a pending record that cannot be built is still found and left out of the new group', async () => {
    const w = world([write(1), write(2), write(3)]);
    const checked: number[] = [];
    w.deps.ledger = {
      ...w.deps.ledger,
      batchCallError: async (call) => {
        checked.push(call.records.length);
        return call.records.some((r) => r.tokenId === 2n) ? new RangeError('bad record') : undefined;
      },
    };
    const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
      expect(checked).toEqual([1, 2, 1, 1]);
      expect(warn).toHaveBeenCalledWith(
        expect.stringMatching(/left out of a batched transaction/),
        expect.objectContaining({ ledger_tx_id: 'b2-1' }),
      );
      expect(w.signed.map((s) => s.tokenIds)).toEqual([[1n, 3n]]);
    } finally {
      warn.mockRestore();
    }
  });
});
