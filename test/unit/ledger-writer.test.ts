import type { AuditAnchorStore } from '../../shared/domain/ports/audit';
import type { Ledger, LedgerWriteParking } from '../../shared/domain/ports/ledger';
import type { PayoutRequestMessage } from '../../shared/domain/ports/payouts';
import type { AnchorLedgerTx, LedgerTx } from '../../shared/domain/records';
import { LedgerRefusedError, LedgerTransportError, LedgerUnavailableError } from '../../shared/domain/errors';
import { anchorWriteOutcomes } from '../../shared/use-cases/anchor-settlement';
import { buildAnchorTree } from '../../shared/domain/anchor-tree';
import { landOrPark, writeLedgerTx, type LedgerWriterDeps } from '../../shared/use-cases/ledger-writer';
import { aLedgerTx, fakeBatchStore, fakeCustodyStore, fakeLedger, fakeWorkQueue } from './support/fakes';

/** The single ledger writer signs a trace-log write once and re-sends that same transaction. */

const base = aLedgerTx({
  ledger_tx_id: 'BATCH-2026-000001-3',
  kind: 'TRACE_STAGE',
  batch_id: 'BATCH-2026-000001',
  token_id: '2026000000000001',
  stage: 'GRADED',
  evidence_cid: 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi',
  audit_hash: 'ab'.repeat(32),
  audit_sequence_number: 3,
  history_index: 1,
  status: 'PENDING',
  created_at: '2026-11-22T10:00:00.000Z',
});

/** The same write, signed and kept before (its broadcast may or may not have gone out). */
const kept = aLedgerTx({ ...base, raw_tx: '0xf86b01', tx_hash: '0x1111', nonce: 7, status: 'SENT' });

function fakes(tx: LedgerTx, receipt: 'success' | 'reverted' | null, failBroadcast = false) {
  const calls: string[] = [];
  let stored: LedgerTx = { ...tx };
  const deps: LedgerWriterDeps = {
    custody: fakeCustodyStore({
      getLedgerTx: async () => stored,
      keepSigned: async (_id, s) => {
        calls.push(`keep ${s.txHash} n${s.nonce}`);
        stored = { ...stored, raw_tx: s.rawTx, tx_hash: s.txHash, nonce: s.nonce, status: 'SENT' };
      },
      confirm: async (_t, hash) => {
        calls.push(`confirm ${hash}`);
      },
    }),
    ledger: fakeLedger({
      recordStageKept: async (input, keep) => {
        calls.push(`sign ${input.stage} ${input.auditHash.slice(0, 6)}`);
        await keep({ rawTx: '0xf86b01', txHash: '0x1111', nonce: 7 });
        if (failBroadcast) throw new Error('broadcast failed');
        calls.push('broadcast 0x1111');
        return { txHash: '0x1111' };
      },
      rebroadcast: async (raw, hash) => {
        calls.push(`rebroadcast ${raw} ${hash}`);
      },
      waitForReceipt: async () => (receipt ? { status: receipt, blockNumber: 12n, txHash: '0x1111' } : null),
    }),
    batches: fakeBatchStore(),
    payoutQueue: fakeWorkQueue<PayoutRequestMessage>('payoutQueue', {
      send: async () => {
        calls.push('payout requested');
      },
    }),
    now: () => new Date('2026-11-22T10:00:01.000Z'),
  };
  return { deps, calls };
}

