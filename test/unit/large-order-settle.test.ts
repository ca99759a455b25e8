import type { Loan } from '../../shared/domain/lending';
import type { PurchaseOrderPayment } from '../../shared/domain/ports/lending';
import type { OrderWorkMessage } from '../../shared/domain/ports/batches';
import { ORDER_TRANSACTION_MAX_BATCHES } from '../../shared/domain/purchase-order-limits';
import type { PurchaseOrder, Stage } from '../../shared/domain/records';
import { StageConflictError } from '../../shared/domain/errors';
import { runOrderWork, type OrderWorkDeps } from '../../shared/use-cases/order-work';
import { applyBuyerPayment, settlePurchaseOrder, type SettlementDeps } from '../../shared/use-cases/settlement';
import { wire } from './support/errors';
import {
  aBatch,
  aLedgerTx,
  fakeCustodyStore,
  fakeEvidenceKeeping,
  fakePayoutStore,
  fakeWebhookReceiptStore,
  memoryOrderWorkIndex,
} from './support/fakes';
import { memorySettlementStore } from './support/memory-settlement-store';

/**
 * An ADMIN's settle call on a purchase order above one transaction's size
 * (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): it checks what the call of a
 * small order checks, keeps the request on the order and queues the order worker, answering with
 * the order (no read of every batch and loan on the request path); the worker starts the one
 * settlement as that ADMIN; a repeat before it starts queues again and keeps the first request; a
 * buyer payment meanwhile leads to the same one settlement.
 */
const N = ORDER_TRANSACTION_MAX_BATCHES + 80;
const ids = Array.from({ length: N }, (_, i) => `BATCH-2026-${String(i + 1).padStart(6, '0')}`);
const DUE = N * 640_000_000; // 100 kg outturn × 6.40 USD/kg per batch
const BUYER = '0x00000000000000000000000000000000000000b1' as const;
const admin = { role: 'ADMIN', sub: 'admin-1' } as never;
const LOANED = ids.slice(0, 3);

