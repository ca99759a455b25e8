import { planSettlement, type Loan, type Settlement } from '../../shared/domain/lending';
import type { PurchaseOrderPayment, SettlementStore, VaultCall } from '../../shared/domain/ports';
import type { PurchaseOrder } from '../../shared/domain/records';
import { applyBuyerPayment, settlementWriteHandlers, type BuyerPaymentEvent, type SettlementDeps } from '../../shared/use-cases/settlement';
import { aBatch, fakeBatchStore, fakeCustodyStore, fakeEvidenceKeeping, fakePayoutStore, fakeWebhookReceiptStore, fakeWorkQueue } from './support/fakes';

/**
 * Settlement rules (decisions §10.1) without the stack: the plan (oldest loans first, interest per
 * started day, a short payment leaves the younger loans ACTIVE), and what a buyer-payment event
 * may change: nothing when it does not match the ledger or names an unknown order, once per
 * purchase order however often it arrives, never for a second payment.
 */

const NOW = new Date('2026-11-22T10:00:00.000Z');
const TX = `0x${'aa'.repeat(32)}`;
const loan = (id: string, created: string, principal = 100_000_000): Pick<Loan, 'loan_id' | 'batch_id' | 'principal_usd_micro' | 'apr' | 'disbursed_at' | 'created_at'> => ({
  loan_id: id, batch_id: `BATCH-2026-00000${id.slice(-1)}`, principal_usd_micro: principal, apr: '0.12', created_at: created, disbursed_at: created,
});

describe('planSettlement', () => {
  it('repays oldest first with interest per started day, settles those batches and the loan-free ones, the rest to the cooperative', () => {
    const plan = planSettlement({
      amountUsdMicro: 500_000_000, paidAt: '2026-11-22T10:00:00.000Z', exportedWithoutLoan: ['BATCH-2026-000009'],
      loans: [{ loan: loan('LOAN-2026-000002', '2026-10-23T10:00:00.000Z') }, { loan: loan('LOAN-2026-000001', '2026-09-23T10:00:00.000Z') }],
    });
    // 100 USDC × 0.12 × 60 / 365 = 1.972603; × 30 / 365 = 0.986302 (rounded up)
    expect(plan.repayments.map((r) => [r.loan_id, r.interest_usd_micro, r.amount_usd_micro])).toEqual([['LOAN-2026-000001', 1_972_603, 101_972_603], ['LOAN-2026-000002', 986_302, 100_986_302]]);
    expect(plan.settled_batch_ids).toEqual(['BATCH-2026-000009', 'BATCH-2026-000001', 'BATCH-2026-000002']);
    expect(plan.remainder_usd_micro).toBe(500_000_000 - 101_972_603 - 100_986_302);
    expect(plan.unpaid_loan_ids).toEqual([]);
  });

  it('a payment short of the loans repays the oldest it covers and leaves the rest ACTIVE (and unsettled)', () => {
    const plan = planSettlement({
      amountUsdMicro: 150_000_000, paidAt: '2026-11-22T10:00:00.000Z', exportedWithoutLoan: [],
      loans: [{ loan: loan('LOAN-2026-000001', '2026-11-01T00:00:00.000Z') }, { loan: loan('LOAN-2026-000002', '2026-11-02T00:00:00.000Z') }],
    });
    expect(plan.repayments.map((r) => r.loan_id)).toEqual(['LOAN-2026-000001']);
    expect(plan.unpaid_loan_ids).toEqual(['LOAN-2026-000002']);
    expect(plan.settled_batch_ids).toEqual(['BATCH-2026-000001']);
    expect(plan.remainder_usd_micro).toBe(150_000_000 - plan.repayments[0]!.amount_usd_micro);
  });
});

