import type { CustodyRepository, LedgerTx } from '../../shared/adapters/dynamodb/custody-repo';
import type { Hex, Ledger } from '../../shared/domain/ports';
import { writeLedgerTx } from '../../shared/use-cases/custody';

/** The single ledger writer signs a trace-log write once and re-sends that same transaction. */

const base: LedgerTx = {
  ledger_tx_id: 'BATCH-2026-000001-3', kind: 'TRACE_STAGE', batch_id: 'BATCH-2026-000001', token_id: '2026000000000001', stage: 'GRADED',
  evidence_cid: 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi', audit_hash: 'ab'.repeat(32), audit_sequence_number: 3, history_index: 1,
  status: 'PENDING', created_at: '2026-11-22T10:00:00.000Z',
};

function fakes(tx: LedgerTx, receipt: 'success' | 'reverted' | null, failBroadcast = false) {
  const calls: string[] = [];
  let stored = { ...tx };
  const custody = {
    getLedgerTx: async () => stored,
    keepSigned: async (_id: string, s: { rawTx: string; txHash: string; nonce: number }) => { calls.push(`keep ${s.txHash} n${s.nonce}`); stored = { ...stored, raw_tx: s.rawTx, tx_hash: s.txHash, nonce: s.nonce, status: 'SENT' }; },
    confirm: async (_t: LedgerTx, hash: string) => { calls.push(`confirm ${hash}`); },
  } as unknown as CustodyRepository;
  const ledger = {
    recordStageKept: async (input: { stage: string; auditHash: Hex }, keep: (s: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>) => {
      calls.push(`sign ${input.stage} ${input.auditHash.slice(0, 6)}`);
      await keep({ rawTx: '0xf86b01', txHash: '0x1111', nonce: 7 });
      if (failBroadcast) throw new Error('broadcast failed');
      calls.push('broadcast 0x1111');
      return { txHash: '0x1111' };
    },
    rebroadcast: async (raw: Hex, hash: Hex) => { calls.push(`rebroadcast ${raw} ${hash}`); },
    waitForReceipt: async () => (receipt ? { status: receipt, blockNumber: 12n, txHash: '0x1111' } : null),
  } as unknown as Ledger;
  const batches = {} as never;
  const payoutQueue = { send: async () => { calls.push('payout requested'); } };
  return { deps: { custody, ledger, batches, payoutQueue, now: () => new Date('2026-11-22T10:00:01.000Z') }, calls };
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
    const kept = { ...base, raw_tx: '0xf86b01', tx_hash: '0x1111', nonce: 7, status: 'SENT' as const };
    const retry = fakes(kept, 'success');
    await writeLedgerTx(retry.deps, base.ledger_tx_id, 1000);
    expect(retry.calls).toEqual(['rebroadcast 0xf86b01 0x1111', 'confirm 0x1111']);
  });

  it('throws while the transaction is not mined, so the queue retries it', async () => {
    const kept = { ...base, raw_tx: '0xf86b01', tx_hash: '0x1111', nonce: 7, status: 'SENT' as const };
    const { deps } = fakes(kept, null);
    await expect(writeLedgerTx(deps, base.ledger_tx_id, 10)).rejects.toThrow('not mined yet');
  });

  it('does nothing for a write that is already confirmed', async () => {
    const { deps, calls } = fakes({ ...base, status: 'CONFIRMED', tx_hash: '0x1111' }, 'success');
    await writeLedgerTx(deps, base.ledger_tx_id, 10);
    expect(calls).toEqual([]);
  });
});
