import { amountDueUsdMicro, classifyBuyerPayment, isPaidInFull, planSettlement, refundIdOf, type Loan } from '../../shared/domain/lending';
import type { PurchaseOrderPayment } from '../../shared/domain/ports/lending';
import type { PurchaseOrder, StoredVaultCall } from '../../shared/domain/records';
import { REPAY_LOANS_CHUNK, storedVaultCall, type VaultCall } from '../../shared/domain/vault-calls';
import {
  applyBuyerPayment,
  refundBuyerPayment,
  settleLargeOrderWhenPaid,
  settlePurchaseOrder,
  type BuyerPaymentEvent,
  type SettlementDeps,
} from '../../shared/use-cases/settlement';
import { requestSettlementWrites } from '../../shared/use-cases/settlement-carry-out';
import { settlementWriteHandlers } from '../../shared/use-cases/settlement-writes';
import {
  aBatch,
  fakeBatchStore,
  fakeCustodyStore,
  fakeEvidenceKeeping,
  fakePayoutStore,
  fakeWebhookReceiptStore,
  fakeWorkQueue,
  loansByBatch,
} from './support/fakes';
import { wire } from './support/errors';
import { memorySettlementStore } from './support/memory-settlement-store';

/**
 * Settlement rules (docs/api/settlement.md#settlement) without the stack: the plan (oldest loans first, interest
 * per started day, a short payment leaves the younger loans ACTIVE); the buyer-payment rules (amount
 * due from the milled outturn, which payments count, paid in full, one refund id per payment); and
 * what a buyer-payment event may change: nothing when it does not match the ledger; a dust payment
 * only counts; payments accumulate and settle once at the amount due; a payment from another payer,
 * for an unknown order or after the settlement stays unapplied and an ADMIN refunds it once; an
 * ADMIN settles a short-paid order only with accept_short_payment.
 */

const NOW = new Date('2026-11-22T10:00:00.000Z');
const TX = `0x${'aa'.repeat(32)}`;
const loan = (
  id: string,
  created: string,
  principal = 100_000_000,
): Pick<Loan, 'loan_id' | 'batch_id' | 'principal_usd_micro' | 'apr' | 'disbursed_at' | 'created_at'> => ({
  loan_id: id,
  batch_id: `BATCH-2026-00000${id.slice(-1)}`,
  principal_usd_micro: principal,
  apr: '0.12',
  created_at: created,
  disbursed_at: created,
});

describe('planSettlement', () => {
  it('repays oldest first with interest per started day, settles those batches and the loan-free ones, the rest to the cooperative', () => {
    const plan = planSettlement({
      amountUsdMicro: 500_000_000,
      paidAt: '2026-11-22T10:00:00.000Z',
      exportedWithoutLoan: ['BATCH-2026-000009'],
      loans: [
        { loan: loan('LOAN-2026-000002', '2026-10-23T10:00:00.000Z') },
        { loan: loan('LOAN-2026-000001', '2026-09-23T10:00:00.000Z') },
      ],
    });
    // 100 USDC × 0.12 × 60 / 365 = 1.972603; × 30 / 365 = 0.986302 (rounded up)
    expect(plan.repayments.map((r) => [r.loan_id, r.interest_usd_micro, r.amount_usd_micro])).toEqual([
      ['LOAN-2026-000001', 1_972_603, 101_972_603],
      ['LOAN-2026-000002', 986_302, 100_986_302],
    ]);
    expect(plan.settled_batch_ids).toEqual(['BATCH-2026-000009', 'BATCH-2026-000001', 'BATCH-2026-000002']);
    expect(plan.remainder_usd_micro).toBe(500_000_000 - 101_972_603 - 100_986_302);
    expect(plan.unpaid_loan_ids).toEqual([]);
  });

  it('a payment short of the loans repays the oldest it covers and leaves the rest ACTIVE (and unsettled)', () => {
    const plan = planSettlement({
      amountUsdMicro: 150_000_000,
      paidAt: '2026-11-22T10:00:00.000Z',
      exportedWithoutLoan: [],
      loans: [
        { loan: loan('LOAN-2026-000001', '2026-11-01T00:00:00.000Z') },
        { loan: loan('LOAN-2026-000002', '2026-11-02T00:00:00.000Z') },
      ],
    });
    expect(plan.repayments.map((r) => r.loan_id)).toEqual(['LOAN-2026-000001']);
    expect(plan.unpaid_loan_ids).toEqual(['LOAN-2026-000002']);
    expect(plan.settled_batch_ids).toEqual(['BATCH-2026-000001']);
    expect(plan.remainder_usd_micro).toBe(150_000_000 - plan.repayments[0]!.amount_usd_micro);
  });
});