describe('writeLedgerTx', () => {
  it('signs a new write once, keeps it before broadcasting, and confirms it when mined', async () => {
    const { deps, calls } = fakes(base, 'success');
    await writeLedgerTx(deps, base.ledger_tx_id, 1000);
    expect(calls).toEqual(['sign GRADED 0xabab', 'keep 0x1111 n7', 'broadcast 0x1111', 'confirm 0x1111']);
  });

  it('re-sends the kept signed transaction after a failed broadcast instead of signing a second one', async () => {
    const first = fakes(base, null, true);
    await expect(writeLedgerTx(first.deps, base.ledger_tx_id, 1000)).rejects.toThrow('broadcast failed');
    const retry = fakes(kept, 'success');
    await writeLedgerTx(retry.deps, base.ledger_tx_id, 1000);
    expect(retry.calls).toEqual(['rebroadcast 0xf86b01 0x1111', 'confirm 0x1111']);
  });

  it('throws while the transaction is not mined, so the queue retries it', async () => {
    const { deps } = fakes(kept, null);
    await expect(writeLedgerTx(deps, base.ledger_tx_id, 10)).rejects.toThrow('not mined yet');
  });

  it('does nothing for a write that is already confirmed', async () => {
    const { deps, calls } = fakes({ ...base, status: 'CONFIRMED', tx_hash: '0x1111' }, 'success');
    await writeLedgerTx(deps, base.ledger_tx_id, 10);
    expect(calls).toEqual([]);
  });
});

describe('writeLedgerTx: periodic anchors (docs/api/anchoring.md#anchoring-of-the-audit-log)', () => {
  const anchorTx: AnchorLedgerTx = {
    ledger_tx_id: 'ANCHOR-20261122T100000-1a2b3c4d',
    kind: 'ANCHOR',
    anchor_id: 'ANCHOR-20261122T100000-1a2b3c4d',
    root: `0x${'1a'.repeat(32)}`,
    head_count: 1000,
    status: 'PENDING',
    created_at: '2026-11-22T10:00:00.000Z',
  };
  function anchorFakes(receipt: 'success' | 'reverted') {
    const { deps, calls } = fakes(anchorTx, receipt);
    deps.ledger.anchorAuditRootKept = async (input, keep) => {
      calls.push(`sign anchor ${input.root.slice(0, 6)} ${input.headCount}`);
      await keep({ rawTx: '0xf86b02', txHash: '0x2222', nonce: 8 });
      return { txHash: '0x2222' };
    };
    deps.custody.markFailed = async (id, reason) => {
      calls.push(`failed ${id} ${reason}`);
    };
    deps.anchors = {
      mined: async (tx, hash, block) => {
        calls.push(`anchor mined ${tx.anchor_id} ${hash} ${block}`);
      },
      refused: async (tx, reason) => {
        calls.push(`anchor refused ${tx.anchor_id} ${reason}`);
      },
      settleIfAnchored: async () => null,
    };
    return { deps, calls };
  }

  it('signs AuditAnchor.anchor(root, headCount) once, settles the anchor when mined, then confirms the write', async () => {
    const { deps, calls } = anchorFakes('success');
    await writeLedgerTx(deps, anchorTx.ledger_tx_id, 1000);
    expect(calls).toEqual([
      'sign anchor 0x1a1a 1000',
      'keep 0x2222 n8',
      `anchor mined ${anchorTx.ledger_tx_id} 0x2222 12`,
      'confirm 0x2222',
    ]);
  });

  it('abandons the anchor and fails the write when the chain refuses it', async () => {
    const { deps, calls } = anchorFakes('reverted');
    deps.custody.confirm = async () => {
      throw new Error('a refused anchor is not confirmed');
    };
    await writeLedgerTx(deps, anchorTx.ledger_tx_id, 1000);
    expect(calls.slice(2)).toEqual([
      `anchor refused ${anchorTx.ledger_tx_id} anchor transaction 0x2222 (root ${anchorTx.root}) reverted`,
      `failed ${anchorTx.ledger_tx_id} anchor transaction 0x2222 (root ${anchorTx.root}) reverted`,
    ]);
  });

  it('refuses to send an anchor when the writer has no anchoring configured (nothing signed)', async () => {
    const { deps, calls } = anchorFakes('success');
    delete deps.anchors;
    await expect(writeLedgerTx(deps, anchorTx.ledger_tx_id, 1000)).rejects.toThrow(/no anchoring configured/);
    expect(calls).toEqual([]);
  });
});

