import { auditEntriesFor } from '../../shared/domain/audit-redaction';
import type { Caller } from '../../shared/domain/caller';
import type { AuditEntry } from '../../shared/domain/records';

const entry = (payload: Record<string, unknown>, seq = 1): AuditEntry => ({
  batch_id: 'BATCH-2026-000001',
  sequence_number: seq,
  message_id: `AUD-BATCH-2026-000001-${seq}`,
  type: 'PAYMENT_CONFIRMED',
  at: '2026-11-22T10:00:00.000Z',
  actor: 'payout-provider',
  payload,
  prev_hash: '0'.repeat(64),
  hash: 'a'.repeat(64),
});
const confirmed = entry({
  payment_id: 'PAY-2026-000001-01',
  reason: 'NET_COFFEE_PAYMENT',
  attempt: 1,
  provider_order_id: 'ord_1',
  amount_usd_micro: 318_000_000,
  amount_ugx: 1_180_900,
  exchange_rate: '3700.25',
  mobile_money_transaction_id: 'MM-77',
  settled_at: '2026-11-22T10:00:00Z',
  phone_last3: '456',
  nested: { settlement: [{ tx_hash: '0xabc', principal_usd_micro: 5 }] },
});
const stage = entry({ stage: 'DRIED', previous_stage: 'DELIVERED', token_id: '1', evidence_ipfs_cid: 'bafy' }, 2);

describe('auditEntriesFor: AGENT tokens see no money', () => {
  it('an AGENT reads payout entries without amounts, phone numbers and transaction ids, marked payload_redacted', () => {
    // Act
    const [p, s] = auditEntriesFor({ sub: 'a', role: 'AGENT', cooperative_id: 'C', duties: [] }, [confirmed, stage]);

    // Assess
    expect(p!.payload).toEqual({
      payment_id: 'PAY-2026-000001-01',
      reason: 'NET_COFFEE_PAYMENT',
      attempt: 1,
      settled_at: '2026-11-22T10:00:00Z',
      nested: { settlement: [{}] },
    });
    expect(p).toMatchObject({ payload_redacted: true, hash: confirmed.hash, prev_hash: confirmed.prev_hash, sequence_number: 1 });
    expect(s).toBe(stage);
  });

  it.each<[string, Caller]>([
    ['COOPERATIVE', { sub: 'm', role: 'COOPERATIVE', cooperative_id: 'C', duties: ['MANAGER'] }],
    ['ADMIN', { sub: 'x', role: 'ADMIN', duties: [] }],
  ])('%s reads the entries as stored', (_r, caller) => {
    expect(auditEntriesFor(caller, [confirmed, stage])).toEqual([confirmed, stage]);
  });
});