describe('buyer payment rules (purchase orders paid in full)', () => {
  it('amountDueUsdMicro: Σ outturn_kg × price, rounded down per batch, exact in micro-USDC; null until every batch is milled', () => {
    expect(amountDueUsdMicro([{ outturn_kg: 100 }, { outturn_kg: 100 }], 6.4)).toBe(1_280_000_000);
    // 0.001 kg × 0.0001 USD/kg = 0.0000001 USD → 0 micro; 120.125 kg × 6.4321 = 772.656 … → 772.656012 (rounded down)
    expect(amountDueUsdMicro([{ outturn_kg: 0.001 }], 0.0001)).toBe(0);
    expect(amountDueUsdMicro([{ outturn_kg: 120.125 }], 6.4321)).toBe(772_656_012);
    expect(amountDueUsdMicro([{ outturn_kg: 100 }, {}], 6.4)).toBeNull();
  });

  it('classifyBuyerPayment: counts only for a confirmed, unsettled order, from its buyer_address when it names one', () => {
    const po = { status: 'CONFIRMED', buyer_address: '0x00000000000000000000000000000000000000b1' };
    expect(classifyBuyerPayment({ po, settled: false, payer: '0x00000000000000000000000000000000000000B1' })).toEqual({ counts: true });
    expect(classifyBuyerPayment({ po, settled: false, payer: '0x00000000000000000000000000000000000000b2' })).toEqual({
      counts: false,
      reason: 'OTHER_PAYER',
    });
    expect(
      classifyBuyerPayment({ po: { status: 'CONFIRMED' }, settled: false, payer: '0x00000000000000000000000000000000000000b2' }),
    ).toEqual({ counts: true });
    expect(classifyBuyerPayment({ po, settled: true, payer: po.buyer_address })).toEqual({ counts: false, reason: 'AFTER_SETTLEMENT' });
    expect(classifyBuyerPayment({ po: { status: 'DRAFT' }, settled: false, payer: po.buyer_address })).toEqual({
      counts: false,
      reason: 'UNKNOWN_PURCHASE_ORDER',
    });
    expect(classifyBuyerPayment({ po: null, settled: false, payer: po.buyer_address })).toEqual({
      counts: false,
      reason: 'UNKNOWN_PURCHASE_ORDER',
    });
  });

  it('isPaidInFull: at or above a known amount due; never while it is unknown', () => {
    expect(isPaidInFull(1_280_000_000, 1_280_000_000)).toBe(true);
    expect(isPaidInFull(1_279_999_999, 1_280_000_000)).toBe(false);
    expect(isPaidInFull(5, null)).toBe(false);
  });

  it('refundIdOf: one 32-character id per payment (tx hash case does not matter)', () => {
    const id = refundIdOf(`0x${'AB'.repeat(32)}`, 3);
    expect(id).toMatch(/^RFD-[0-9a-f]{28}$/);
    expect(refundIdOf(`0x${'ab'.repeat(32)}`, 3)).toBe(id);
    expect(refundIdOf(`0x${'ab'.repeat(32)}`, 4)).not.toBe(id);
  });
});