describe('writeLedgerTx: an anchor of a root the chain already holds', () => {
  const tree = buildAnchorTree([{ batch_id: 'BATCH-2026-000021', sequence_number: 1, hash: '2b'.repeat(32) }]);
  const proof = [...tree.proofs.values()][0]!;
  const anchorTx: AnchorLedgerTx = {
    ledger_tx_id: 'ANCHOR-20261122T100500-2b3c4d5e',
    kind: 'ANCHOR',
    anchor_id: 'ANCHOR-20261122T100500-2b3c4d5e',
    root: tree.root,
    head_count: 1,
    status: 'PENDING',
    created_at: '2026-11-22T10:05:00.000Z',
  };
  const r6 = anchorTx.root.slice(0, 6);
  const onChain = { block_number: 77, tx_hash: `0x${'77'.repeat(32)}` };

  /** The writer with the real anchor settlement over a store that records what it is told, and a chain that holds `root` from `heldFrom` on. */
  function setUp(sign: () => Promise<{ txHash: `0x${string}` }>, heldFrom: 'start' | 'after-sign') {
    const { deps, calls } = fakes(anchorTx, 'success');
    let signed = false;
    deps.ledger.anchorAuditRootKept = async () => {
      signed = true;
      calls.push('sign anchor');
      return sign();
    };
    deps.custody.confirm = async (_t, hash, block) => {
      calls.push(`confirm ${hash} ${block}`);
    };
    deps.custody.markFailed = async (id, reason) => {
      calls.push(`failed ${id} ${reason}`);
    };
    const record = {
      anchor_id: anchorTx.anchor_id,
      root: anchorTx.root,
      heads: [{ batch_id: proof.head.batch_id, sequence_number: proof.head.sequence_number, hash: proof.head.hash, proof: proof.proof }],
      marker_ids: ['BATCH-2026-000021#1'],
      status: 'OPEN' as const,
      created_at: anchorTx.created_at,
    };
    const unexpected = async (): Promise<never> => {
      throw new Error('not expected here');
    };
    const anchors: AuditAnchorStore = {
      pendingMarkers: unexpected,
      heads: unexpected,
      anchoredHeads: unexpected,
      clearStaleMarkers: unexpected,
      openAnchor: unexpected,
      open: unexpected,
      ofBatch: unexpected,
      get: async () => record,
      finish: async (_a, _b, mined) => {
        calls.push(`anchor finished ${mined.tx_hash.slice(0, 6)} ${mined.block_number}`);
      },
      abandon: async (_id, reason) => {
        calls.push(`anchor abandoned ${reason}`);
      },
    };
    deps.anchors = anchorWriteOutcomes({
      anchors,
      now: deps.now,
      anchoredRoot: async (root) => {
        calls.push(`anchoredAtBlock ${root.slice(0, 6)}`);
        return heldFrom === 'start' || signed ? onChain : null;
      },
    });
    return { deps, calls };
  }

  it('settles with the block that holds the root, signing nothing', async () => {
    const { deps, calls } = setUp(async () => {
      throw new Error('must not sign');
    }, 'start');
    await writeLedgerTx(deps, anchorTx.ledger_tx_id, 1000);
    expect(calls).toEqual([`anchoredAtBlock ${r6}`, 'anchor finished 0x7777 77', `confirm ${onChain.tx_hash} 77`]);
  });

  it('a revert AlreadyAnchored found in gas estimation settles the anchor with that block, not as an error', async () => {
    const { deps, calls } = setUp(async () => {
      throw new LedgerRefusedError('anchor', 'AlreadyAnchored');
    }, 'after-sign');
    await writeLedgerTx(deps, anchorTx.ledger_tx_id, 1000);
    expect(calls).toEqual([
      `anchoredAtBlock ${r6}`,
      'sign anchor',
      `anchoredAtBlock ${r6}`,
      'anchor finished 0x7777 77',
      `confirm ${onChain.tx_hash} 77`,
    ]);
  });

  it('any other revert in estimation abandons the anchor and fails the write at once (no retry)', async () => {
    const { deps, calls } = setUp(async () => {
      throw new LedgerRefusedError('anchor', 'AccessControlUnauthorizedAccount');
    }, 'start');
    (deps.anchors as { settleIfAnchored: unknown }).settleIfAnchored = async () => null;
    await writeLedgerTx(deps, anchorTx.ledger_tx_id, 1000);
    expect(calls).toEqual([
      'sign anchor',
      'anchor abandoned The ledger refused anchor: AccessControlUnauthorizedAccount',
      `failed ${anchorTx.ledger_tx_id} The ledger refused anchor: AccessControlUnauthorizedAccount`,
    ]);
  });
});

