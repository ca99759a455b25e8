import { SETTLE_IN_DELIVERY_MAX_MEMBERS, STUCK_AFTER_BLOCKS } from '../../shared/domain/ledger-batching';
import { logger } from '../../shared/runtime/logger';
import { landInGroup } from '../../shared/use-cases/ledger-batch-writer';
import { checkSentGroup } from '../../shared/use-cases/ledger-receipt-step';
import { hashOf, world, write } from './support/ledger-pipeline-world';

/**
 * The pipelined batched writer (docs/ledger.md#the-pipelined-writer) against an in-memory table
 * and a chain that mines only when the test says so (./support/ledger-pipeline-world.ts).
 */

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

  it(`a group of more than SETTLE_IN_DELIVERY_MAX_MEMBERS (${SETTLE_IN_DELIVERY_MAX_MEMBERS}) found mined at once is settled by its receipt check, not by the delivery that sent it`, async () => {
    const n = SETTLE_IN_DELIVERY_MAX_MEMBERS + 1;
    const w = world(Array.from({ length: n }, (_, i) => write(i + 1)));
    w.chain.automine = true; // here: a send just before a block, mined by the time of the look-up
    await landInGroup(w.deps, w.txs.get('b1-1')!, 10_000);
    expect(w.signed.map((s) => s.tokenIds.length)).toEqual([n]);
    // The delivery ends with the group sent and its check queued; it settles nothing itself.
    expect(w.written).toEqual([]);
    expect(w.checks).toEqual([{ group: [...w.groups.keys()][0], key: 'sent' }]);
    await checkSentGroup(w.deps, w.checks[0]!.group, 10);
    expect(w.written).toHaveLength(n);
    expect([...w.groups.values()].map((g) => g.status)).toEqual(['SETTLED']);
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
