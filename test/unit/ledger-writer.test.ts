import type { PayoutRequestMessage } from '../../shared/domain/ports';
import type { AnchorLedgerTx, LedgerTx } from '../../shared/domain/records';
import { writeLedgerTx, type LedgerWriterDeps } from '../../shared/use-cases/ledger-writer';
import { aLedgerTx, fakeBatchStore, fakeCustodyStore, fakeLedger, fakeWorkQueue } from './support/fakes';

/** The single ledger writer signs a trace-log write once and re-sends that same transaction. */

const base = aLedgerTx({
  ledger_tx_id: 'BATCH-2026-000001-3', kind: 'TRACE_STAGE', batch_id: 'BATCH-2026-000001', token_id: '2026000000000001', stage: 'GRADED',
  evidence_cid: 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi', audit_hash: 'ab'.repeat(32), audit_sequence_number: 3, history_index: 1,
  status: 'PENDING', created_at: '2026-11-22T10:00:00.000Z',
});

/** The same write, signed and kept before (its broadcast may or may not have gone out). */
const kept = aLedgerTx({ ...base, raw_tx: '0xf86b01', tx_hash: '0x1111', nonce: 7, status: 'SENT' });

function fakes(tx: LedgerTx, receipt: 'success' | 'reverted' | null, failBroadcast = false) {
  const calls: string[] = [];
  let stored: LedgerTx = { ...tx };
  const deps: LedgerWriterDeps = {
    custody: fakeCustodyStore({
      getLedgerTx: async () => stored,
      keepSigned: async (_id, s) => { calls.push(`keep ${s.txHash} n${s.nonce}`); stored = { ...stored, raw_tx: s.rawTx, tx_hash: s.txHash, nonce: s.nonce, status: 'SENT' }; },
      confirm: async (_t, hash) => { calls.push(`confirm ${hash}`); },
    }),
    ledger: fakeLedger({
      recordStageKept: async (input, keep) => {
        calls.push(`sign ${input.stage} ${input.auditHash.slice(0, 6)}`);
        await keep({ rawTx: '0xf86b01', txHash: '0x1111', nonce: 7 });
        if (failBroadcast) throw new Error('broadcast failed');
        calls.push('broadcast 0x1111');
        return { txHash: '0x1111' };
      },
      rebroadcast: async (raw, hash) => { calls.push(`rebroadcast ${raw} ${hash}`); },
      waitForReceipt: async () => (receipt ? { status: receipt, blockNumber: 12n, txHash: '0x1111' } : null),
    }),
    batches: fakeBatchStore(),
    payoutQueue: fakeWorkQueue<PayoutRequestMessage>('payoutQueue', { send: async () => { calls.push('payout requested'); } }),
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

describe('writeLedgerTx: periodic anchors (decisions §13)', () => {
  const anchorTx: AnchorLedgerTx = { ledger_tx_id: 'ANCHOR-20261122T100000-1a2b3c4d', kind: 'ANCHOR', anchor_id: 'ANCHOR-20261122T100000-1a2b3c4d', root: `0x${'1a'.repeat(32)}`, head_count: 1000, status: 'PENDING', created_at: '2026-11-22T10:00:00.000Z' };
  function anchorFakes(receipt: 'success' | 'reverted') {
    const { deps, calls } = fakes(anchorTx, receipt);
    deps.ledger.anchorAuditRootKept = async (input, keep) => {
      calls.push(`sign anchor ${input.root.slice(0, 6)} ${input.headCount}`);
      await keep({ rawTx: '0xf86b02', txHash: '0x2222', nonce: 8 });
      return { txHash: '0x2222' };
    };
    deps.custody.markFailed = async (id, reason) => { calls.push(`failed ${id} ${reason}`); };
    deps.anchors = {
      mined: async (tx, hash, block) => { calls.push(`anchor mined ${tx.anchor_id} ${hash} ${block}`); },
      refused: async (tx, reason) => { calls.push(`anchor refused ${tx.anchor_id} ${reason}`); },
    };
    return { deps, calls };
  }

  it('signs AuditAnchor.anchor(root, headCount) once, settles the anchor when mined, then confirms the write', async () => {
    const { deps, calls } = anchorFakes('success');
    await writeLedgerTx(deps, anchorTx.ledger_tx_id, 1000);
    expect(calls).toEqual(['sign anchor 0x1a1a 1000', 'keep 0x2222 n8', `anchor mined ${anchorTx.ledger_tx_id} 0x2222 12`, 'confirm 0x2222']);
  });

  it('abandons the anchor and fails the write when the chain refuses it', async () => {
    const { deps, calls } = anchorFakes('reverted');
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