describe('applyBuyerPayment', () => {
  const BUYER = '0x00000000000000000000000000000000000000b1' as const;
  const PO: PurchaseOrder = {
    purchase_order_id: 'PO-1',
    status: 'CONFIRMED',
    cooperative_id: 'COOP-1',
    batch_ids: ['BATCH-2026-000001'],
    buyer: 'B',
    price_usd_per_kg: 6.4,
    amount_due_usd_micro: 770_000_000,
    created_at: '2026-11-01T00:00:00Z',
    created_by: 'x',
  };
  const onChain: PurchaseOrderPayment = {
    purchaseOrderId: 'PO-1',
    payer: BUYER,
    amountUsdMicro: 770_000_000n,
    txHash: TX as `0x${string}`,
    logIndex: 2,
    blockNumber: 40n,
  };
  const event = (over: Partial<BuyerPaymentEvent['data']> = {}): BuyerPaymentEvent => ({
    type: 'purchase_order.paid',
    data: {
      purchase_order_id: 'PO-1',
      payer: onChain.payer,
      amount_usd_micro: '770000000',
      tx_hash: TX,
      block_number: 40,
      log_index: 2,
      ...over,
    },
  });

  function world(po: PurchaseOrder | null = PO) {
    const orders = new Map(po ? [[po.purchase_order_id, po]] : []);
    const mem = memorySettlementStore(orders);
    const writes: Array<[string, VaultCall]> = [];
    const stageCommits: Array<{ batch: string; to: string; payload: Record<string, unknown> }> = [];
    let ledger: PurchaseOrderPayment[] = [onChain];
    const deps: SettlementDeps = {
      receipts: fakeWebhookReceiptStore({ hasWebhook: async () => false, claimWebhook: async () => true }),
      vault: { purchaseOrderPaymentsInTx: async (tx) => ledger.filter((l) => l.txHash === tx) },
      custody: fakeCustodyStore({
        getPurchaseOrder: async (id) => orders.get(id) ?? null,
        commitStage: async (input) => {
          stageCommits.push({ batch: input.batchId, to: input.to, payload: input.payload });
          return { entry: { sequence_number: 5 } as never, ledgerTx: { ledger_tx_id: `${input.batchId}-5` } as never };
        },
      }),
      batches: fakeBatchStore({
        get: async (id) =>
          aBatch({ batch_id: id, stage: stageCommits.some((c) => c.batch === id) ? 'SETTLED' : 'EXPORTED', outturn_kg: 100 }),
      }),
      loans: loansByBatch(async () => null),
      payouts: fakePayoutStore({ get: async () => null }),
      settlements: mem.store,
      vaultWrites: {
        request: async (id, call) => {
          writes.push([id, call]);
        },
      },
      evidence: fakeEvidenceKeeping(),
      ledgerQueue: fakeWorkQueue('ledger', { send: async () => undefined }),
      orderWork: {
        send: async () => {
          throw new Error('an order of one batch is settled on the request path');
        },
      },
      orderWorkIndex: {
        markSettleWork: async () => {
          throw new Error('an order of one batch has no work for the order worker');
        },
      },
      now: () => NOW,
    };
    /** A further payment on the chain (tx `n`), applied as its event. */
    const pay = async (n: string, amount: number, payer: `0x${string}` = BUYER, id = `evt-${n}`) => {
      const txHash = `0x${n.repeat(64).slice(0, 64)}` as `0x${string}`;
      ledger = [...ledger, { ...onChain, txHash, payer, amountUsdMicro: BigInt(amount), blockNumber: 40n + BigInt(ledger.length) }];
      return applyBuyerPayment(deps, {
        webhookId: id,
        event: event({ tx_hash: txHash, payer, amount_usd_micro: String(amount), block_number: 40 + ledger.length - 1 }),
      });
    };
    return { deps, writes, stageCommits, orders, pay, mem, settlement: mem.settlement };
  }

  it('a payment of the full amount settles the order: SETTLED stage committed (no amounts in its evidence), the remainder released; again → nothing new', async () => {
    const w = world();
    expect(await applyBuyerPayment(w.deps, { webhookId: 'a', event: event() })).toMatchObject({ outcome: 'SETTLEMENT_STARTED' });
    expect(w.stageCommits.map((c) => `${c.batch}:${c.to}`)).toEqual(['BATCH-2026-000001:SETTLED']);
    const evidence = w.stageCommits[0]!.payload.evidence as Record<string, unknown>;
    expect(evidence).toEqual({ purchase_order_id: 'PO-1', payment_tx_hashes: [TX], loan_id: null });
    expect(JSON.stringify(evidence)).not.toMatch(/usdc|amount/i);
    expect(w.writes).toEqual([
      ['PO-1-release', { kind: 'RELEASE_REMAINDER', ref: 'PO-1', cooperativeId: 'COOP-1', amountUsdMicro: 770_000_000n }],
    ]);
    expect(w.settlement()).toMatchObject({
      status: 'STARTED',
      remainder_status: 'REQUESTED',
      settled_batch_ids: ['BATCH-2026-000001'],
      amount_usd_micro: 770_000_000,
      short_payment: false,
      settled_by: 'system:lending-vault',
    });
    expect(w.mem.audits.map(([t]) => t)).toEqual(['BUYER_PAYMENT_RECEIVED', 'SETTLEMENT_STARTED']);
    await applyBuyerPayment(w.deps, { webhookId: 'b', event: event() });
    expect(w.writes.map(([id]) => id)).toEqual(['PO-1-release', 'PO-1-release']); // the same idempotent write id
    expect(w.mem.payments.size).toBe(1);
  });

  it('the loans are repaid in REPAY_LOANS writes of REPAY_LOANS_CHUNK loans, one id per chunk; carried out again, only chunks with a REQUESTED repayment are asked again', async () => {
    const n = REPAY_LOANS_CHUNK + 50;
    const batchIds = Array.from({ length: n }, (_, i) => `BATCH-2026-${String(i + 1).padStart(6, '0')}`);
    const w = world({ ...PO, batch_ids: batchIds, amount_due_usd_micro: 2_000_000_000 });
    const loanOf = (batchId: string): Loan =>
      ({
        loan_id: batchId.replace('BATCH', 'LOAN'),
        batch_id: batchId,
        principal_usd_micro: 10_000_000,
        apr: '0',
        status: 'ACTIVE',
        created_at: '2026-10-01T00:00:00Z',
        disbursed_at: '2026-10-01T00:00:00Z',
        disbursement_payment_id: `DISB-${batchId}`,
      }) as Loan;
    w.deps.loans = loansByBatch(async (id) => loanOf(id));
    const work: unknown[] = [];
    w.deps.orderWork = {
      send: async (m) => {
        work.push(m);
      },
    };
    w.deps.orderWorkIndex = { markSettleWork: async (id) => void work.push(`marked ${id}`) };
    // An order above one transaction: the payment is recorded and the order worker is queued; the
    // worker plans and starts the settlement (no read of every batch and loan on the request path).
    expect(await w.pay('e', 2_000_000_000)).toMatchObject({ outcome: 'SETTLEMENT_STARTED' });
    // Marked in the order-work index first, then queued (docs/api/batches-and-custody.md#resuming-stalled-orders).
    expect(work).toEqual(['marked PO-1', { purchase_order_id: 'PO-1', work: 'SETTLE' }]);
    expect(w.settlement()).toBeNull();
    expect(w.writes).toEqual([]);
    expect(w.stageCommits).toEqual([]);
    expect(await settleLargeOrderWhenPaid(w.deps, 'PO-1')).toMatchObject({ status: 'STARTED' }); // by the worker: nothing queued again
    await requestSettlementWrites(w.deps, w.settlement()!);
    const repays = w.writes.filter(([, c]) => c.kind === 'REPAY_LOANS');
    expect(repays.map(([id]) => id)).toEqual(['PO-1-repays-0', 'PO-1-repays-1']);
    const chunks = repays.map(([, c]) => (c as Extract<VaultCall, { kind: 'REPAY_LOANS' }>).repayments);
    expect(chunks.map((c) => c.length)).toEqual([REPAY_LOANS_CHUNK, 50]);
    expect(chunks.flat().map((r) => r.loanRef)).toEqual(batchIds.map((b) => b.replace('BATCH', 'LOAN')));
    expect(chunks.flat().every((r) => r.amountUsdMicro === 10_000_000n)).toBe(true);
    expect(repays.every(([, c]) => c.ref === 'PO-1')).toBe(true);
    // The first chunk landed; the work is run again: only the second chunk is asked again, same id and loans.
    const settlement = w.settlement()!;
    for (const r of chunks[0]!) settlement.repayments[r.loanRef]!.status = 'REPAID';
    w.writes.length = 0;
    await requestSettlementWrites(w.deps, w.settlement()!);
    expect(w.writes.filter(([, c]) => c.kind === 'REPAY_LOANS')).toEqual([repays[1]]);
  });

  it('a dust payment is AWAITING_PAYMENT and settles nothing; the balance then settles the sum, with both payments', async () => {
    const w = world();
    expect(await w.pay('1', 1)).toMatchObject({ outcome: 'AWAITING_PAYMENT' });
    expect([w.settlement(), w.stageCommits, w.writes]).toEqual([null, [], []]);
    expect(w.orders.get('PO-1')!.paid_usd_micro).toBe(1);
    expect(await w.pay('2', 769_999_999)).toMatchObject({ outcome: 'SETTLEMENT_STARTED' });
    expect(w.settlement()).toMatchObject({
      amount_usd_micro: 770_000_000,
      payments: [expect.objectContaining({ amount_usd_micro: 1 }), expect.objectContaining({ amount_usd_micro: 769_999_999 })],
    });
    expect(w.writes).toEqual([
      ['PO-1-release', { kind: 'RELEASE_REMAINDER', ref: 'PO-1', cooperativeId: 'COOP-1', amountUsdMicro: 770_000_000n }],
    ]);
  });

  it('a payment from another address than buyer_address does not count: OTHER_PAYER, kept unapplied, refundable once', async () => {
    const w = world({ ...PO, buyer_address: BUYER });
    const stranger = '0x00000000000000000000000000000000000000c3' as const;
    expect(await w.pay('3', 770_000_000, stranger)).toMatchObject({ outcome: 'OTHER_PAYER' });
    expect(w.settlement()).toBeNull();
    const [stray] = await w.mem.store.payments('PO-1');
    expect(stray).toMatchObject({ status: 'UNAPPLIED', unapplied_reason: 'OTHER_PAYER', payer: stranger });
    const admin = { role: 'ADMIN', sub: 'admin-1' } as never;
    const refunded = await refundBuyerPayment(w.deps, admin, 'PO-1', { tx_hash: stray!.tx_hash, log_index: stray!.log_index });
    expect(refunded).toMatchObject({ status: 'REFUND_REQUESTED', refund_id: refundIdOf(stray!.tx_hash, stray!.log_index) });
    expect(w.writes).toEqual([
      [
        refunded.refund_id,
        {
          kind: 'REFUND_PAYMENT',
          ref: refunded.refund_id,
          purchaseOrderRef: 'PO-1',
          to: stranger,
          amountUsdMicro: 770_000_000n,
          paymentTxHash: stray!.tx_hash,
          paymentLogIndex: stray!.log_index,
        },
      ],
    ]);
    // Asked again while requested: the same idempotent write; once REFUNDED: refused.
    await refundBuyerPayment(w.deps, admin, 'PO-1', { tx_hash: stray!.tx_hash, log_index: stray!.log_index });
    expect(new Set(w.writes.map(([id]) => id)).size).toBe(1);
    await settlementWriteHandlers({ ...w.deps, loans: { transition: async () => true } }).REFUND_PAYMENT.mined(
      storedVaultCall(w.writes[0]![1]) as Extract<StoredVaultCall, { kind: 'REFUND_PAYMENT' }>,
      '0xrefund',
      null,
    );
    await expect(
      wire(refundBuyerPayment(w.deps, admin, 'PO-1', { tx_hash: stray!.tx_hash, log_index: stray!.log_index })),
    ).rejects.toMatchObject({ code: 'PAYMENT_ALREADY_REFUNDED', status: 409 });
  });

  it('refunds: only ADMIN, only unapplied payments, only known payments', async () => {
    const w = world();
    await applyBuyerPayment(w.deps, { webhookId: 'a', event: event() });
    const coop = { role: 'COOPERATIVE', sub: 'c', cooperative_id: 'COOP-1' } as never;
    const admin = { role: 'ADMIN', sub: 'admin-1' } as never;
    await expect(refundBuyerPayment(w.deps, coop, 'PO-1', { tx_hash: TX, log_index: 2 })).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
    });
    await expect(wire(refundBuyerPayment(w.deps, admin, 'PO-1', { tx_hash: TX, log_index: 2 }))).rejects.toMatchObject({
      code: 'PAYMENT_COUNTED',
      status: 409,
    });
    await expect(wire(refundBuyerPayment(w.deps, admin, 'PO-1', { tx_hash: TX, log_index: 9 }))).rejects.toMatchObject({
      code: 'BUYER_PAYMENT_NOT_FOUND',
      status: 404,
    });
  });

  it('an ADMIN settles a short-paid order only with accept_short_payment; refusals for the other cases', async () => {
    const w = world();
    const admin = { role: 'ADMIN', sub: 'admin-1' } as never;
    await expect(wire(settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: true }))).rejects.toMatchObject({
      code: 'NO_PAYMENT_RECEIVED',
      status: 409,
    });
    await w.pay('4', 700_000_000);
    await expect(
      settlePurchaseOrder(w.deps, { role: 'COOPERATIVE', sub: 'c', cooperative_id: 'COOP-1' } as never, 'PO-1', {
        accept_short_payment: true,
      }),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
    await expect(wire(settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: false }))).rejects.toMatchObject({
      code: 'SHORT_PAYMENT_NOT_ACCEPTED',
      status: 422,
    });
    const s = await settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: true });
    expect(s.kind).toBe('STARTED');
    expect(s.kind === 'STARTED' && s.settlement).toMatchObject({
      amount_usd_micro: 700_000_000,
      short_payment: true,
      settled_by: 'admin-1',
      amount_due_usd_micro: 770_000_000,
    });
    await expect(wire(settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: true }))).rejects.toMatchObject({
      code: 'PO_ALREADY_SETTLED',
      status: 409,
    });
    await expect(settlePurchaseOrder(w.deps, admin, 'PO-9', { accept_short_payment: true })).rejects.toMatchObject({
      code: 'PO_NOT_FOUND',
    });
    // A payment after the settlement stays in escrow.
    expect(await w.pay('5', 70_000_000)).toMatchObject({ outcome: 'ALREADY_SETTLED' });
  });

  it('the amount due is recorded once every batch is milled (unknown at creation): a full payment then settles', async () => {
    const { amount_due_usd_micro: _due, ...withoutDue } = PO;
    const w = world({ ...withoutDue });
    // one batch of 100 kg outturn at 6.40 USD/kg = 640 USDC
    expect(await w.pay('6', 640_000_000)).toMatchObject({ outcome: 'SETTLEMENT_STARTED' });
    expect(w.orders.get('PO-1')!.amount_due_usd_micro).toBe(640_000_000);
  });

  it('an event that does not match the ledger log (amount, payer, order, index) is MISMATCH and changes nothing', async () => {
    for (const over of [
      { amount_usd_micro: '1' },
      { payer: '0x00000000000000000000000000000000000000b2' },
      { purchase_order_id: 'PO-2' },
      { log_index: 3 },
    ]) {
      const w = world();
      expect(await applyBuyerPayment(w.deps, { webhookId: 'x', event: event(over) })).toMatchObject({ outcome: 'MISMATCH' });
      expect([w.writes, w.stageCommits, w.settlement(), w.mem.payments.size]).toEqual([[], [], null, 0]);
    }
  });

  it('an unknown or unconfirmed purchase order: UNKNOWN_PURCHASE_ORDER, kept unapplied, nothing settled (the USDC stays in escrow)', async () => {
    const w = world({ ...PO, status: 'DRAFT' });
    expect(await applyBuyerPayment(w.deps, { webhookId: 'x', event: event() })).toMatchObject({ outcome: 'UNKNOWN_PURCHASE_ORDER' });
    expect(w.settlement()).toBeNull();
    expect([...w.mem.payments.values()]).toEqual([
      expect.objectContaining({ status: 'UNAPPLIED', unapplied_reason: 'UNKNOWN_PURCHASE_ORDER' }),
    ]);
  });

  it('a second payment (another transaction) for a settled order is ALREADY_SETTLED, kept unapplied, and requests nothing', async () => {
    const w = world();
    await applyBuyerPayment(w.deps, { webhookId: 'a', event: event() });
    const before = w.writes.length;
    expect(await w.pay('b', 770_000_000)).toMatchObject({ outcome: 'ALREADY_SETTLED' });
    expect(w.writes.length).toBe(before);
    expect((await w.mem.store.payments('PO-1')).map((p) => p.status).sort()).toEqual(['COUNTED', 'UNAPPLIED']);
  });

  it('the ledger cannot be read: 503 LEDGER_UNAVAILABLE, no receipt', async () => {
    const w = world();
    let claimed = false;
    w.deps.receipts = fakeWebhookReceiptStore({ hasWebhook: async () => false, claimWebhook: async () => (claimed = true) });
    w.deps.vault = {
      purchaseOrderPaymentsInTx: async () => {
        throw new Error('ECONNREFUSED');
      },
    };
    await expect(applyBuyerPayment(w.deps, { webhookId: 'x', event: event() })).rejects.toMatchObject({ code: 'LEDGER_UNAVAILABLE' });
    expect(claimed).toBe(false);
  });
});