describe('applyBuyerPayment', () => {
  const PO: PurchaseOrder = { purchase_order_id: 'PO-1', status: 'CONFIRMED', cooperative_id: 'COOP-1', batch_ids: ['BATCH-2026-000001'], buyer: 'B', price_usd_per_kg: 6.4, created_at: '2026-11-01T00:00:00Z', created_by: 'x' };
  const onChain: PurchaseOrderPayment = { purchaseOrderId: 'PO-1', payer: '0x00000000000000000000000000000000000000b1', amountUsdMicro: 770_000_000n, txHash: TX as `0x${string}`, logIndex: 2, blockNumber: 40n };
  const event = (over: Partial<BuyerPaymentEvent['data']> = {}): BuyerPaymentEvent => ({
    type: 'purchase_order.paid', data: { purchase_order_id: 'PO-1', payer: onChain.payer, amount_usd_micro: '770000000', tx_hash: TX, block_number: 40, log_index: 2, ...over },
  });

  function world(po: PurchaseOrder | null = PO) {
    let stored: Settlement | null = null;
    const writes: Array<[string, VaultCall]> = [];
    const stageCommits: string[] = [];
    const settlements: SettlementStore = {
      start: async (s) => { if (stored) return false; stored = s; return true; },
      get: async () => stored,
      recordRepayment: async () => undefined,
      recordRemainder: async () => undefined,
    };
    const deps: SettlementDeps = {
      receipts: fakeWebhookReceiptStore({ hasWebhook: async () => false, claimWebhook: async () => true }),
      vault: { purchaseOrderPaymentsInTx: async () => [onChain] },
      custody: fakeCustodyStore({
        getPurchaseOrder: async (id) => (po && id === po.purchase_order_id ? po : null),
        commitStage: async (input) => { stageCommits.push(`${input.batchId}:${input.from}->${input.to}`); return { entry: { sequence_number: 5 } as never, ledgerTx: { ledger_tx_id: `${input.batchId}-5` } as never }; },
      }),
      batches: fakeBatchStore({ get: async (id) => aBatch({ batch_id: id, stage: 'EXPORTED' }) }),
      loans: { activeForBatch: async () => null },
      payouts: fakePayoutStore({ get: async () => null }),
      settlements,
      vaultWrites: { request: async (id, call) => { writes.push([id, call]); } },
      evidence: fakeEvidenceKeeping(),
      ledgerQueue: fakeWorkQueue('ledger', { send: async () => undefined }),
      now: () => NOW,
    };
    return { deps, writes, stageCommits, settlement: () => stored };
  }

  it('a matching payment settles the order: SETTLED stage committed, the remainder released; again → same plan, nothing new', async () => {
    const w = world();
    expect(await applyBuyerPayment(w.deps, { webhookId: 'a', event: event() })).toMatchObject({ outcome: 'SETTLEMENT_STARTED' });
    expect(w.stageCommits).toEqual(['BATCH-2026-000001:EXPORTED->SETTLED']);
    expect(w.writes).toEqual([['PO-1-release', { kind: 'RELEASE_REMAINDER', ref: 'PO-1', cooperativeId: 'COOP-1', amountUsdMicro: 770_000_000n }]]);
    expect(w.settlement()).toMatchObject({ status: 'STARTED', remainder_status: 'REQUESTED', settled_batch_ids: ['BATCH-2026-000001'] });
    await applyBuyerPayment(w.deps, { webhookId: 'b', event: event() });
    expect(w.writes.map(([id]) => id)).toEqual(['PO-1-release', 'PO-1-release']); // the same idempotent write id
  });

  it('an event that does not match the ledger log (amount, payer, order, index) is MISMATCH and changes nothing', async () => {
    for (const over of [{ amount_usd_micro: '1' }, { payer: '0x00000000000000000000000000000000000000b2' }, { purchase_order_id: 'PO-2' }, { log_index: 3 }]) {
      const w = world();
      expect(await applyBuyerPayment(w.deps, { webhookId: 'x', event: event(over) })).toMatchObject({ outcome: 'MISMATCH' });
      expect([w.writes, w.stageCommits, w.settlement()]).toEqual([[], [], null]);
    }
  });

  it('an unknown or unconfirmed purchase order: UNKNOWN_PURCHASE_ORDER, nothing settled (the USDC stays in escrow)', async () => {
    const w = world({ ...PO, status: 'DRAFT' });
    expect(await applyBuyerPayment(w.deps, { webhookId: 'x', event: event() })).toMatchObject({ outcome: 'UNKNOWN_PURCHASE_ORDER' });
    expect(w.settlement()).toBeNull();
  });

  it('a second payment (another transaction) for a settled order is ALREADY_SETTLED and requests nothing', async () => {
    const w = world();
    await applyBuyerPayment(w.deps, { webhookId: 'a', event: event() });
    const other = `0x${'bb'.repeat(32)}`;
    w.deps.vault = { purchaseOrderPaymentsInTx: async () => [{ ...onChain, txHash: other as `0x${string}` }] };
    const before = w.writes.length;
    expect(await applyBuyerPayment(w.deps, { webhookId: 'c', event: event({ tx_hash: other }) })).toMatchObject({ outcome: 'ALREADY_SETTLED' });
    expect(w.writes.length).toBe(before);
  });

  it('the ledger cannot be read: 503 LEDGER_UNAVAILABLE, no receipt', async () => {
    const w = world();
    let claimed = false;
    w.deps.receipts = fakeWebhookReceiptStore({ hasWebhook: async () => false, claimWebhook: async () => (claimed = true) });
    w.deps.vault = { purchaseOrderPaymentsInTx: async () => { throw new Error('ECONNREFUSED'); } };
    await expect(applyBuyerPayment(w.deps, { webhookId: 'x', event: event() })).rejects.toMatchObject({ code: 'LEDGER_UNAVAILABLE' });
    expect(claimed).toBe(false);
  });
});

describe('settlementWriteHandlers', () => {
  it('a mined repayment makes the loan REPAID (from PENDING or ACTIVE) and records it on the settlement', async () => {
    const calls: unknown[] = [];
    const h = settlementWriteHandlers({
      loans: { transition: async (...args) => { calls.push(['loan', ...args]); return true; } },
      settlements: { recordRepayment: async (...args) => { calls.push(['repayment', ...args]); }, recordRemainder: async () => undefined },
      now: () => NOW,
    });
    await h.REPAY_LOAN.mined({ kind: 'REPAY_LOAN', ref: 'LOAN-2026-000001', purchaseOrderRef: 'PO-1', amountUsdMicro: '101972603' }, '0xrepay', null);
    expect(calls).toEqual([
      ['loan', 'LOAN-2026-000001', ['PENDING', 'ACTIVE'], 'REPAID', { repaid_usd_micro: 101_972_603, repay_tx_hash: '0xrepay', repaid_at: NOW.toISOString(), repaid_by_purchase_order_id: 'PO-1' }, NOW.toISOString()],
      ['repayment', 'PO-1', 'LOAN-2026-000001', { status: 'REPAID', tx_hash: '0xrepay' }, NOW.toISOString()],
    ]);
  });
});
