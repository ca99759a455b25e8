import type { PayoutRequestMessage } from '../../shared/domain/ports';
import type { LedgerTx } from '../../shared/domain/records';
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