describe('settlementWriteHandlers', () => {
  it('a mined repayment makes the loan REPAID (from PENDING or ACTIVE) and records it on the settlement', async () => {
    const calls: unknown[] = [];
    const h = settlementWriteHandlers({
      loans: {
        transition: async (...args) => {
          calls.push(['loan', ...args]);
          return true;
        },
      },
      settlements: {
        recordRepayment: async (...args) => {
          calls.push(['repayment', ...args]);
        },
        recordRemainder: async () => undefined,
        recordRefund: async () => undefined,
      },
      now: () => NOW,
    });
    await h.REPAY_LOAN.mined(
      { kind: 'REPAY_LOAN', ref: 'LOAN-2026-000001', purchaseOrderRef: 'PO-1', amountUsdMicro: '101972603' },
      '0xrepay',
      null,
    );
    expect(calls).toEqual([
      [
        'loan',
        'LOAN-2026-000001',
        ['PENDING', 'ACTIVE'],
        'REPAID',
        { repaid_usd_micro: 101_972_603, repay_tx_hash: '0xrepay', repaid_at: NOW.toISOString(), repaid_by_purchase_order_id: 'PO-1' },
        NOW.toISOString(),
      ],
      ['repayment', 'PO-1', 'LOAN-2026-000001', { status: 'REPAID', tx_hash: '0xrepay' }, NOW.toISOString()],
    ]);
  });

  it('REPAY_LOANS: each loan settled from its own event — LoanRepaid → REPAID, RepaymentSkipped or no event → REFUSED; reverted → all REFUSED', async () => {
    const calls: unknown[][] = [];
    const h = settlementWriteHandlers({
      loans: {
        transition: async (...args) => {
          calls.push(['loan', args[0], args[2], args[3]]);
          return true;
        },
      },
      settlements: {
        recordRepayment: async (...args) => {
          calls.push(['repayment', args[0], args[1], args[2]]);
        },
        recordRemainder: async () => undefined,
        recordRefund: async () => undefined,
      },
      now: () => NOW,
    });
    const call = {
      kind: 'REPAY_LOANS' as const,
      ref: 'PO-1',
      repayments: [
        { loanRef: 'LOAN-A', amountUsdMicro: '110' },
        { loanRef: 'LOAN-B', amountUsdMicro: '90' },
        { loanRef: 'LOAN-C', amountUsdMicro: '120' },
      ],
    };
    await h.REPAY_LOANS.mined(call, '0xbatch', {
      repayments: [
        { loanId: 'LOAN-A', repaid: true, amountUsdMicro: 110n },
        { loanId: 'LOAN-B', repaid: false, reason: 'RepaymentBelowPrincipal' },
      ],
    });
    const byLoan = (id: string) => calls.filter((c) => c[0] === 'repayment' && c[2] === id).map((c) => c[3]);
    expect(calls.filter((c) => c[0] === 'loan')).toEqual([
      [
        'loan',
        'LOAN-A',
        'REPAID',
        { repaid_usd_micro: 110, repay_tx_hash: '0xbatch', repaid_at: NOW.toISOString(), repaid_by_purchase_order_id: 'PO-1' },
      ],
    ]);
    expect(byLoan('LOAN-A')).toEqual([{ status: 'REPAID', tx_hash: '0xbatch' }]);
    expect(byLoan('LOAN-B')).toEqual([{ status: 'REFUSED' }]);
    expect(byLoan('LOAN-C')).toEqual([{ status: 'REFUSED' }]);
    calls.length = 0;
    await h.REPAY_LOANS.refused(call, 'reverted');
    expect(calls).toEqual(call.repayments.map((r) => ['repayment', 'PO-1', r.loanRef, { status: 'REFUSED' }]));
  });
});