describe('one refused ledger write never stalls the ledger (the FIFO queue, one message group)', () => {
  const stage = aLedgerTx({ ...base, ledger_tx_id: 'BATCH-2026-000031-2', batch_id: 'BATCH-2026-000031', job_id: 'JOB-stage' });
  const mint = aLedgerTx({
    ledger_tx_id: 'BATCH-2026-000032-1',
    kind: 'MINT',
    batch_id: 'BATCH-2026-000032',
    token_id: '2026000000000032',
    stage: 'DELIVERED',
    audit_hash: 'cd'.repeat(32),
    audit_sequence_number: 1,
    status: 'PENDING',
    created_at: '2026-11-22T10:00:02.000Z',
    job_id: 'JOB-mint',
  });

  /** Delivers the queue's messages in order, the head again while it fails (at most `deliveries` in all); returns what landed. */
  async function drain(writes: LedgerTx[], ledger: Partial<Ledger>, deliveries = 20) {
    const stored = new Map(writes.map((w) => [w.ledger_tx_id, { ...w }]));
    const calls: string[] = [];
    const deps: LedgerWriterDeps & { parking: Pick<LedgerWriteParking, 'recordFailedAttempt' | 'park'> } = {
      custody: fakeCustodyStore({
        getLedgerTx: async (id) => stored.get(id) ?? null,
        keepSigned: async (id, s) => {
          Object.assign(stored.get(id)!, { raw_tx: s.rawTx, tx_hash: s.txHash, status: 'SENT' });
        },
        confirm: async (t, hash) => {
          calls.push(`confirmed ${t.ledger_tx_id}`);
          Object.assign(stored.get(t.ledger_tx_id)!, { status: 'CONFIRMED', tx_hash: hash });
        },
        markFailed: async (id, reason) => {
          calls.push(`failed ${id}: ${reason}`);
          Object.assign(stored.get(id)!, { status: 'FAILED', failure: reason });
        },
      }),
      ledger: fakeLedger({
        waitForReceipt: async (hash) => ({ status: 'success', blockNumber: 5n, txHash: hash }),
        rebroadcast: async () => undefined,
        ...ledger,
      }),
      batches: fakeBatchStore({
        getAny: async (id) =>
          ({
            batch_id: id,
            mint_status: 'PENDING',
            pending_audit_entry: { sequence_number: 1, at: '2026-11-22T10:00:02.000Z', actor: 'u' },
          }) as never,
        confirmMint: async () => {
          calls.push('batch DELIVERED');
          return true;
        },
        get: async (id) => ({ batch_id: id }) as never,
      }),
      payoutQueue: fakeWorkQueue<PayoutRequestMessage>('payoutQueue', { send: async () => undefined }),
      now: () => new Date('2026-11-22T10:00:03.000Z'),
      parking: {
        recordFailedAttempt: async (id, reason) => {
          const w = stored.get(id)!;
          w.attempts = (w.attempts ?? 0) + 1;
          w.last_error = reason;
          return w.attempts;
        },
        park: async (id, reason) => {
          calls.push(`parked ${id}`);
          Object.assign(stored.get(id)!, { status: 'FAILED', failure: reason, parked_at: 'now' });
          return true;
        },
      },
    };
    const queue = writes.map((w) => w.ledger_tx_id);
    for (let n = 0; n < deliveries && queue.length > 0; n++) {
      try {
        await landOrPark(deps, queue[0]!, { receiptWaitMs: 10, maxAttempts: 3 });
        queue.shift();
      } catch {
        // left at the head of its message group: delivered again
      }
    }
    return { calls, stored, queue };
  }

  const mintOk: Partial<Ledger> = {
    mintBatchTokenKept: async (_i, keep) => {
      await keep({ rawTx: '0xaa', txHash: '0x3333', nonce: 9 });
      return { txHash: '0x3333' };
    },
  };

  it('a stage record whose simulation reverts is refused at once (its job FAILED), and the next mint lands', async () => {
    const { calls, stored, queue } = await drain([stage, mint], {
      ...mintOk,
      recordStageKept: async () => {
        throw new LedgerRefusedError('recordStage', 'AccessControlUnauthorizedAccount');
      },
    });
    expect(queue).toEqual([]);
    expect(calls).toEqual([
      `failed ${stage.ledger_tx_id}: The ledger refused recordStage: AccessControlUnauthorizedAccount`,
      'batch DELIVERED',
      `confirmed ${mint.ledger_tx_id}`,
    ]);
    expect(stored.get(stage.ledger_tx_id)).toMatchObject({ status: 'FAILED' });
    expect(stored.get(stage.ledger_tx_id)!.parked_at).toBeUndefined();
  });

  it('a trace-log transaction mined with status reverted is refused the same way (not retried forever)', async () => {
    const { calls, queue } = await drain([stage, mint], {
      ...mintOk,
      recordStageKept: async (_i, keep) => {
        await keep({ rawTx: '0xbb', txHash: '0x4444', nonce: 8 });
        return { txHash: '0x4444' };
      },
      waitForReceipt: async (hash) => ({ status: hash === '0x4444' ? 'reverted' : 'success', blockNumber: 5n, txHash: hash }),
    });
    expect(queue).toEqual([]);
    expect(calls[0]).toBe(`failed ${stage.ledger_tx_id}: trace-log transaction 0x4444 reverted`);
    expect(calls.slice(1)).toEqual(['batch DELIVERED', `confirmed ${mint.ledger_tx_id}`]);
  });

  it('a write that keeps failing (not a refusal) is parked after the allowed attempts, and the mint behind it lands', async () => {
    const { calls, stored, queue } = await drain([stage, mint], {
      ...mintOk,
      recordStageKept: async () => {
        throw new LedgerUnavailableError('Ledger RPC failed during recordStage: nonce too low');
      },
    });
    expect(queue).toEqual([]);
    expect(calls).toEqual([`parked ${stage.ledger_tx_id}`, 'batch DELIVERED', `confirmed ${mint.ledger_tx_id}`]);
    expect(stored.get(stage.ledger_tx_id)).toMatchObject({
      status: 'FAILED',
      attempts: 3,
      failure: expect.stringContaining('parked after 3 failed attempts: Ledger RPC failed during recordStage: nonce too low'),
    });
  });

  it('transport failures of the ledger endpoint are retried without counting: an outage parks nothing', async () => {
    const { calls, stored, queue } = await drain(
      [stage, mint],
      {
        ...mintOk,
        recordStageKept: async () => {
          throw new LedgerTransportError('Ledger RPC unreachable during recordStage: The request took too long to respond.');
        },
      },
      10,
    );
    expect(queue).toEqual([stage.ledger_tx_id, mint.ledger_tx_id]);
    expect(calls).toEqual([]);
    expect(stored.get(stage.ledger_tx_id)!.attempts).toBeUndefined();
  });
});