function world() {
  const orders = new Map<string, PurchaseOrder>([
    [
      'PO-1',
      {
        purchase_order_id: 'PO-1',
        status: 'CONFIRMED',
        cooperative_id: 'COOP-1',
        batch_ids: ids,
        buyer: 'B',
        price_usd_per_kg: 6.4,
        amount_due_usd_micro: DUE,
        created_at: '2026-11-27T00:00:00.000Z',
        created_by: 'exporter-1',
      },
    ],
  ]);
  const mem = memorySettlementStore(orders);
  const stages = new Map<string, Stage>(ids.map((id) => [id, 'EXPORTED' as Stage]));
  const settledCommits: string[] = [];
  const queued: OrderWorkMessage[] = [];
  const workIndex = memoryOrderWorkIndex();
  const writes: string[] = [];
  /** Reads of a batch or its loan: the request path of a large order makes none. */
  let perBatchReads = 0;
  /** Reads of one batch at a time (the worker reads the order's batches and loans in batched reads instead). */
  let singleReads = 0;
  let ledger: PurchaseOrderPayment[] = [];
  const loanOf = (batchId: string): Loan =>
    ({
      loan_id: batchId.replace('BATCH', 'LOAN'),
      batch_id: batchId,
      principal_usd_micro: 60_000_000,
      apr: '0',
      status: 'ACTIVE',
      created_at: '2026-10-01T00:00:00Z',
      disbursed_at: '2026-10-01T00:00:00Z',
      disbursement_payment_id: `DISB-${batchId}`,
    }) as Loan;
  const unused = async (): Promise<never> => {
    throw new Error('not part of a settlement');
  };
  const deps: SettlementDeps & OrderWorkDeps = {
    receipts: fakeWebhookReceiptStore({ hasWebhook: async () => false, claimWebhook: async () => true }),
    vault: { purchaseOrderPaymentsInTx: async (tx) => ledger.filter((l) => l.txHash === tx) },
    custody: fakeCustodyStore({
      getPurchaseOrder: async (id) => structuredClone(orders.get(id) ?? null),
      commitStage: async (input) => {
        if (stages.get(input.batchId) !== input.from) throw new StageConflictError(stages.get(input.batchId)!);
        stages.set(input.batchId, input.to);
        settledCommits.push(input.batchId);
        return { entry: { sequence_number: 9 } as never, ledgerTx: aLedgerTx({ batch_id: input.batchId, stage: input.to }) };
      },
      beginPurchaseOrderConfirmation: unused,
      confirmPurchaseOrderBatch: unused,
      recordConfirmationProgress: unused,
    }),
    batches: {
      get: async (id) => {
        perBatchReads++;
        singleReads++;
        return aBatch({ batch_id: id, cooperative_id: 'COOP-1', stage: stages.get(id)!, outturn_kg: 100 });
      },
      getMany: async (batchIds) => {
        perBatchReads += batchIds.length;
        return batchIds.map((id) => aBatch({ batch_id: id, cooperative_id: 'COOP-1', stage: stages.get(id)!, outturn_kg: 100 }));
      },
    },
    loans: {
      activeForBatches: async (batchIds) => {
        perBatchReads += batchIds.length;
        return batchIds.map((id) => (LOANED.includes(id) ? loanOf(id) : null));
      },
    },
    payouts: fakePayoutStore({ get: async () => null }),
    settlements: mem.store,
    vaultWrites: {
      request: async (id) => {
        writes.push(id);
      },
    },
    evidence: fakeEvidenceKeeping(),
    ledgerQueue: { send: async () => undefined },
    orderWork: {
      send: async (m) => {
        queued.push(m);
      },
    },
    orderWorkIndex: workIndex,
    now: () => new Date('2026-11-27T03:00:00.000Z'),
  };
  /** A buyer payment of `amount` on the chain (tx `n`), applied as its signed event. */
  const pay = (n: string, amount: number) => {
    const txHash = `0x${n.repeat(64)}` as `0x${string}`;
    const log = { purchaseOrderId: 'PO-1', payer: BUYER, amountUsdMicro: BigInt(amount), txHash, logIndex: 0, blockNumber: 40n };
    ledger = [...ledger, log];
    return applyBuyerPayment(deps, {
      webhookId: `evt-${n}`,
      event: {
        type: 'purchase_order.paid',
        data: {
          purchase_order_id: 'PO-1',
          payer: BUYER,
          amount_usd_micro: String(amount),
          tx_hash: txHash,
          block_number: 40,
          log_index: 0,
        },
      },
    });
  };
  /** The order worker over every queued message (each delivery at once with the others queued then), until none is left. */
  const drain = async () => {
    while (queued.length) await Promise.all(queued.splice(0).map((m) => runOrderWork(deps, m)));
  };
  return {
    deps,
    orders,
    mem,
    stages,
    settledCommits,
    queued,
    workIndex,
    writes,
    pay,
    drain,
    reads: () => perBatchReads,
    singleReads: () => singleReads,
    resetReads: () => {
      perBatchReads = 0;
    },
  };
}

describe('an ADMIN settles a purchase order above one transaction (the order worker)', () => {
  it('a short-paid order with accept_short_payment: 202 with the order, the request kept, the worker queued, nothing read per batch; the worker settles it once as the ADMIN', async () => {
    const w = world();
    expect(await w.pay('1', DUE / 2)).toMatchObject({ outcome: 'AWAITING_PAYMENT' });
    w.queued.length = 0; // the payment's own message: the worker finds it not paid in full (shown below)
    w.resetReads();
    const answer = await settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: true });
    expect(answer.kind).toBe('QUEUED');
    expect(answer.kind === 'QUEUED' && answer.po).toMatchObject({
      purchase_order_id: 'PO-1',
      status: 'CONFIRMED',
      paid_usd_micro: DUE / 2,
      settle_request: { requested_by: 'admin-1', accept_short_payment: true },
    });
    expect(w.reads()).toBe(0);
    expect(w.queued).toEqual([{ purchase_order_id: 'PO-1', work: 'SETTLE' }]);
    expect(w.mem.settlement()).toBeNull();

    // Asked again before the worker ran (by another ADMIN too): queued again, the first request kept, still no settlement.
    const again = await settlePurchaseOrder(w.deps, { role: 'ADMIN', sub: 'admin-2' } as never, 'PO-1', { accept_short_payment: true });
    expect(again.kind).toBe('QUEUED');
    expect(w.orders.get('PO-1')!.settle_request).toMatchObject({ requested_by: 'admin-1' });
    expect(w.queued).toHaveLength(2);

    await w.drain();
    expect(w.mem.settlement()).toMatchObject({
      status: 'STARTED',
      amount_usd_micro: DUE / 2,
      short_payment: true,
      settled_by: 'admin-1',
      settled_batch_ids: expect.any(Array),
    });
    expect(Object.keys(w.mem.settlement()!.repayments).sort()).toEqual(LOANED.map((b) => b.replace('BATCH', 'LOAN')));
    expect(w.settledCommits).toHaveLength(N);
    expect(new Set(w.settledCommits).size).toBe(N);
    expect(w.writes).toContain('PO-1-repays-0');

    // Once the settlement exists, another call is refused.
    await expect(wire(settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: true }))).rejects.toMatchObject({
      code: 'PO_ALREADY_SETTLED',
      status: 409,
    });
  });

  it('the request path still refuses: below the amount due without accept_short_payment, nothing paid, not confirmed — nothing kept or queued', async () => {
    const w = world();
    await expect(wire(settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: true }))).rejects.toMatchObject({
      code: 'NO_PAYMENT_RECEIVED',
      status: 409,
    });
    await w.pay('2', DUE - 1);
    w.queued.length = 0;
    await expect(wire(settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: false }))).rejects.toMatchObject({
      code: 'SHORT_PAYMENT_NOT_ACCEPTED',
      status: 422,
    });
    expect(w.queued).toEqual([]);
    expect(w.orders.get('PO-1')!.settle_request).toBeUndefined();
    w.orders.set('PO-2', { ...w.orders.get('PO-1')!, purchase_order_id: 'PO-2', status: 'CONFIRMING' });
    await expect(wire(settlePurchaseOrder(w.deps, admin, 'PO-2', { accept_short_payment: true }))).rejects.toMatchObject({
      code: 'PO_NOT_CONFIRMED',
      status: 422,
    });
  });

  it('with a buyer payment meanwhile (the rest of the amount due): both messages at once, one settlement of the whole sum, every batch SETTLED once', async () => {
    const w = world();
    await w.pay('3', DUE / 4);
    w.queued.length = 0;
    expect((await settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: true })).kind).toBe('QUEUED');
    // The rest arrives before the worker ran: the payment event answers at once and queues the worker too.
    expect(await w.pay('4', DUE - DUE / 4)).toMatchObject({ outcome: 'SETTLEMENT_STARTED' });
    expect(w.queued).toHaveLength(2);
    await w.drain();
    expect(w.mem.settlement()).toMatchObject({ amount_usd_micro: DUE, short_payment: false, settled_by: 'admin-1' });
    expect(w.mem.settlement()!.payments).toHaveLength(2);
    expect(w.settledCommits).toHaveLength(N);
    expect(new Set(w.settledCommits).size).toBe(N);
    expect(w.mem.audits.filter(([t]) => t === 'SETTLEMENT_STARTED')).toHaveLength(1);
  });

  it('a payment in full settles it without the ADMIN (the system); an ADMIN call then is refused, as for a small order', async () => {
    const w = world();
    expect(await w.pay('5', DUE)).toMatchObject({ outcome: 'SETTLEMENT_STARTED' });
    // Marked in the order-work index before its message was queued (a lost message is queued again by the reconciler).
    expect(w.workIndex.calls).toEqual(['mark PO-1']);
    await w.drain();
    // The run that carried it out moved it, then, nothing left, took it out of the index.
    expect(w.workIndex.calls).toEqual(['mark PO-1', 'touch PO-1', 'finish PO-1']);
    expect(w.workIndex.marked.size).toBe(0);
    expect(w.mem.settlement()).toMatchObject({ amount_usd_micro: DUE, short_payment: false, settled_by: 'system:lending-vault' });
    // Planned and carried out with batched reads only: no batch read on its own.
    expect(w.singleReads()).toBe(0);
    expect(w.settledCommits).toHaveLength(N);
    await expect(wire(settlePurchaseOrder(w.deps, admin, 'PO-1', { accept_short_payment: false }))).rejects.toMatchObject({
      code: 'PO_ALREADY_SETTLED',
      status: 409,
    });
  });
});
