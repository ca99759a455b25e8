import { ThrottlingException } from '@aws-sdk/client-dynamodb';
import { asStoreError } from '../../shared/adapters/dynamodb/table';
import { DomainError, ProviderUnavailableError, StoreUnavailableError } from '../../shared/domain/errors';
import { providerReference } from '../../shared/domain/ids';
import type { ProviderOrder } from '../../shared/domain/ports/payouts';
import type { Payout } from '../../shared/domain/records';
import { toErrorResponse } from '../../shared/http/handler';
import { createFarmerPayout, startBatchPayout, type PayoutDeps } from '../../shared/use-cases/payouts';
import { reconcilePayouts } from '../../shared/use-cases/reconcile';
import { coop } from './support/api-event';
import {
  aBatch,
  aFarmer,
  fakeBatchStore,
  fakePayoutProvider,
  fakePayoutStore,
  fakePayoutWorkflow,
  fakeRegistryStore,
  aCooperative,
} from './support/fakes';
import { oneShotFaults } from './support/one-shot-faults';

/**
 * Faults on the payout creation path (createPending → provider order → markProcessing →
 * workflow.start): the process dies (or the table is throttled) between two of these writes, then
 * the caller retries and/or the scheduled reconciliation runs. Afterwards every payout is in a
 * correct final state, the provider holds exactly one order per payment (nothing paid twice) and
 * nothing is lost. An in-memory world: payouts with their (batch, reason) guard and the batch's
 * payout sequence, an idempotent provider that counts orders, a workflow that records starts.
 */

const BATCH = aBatch();
const FINAL = new Set(['COMPLETED', 'MANUAL_REVIEW']);
type Step = 'createPending' | 'createOrder' | 'findOrderByReference' | 'markProcessing' | 'start' | 'discardUnsent';

/** A world of one batch awaiting its NET_COFFEE_PAYMENT; `fail(step, err, {after})` makes the next call of `step` throw once (after applying it when `after`). */
function world() {
  let clock = new Date('2026-11-22T09:00:00.000Z');
  let payoutSeq = 0;
  const payouts = new Map<string, Payout>();
  const guards = new Map<string, string>();
  const orders = new Map<string, ProviderOrder>();
  const starts: string[] = [];
  const faults = oneShotFaults<Step>();
  let orderCalls = 0;

  const { before, after } = faults;
  const guardKey = (p: Pick<Payout, 'batch_id' | 'reason'>) => `${p.batch_id}#${p.reason}`;

  const deps: PayoutDeps = {
    now: () => clock,
    registry: fakeRegistryStore({ getFarmer: async (id) => (id === 'F-1' ? aFarmer() : null), getCooperative: async () => aCooperative() }),
    batches: fakeBatchStore({
      get: async (id) => (id === BATCH.batch_id ? { ...BATCH, payout_seq: payoutSeq } : null),
      awaitingPayoutBefore: async () =>
        guards.has(guardKey({ batch_id: BATCH.batch_id, reason: 'NET_COFFEE_PAYMENT' })) ? [] : [BATCH.batch_id],
    }),
    payouts: fakePayoutStore({
      createPending: async (p, expectedSeq) => {
        before('createPending');
        if (guards.has(guardKey(p))) throw new DomainError('DUPLICATE_PAYOUT', `payout exists for ${guardKey(p)}`);
        expect(expectedSeq).toBe(payoutSeq);
        payoutSeq++;
        payouts.set(p.payment_id, { ...p });
        guards.set(guardKey(p), p.payment_id);
        after('createPending');
      },
      discardUnsent: async (p) => {
        before('discardUnsent');
        const cur = payouts.get(p.payment_id);
        if (cur?.status !== 'PENDING') throw new Error(`discardUnsent: ${p.payment_id} is ${cur?.status}`);
        if (cur.updated_at !== p.updated_at) throw new Error(`discardUnsent: ${p.payment_id} changed since it was read`);
        payouts.delete(p.payment_id);
        if (guards.get(guardKey(p)) === p.payment_id) guards.delete(guardKey(p));
        after('discardUnsent');
      },
      markOrderUnknown: async (p, at) => {
        const cur = payouts.get(p.payment_id);
        if (cur?.status !== 'PENDING') throw new Error(`markOrderUnknown: ${p.payment_id} is ${cur?.status}`);
        const next: Payout = { ...cur, order_unknown: true, updated_at: at };
        payouts.set(p.payment_id, next);
        return { ...next };
      },
      claimOrderUnknown: async (batchId, reason, at) => {
        const id = guards.get(guardKey({ batch_id: batchId, reason }));
        const cur = id ? payouts.get(id) : undefined;
        if (cur?.status !== 'PENDING' || !cur.order_unknown) return null;
        const { order_unknown: _claimed, ...rest } = cur;
        const next: Payout = { ...rest, updated_at: at };
        payouts.set(cur.payment_id, next);
        return { ...next };
      },
      markProcessing: async (p, order, at) => {
        before('markProcessing');
        const cur = payouts.get(p.payment_id);
        if (cur?.status !== 'PENDING') throw new Error(`markProcessing: ${p.payment_id} is ${cur?.status}`);
        const next: Payout = {
          ...cur,
          status: 'PROCESSING',
          provider_order_id: order.order_id,
          amount_ugx: order.amount_ugx,
          exchange_rate: order.exchange_rate,
          updated_at: at,
        };
        payouts.set(p.payment_id, next);
        after('markProcessing');
        return next;
      },
      recordSettlement: async (p, s, at) => {
        const cur = payouts.get(p.payment_id)!;
        if (cur.status === 'COMPLETED') return 'IGNORED';
        payouts.set(p.payment_id, { ...cur, status: 'COMPLETED', amount_ugx: s.amount_ugx, completed_at: s.settled_at, updated_at: at });
        return 'APPLIED';
      },
      openBefore: async (cutoff) =>
        [...payouts.values()].filter((p) => !FINAL.has(p.status) && p.updated_at < cutoff).map((p) => ({ ...p })),
      get: async (id) => (payouts.has(id) ? { ...payouts.get(id)! } : null),
    }),
    provider: fakePayoutProvider({
      quote: async () => ({ quote_id: 'q1', rate: '3700.25', expires_at: '2026-11-22T10:00:00.000Z' }),
      createOrder: async (input) => {
        before('createOrder');
        orderCalls++;
        let order = orders.get(input.reference); // idempotent by reference, as the provider is
        if (!order) {
          order = {
            order_id: `ord_${orders.size + 1}`,
            reference: input.reference,
            status: 'PENDING',
            amount_usd_micro: input.amount_usd_micro,
            amount_ugx: 2_359_350,
            exchange_rate: '3700.25',
            recipient: input.recipient,
            created_at: clock.toISOString(),
          };
          orders.set(input.reference, order);
        }
        after('createOrder');
        return { ...order };
      },
      findOrderByReference: async (ref) => {
        before('findOrderByReference');
        return orders.has(ref) ? { ...orders.get(ref)! } : null;
      },
    }),
    workflow: fakePayoutWorkflow({
      start: async (id) => {
        before('start');
        starts.push(id);
        after('start');
      },
    }),
  };

  return {
    deps,
    payouts,
    orders,
    starts,
    get orderCalls() {
      return orderCalls;
    },
    fail: faults.fail,
    /** Moves the clock on by `s` seconds (reconciliation looks at payouts quiet for 60 s). */
    tick(s: number) {
      clock = new Date(clock.getTime() + s * 1000);
    },
    reconcile() {
      this.tick(120);
      return reconcilePayouts(deps, { staleAfterSeconds: 60 });
    },
    /** The provider settles every order (as its webhook or a status look-up would tell). */
    settleAll() {
      for (const o of orders.values())
        Object.assign(o, { status: 'SETTLED', mobile_money_transaction_id: `MM-${o.order_id}`, settled_at: clock.toISOString() });
    },
  };
}

type World = ReturnType<typeof world>;

/** Exactly one payout, PROCESSING with the one provider order of its own reference, its lifecycle started. */
function expectOnePayoutInFlight(w: World): Payout {
  expect(w.orders.size).toBe(1);
  expect([...w.payouts.values()]).toHaveLength(1);
  const [p] = [...w.payouts.values()];
  const [order] = [...w.orders.values()];
  expect(p).toMatchObject({
    status: 'PROCESSING',
    provider_order_id: order!.order_id,
    batch_id: BATCH.batch_id,
    reason: 'NET_COFFEE_PAYMENT',
  });
  expect(order!.reference).toBe(providerReference(p!.payment_id, 1));
  expect(w.starts).toContain(p!.payment_id);
  return p!;
}

/** After the provider settles: one COMPLETED payout, one settled order, nothing open. */
async function expectSettledOnce(w: World): Promise<void> {
  w.settleAll();
  const report = await w.reconcile();
  expect(report.completed).toBe(1);
  const all = [...w.payouts.values()];
  expect(all).toHaveLength(1);
  expect(all[0]).toMatchObject({ status: 'COMPLETED' });
  expect([...w.orders.values()].filter((o) => o.status === 'SETTLED')).toHaveLength(1);
  // A further run finds nothing to do and creates nothing.
  const again = await w.reconcile();
  expect(again).toMatchObject({ examined: 0, completed: 0, restarted: 0, discarded: 0, batchesStarted: 0 });
  expect(w.orders.size).toBe(1);
}

const killed = () => new Error('process killed (Lambda timeout / crash)');

describe('payout creation: the process dies between two writes, then retry and reconciliation', () => {
  it('no fault: one order, PROCESSING, lifecycle started (baseline of the world)', async () => {
    const w = world();
    const get = jest.spyOn(w.deps.batches, 'get');
    await startBatchPayout(w.deps, BATCH.batch_id);
    expect(get).toHaveBeenCalledTimes(1); // the batch it read is handed to the payout's creation, not read again
    expectOnePayoutInFlight(w);
    expect(w.orderCalls).toBe(1);
    await expectSettledOnce(w);
  });

  it('dies after createPending, before the provider order: reconciliation removes the unsent payout and starts the batch payout once', async () => {
    const w = world();
    w.fail('createOrder', killed());
    await expect(startBatchPayout(w.deps, BATCH.batch_id)).rejects.toThrow('process killed');
    expect([...w.payouts.values()]).toMatchObject([{ status: 'PENDING' }]);
    expect(w.orders.size).toBe(0);

    // The queue redelivers the request: the guard says it was started (nothing new is created).
    await startBatchPayout(w.deps, BATCH.batch_id);
    expect(w.orders.size).toBe(0);

    const report = await w.reconcile();
    expect(report).toMatchObject({ discarded: 1, batchesStarted: 1, batchStartsFailed: 0 });
    const p = expectOnePayoutInFlight(w);
    expect(p.payment_id).toBe('PAY-2026-000001-02'); // the discarded -01 was never sent
    expect(w.orderCalls).toBe(1);
    await expectSettledOnce(w);
  });

  it('dies after the provider order, before markProcessing: the redelivery is a duplicate, reconciliation adopts the existing order (never a second one)', async () => {
    const w = world();
    w.fail('markProcessing', killed());
    await expect(startBatchPayout(w.deps, BATCH.batch_id)).rejects.toThrow('process killed');
    expect(w.orders.size).toBe(1);
    expect([...w.payouts.values()]).toMatchObject([{ status: 'PENDING' }]);

    await startBatchPayout(w.deps, BATCH.batch_id); // DUPLICATE_PAYOUT: swallowed
    const report = await w.reconcile();
    expect(report).toMatchObject({ restarted: 1, discarded: 0, batchesStarted: 0 });
    const p = expectOnePayoutInFlight(w);
    expect(p.payment_id).toBe('PAY-2026-000001-01');
    expect(w.orderCalls).toBe(1);
    await expectSettledOnce(w);
  });

  it('markProcessing applied but its answer lost (throttled after the write): the lifecycle is (re)started by reconciliation', async () => {
    const w = world();
    w.fail('markProcessing', asStoreError(new ThrottlingException({ message: 'throttled', $metadata: { httpStatusCode: 400 } })) as Error, {
      after: true,
    });
    await expect(startBatchPayout(w.deps, BATCH.batch_id)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(w.starts).toHaveLength(0);

    const report = await w.reconcile();
    expect(report).toMatchObject({ restarted: 1 });
    expectOnePayoutInFlight(w);
    expect(w.orderCalls).toBe(1);
    await expectSettledOnce(w);
  });

  it('dies after markProcessing, before workflow.start: reconciliation starts the lifecycle; the provider is asked, not paid again', async () => {
    const w = world();
    w.fail('start', killed());
    await expect(startBatchPayout(w.deps, BATCH.batch_id)).rejects.toThrow('process killed');
    expect([...w.payouts.values()]).toMatchObject([{ status: 'PROCESSING' }]);
    expect(w.starts).toHaveLength(0);

    const report = await w.reconcile();
    expect(report).toMatchObject({ restarted: 1 });
    expectOnePayoutInFlight(w);
    expect(w.orderCalls).toBe(1);
    await expectSettledOnce(w);
  });

  it('dies in the middle of reconciliation too (discard throws once): the next run finishes the job, still one order', async () => {
    const w = world();
    w.fail('createOrder', killed());
    await expect(startBatchPayout(w.deps, BATCH.batch_id)).rejects.toThrow('process killed');
    w.fail('discardUnsent', killed());
    const first = await w.reconcile();
    expect(first).toMatchObject({ discarded: 0, batchesStarted: 0 }); // the guard still stands
    const second = await w.reconcile();
    expect(second).toMatchObject({ discarded: 1, batchesStarted: 1 });
    expectOnePayoutInFlight(w);
    await expectSettledOnce(w);
  });

  it('the provider created the order but every answer was lost (timeouts/5xx → unreachable): the order is found by its reference and adopted, never placed twice', async () => {
    // Failed before the fix: the payout was discarded as "unsent", the redelivery created payout -02
    // with reference -02-A1, and the provider held two orders for one batch (paid twice).
    const w = world();
    w.fail('createOrder', new ProviderUnavailableError(), { after: true }); // the order exists; the client saw only failures
    await startBatchPayout(w.deps, BATCH.batch_id);
    const p = expectOnePayoutInFlight(w);
    expect(p.payment_id).toBe('PAY-2026-000001-01');

    await startBatchPayout(w.deps, BATCH.batch_id); // the queue redelivers: a duplicate
    await w.reconcile();
    expectOnePayoutInFlight(w);
    await expectSettledOnce(w);
  });

  it('the same, and the look-up fails too: 503 PROVIDER_UNAVAILABLE, the payout kept PENDING (not discarded blind); reconciliation adopts the order', async () => {
    const w = world();
    w.fail('createOrder', new ProviderUnavailableError(), { after: true });
    w.fail('findOrderByReference', new ProviderUnavailableError());
    const err = await startBatchPayout(w.deps, BATCH.batch_id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(toErrorResponse(err, 'req-1').statusCode).toBe(503);
    expect([...w.payouts.values()]).toMatchObject([{ payment_id: 'PAY-2026-000001-01', status: 'PENDING' }]);

    expect([...w.payouts.values()]).toMatchObject([{ order_unknown: true }]);

    // Nobody retries: reconciliation finds the order by its reference and adopts it.
    const report = await w.reconcile();
    expect(report).toMatchObject({ restarted: 1, discarded: 0, batchesStarted: 0 });
    expectOnePayoutInFlight(w);
    expect(w.orderCalls).toBe(1);
    await expectSettledOnce(w);
  });

  it('POST /payments/farmer-payout: 503 PROVIDER_UNAVAILABLE with the order unknown, then the caller simply retries: 201 with the same payout and the same one order', async () => {
    // Failed before: the payout stayed PENDING behind its guard and every retry answered 409
    // DUPLICATE_PAYOUT until reconciliation (5 minutes), though the 503 said "retry".
    const w = world();
    w.fail('createOrder', new ProviderUnavailableError(), { after: true }); // placed, answer lost
    w.fail('findOrderByReference', new ProviderUnavailableError());
    const input = {
      farmer_id: 'F-1',
      batch_id: BATCH.batch_id,
      cooperative_id: 'COOP-1',
      reason: 'NET_COFFEE_PAYMENT' as const,
      amount: { ugx: BATCH.payment_amount_ugx },
    };
    const err = await createFarmerPayout(w.deps, coop('COOP-1'), input).catch((e: unknown) => e);
    const res = toErrorResponse(err, 'req-1');
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body as string)).toMatchObject({
      error: { code: 'PROVIDER_UNAVAILABLE', details: { payout_id: 'PAY-2026-000001-01' } },
    });

    const retried = await createFarmerPayout(w.deps, coop('COOP-1'), input);
    expect(retried).toMatchObject({ payment_id: 'PAY-2026-000001-01', status: 'PROCESSING' });
    expectOnePayoutInFlight(w);
    expect(w.starts).toEqual(['PAY-2026-000001-01']);
    // A second retry finds a payout in flight: a duplicate, not a second payment.
    await expect(createFarmerPayout(w.deps, coop('COOP-1'), input)).rejects.toMatchObject({ code: 'DUPLICATE_PAYOUT' });
    await expectSettledOnce(w);
  });

  it('the same when the lost call had placed nothing: the retry places the one order itself', async () => {
    const w = world();
    w.fail('createOrder', new ProviderUnavailableError()); // nothing placed
    w.fail('findOrderByReference', new ProviderUnavailableError()); // and the provider cannot say so
    const input = {
      farmer_id: 'F-1',
      batch_id: BATCH.batch_id,
      cooperative_id: 'COOP-1',
      reason: 'NET_COFFEE_PAYMENT' as const,
      amount: { ugx: BATCH.payment_amount_ugx },
    };
    await expect(createFarmerPayout(w.deps, coop('COOP-1'), input)).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(w.orders.size).toBe(0);
    expect(await createFarmerPayout(w.deps, coop('COOP-1'), input)).toMatchObject({
      payment_id: 'PAY-2026-000001-01',
      status: 'PROCESSING',
    });
    expectOnePayoutInFlight(w);
    await expectSettledOnce(w);
  });

  it('unreachable and truly nothing placed: the payout is removed at once and the retry pays once', async () => {
    const w = world();
    w.fail('createOrder', new ProviderUnavailableError());
    await expect(startBatchPayout(w.deps, BATCH.batch_id)).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(w.payouts.size).toBe(0);
    expect(w.orders.size).toBe(0);
    await startBatchPayout(w.deps, BATCH.batch_id);
    expectOnePayoutInFlight(w);
    await expectSettledOnce(w);
  });

  it('POST /payments/farmer-payout: the table throttled at createPending answers 503 AUDIT_LOG_UNAVAILABLE with Retry-After; nothing written; the retry pays once', async () => {
    const w = world();
    w.fail(
      'createPending',
      asStoreError(
        new ThrottlingException({
          message: 'Rate of requests exceeds the allowed throughput.',
          $metadata: { httpStatusCode: 400, attempts: 3 },
        }),
      ) as Error,
    );
    const input = {
      farmer_id: 'F-1',
      batch_id: BATCH.batch_id,
      cooperative_id: 'COOP-1',
      reason: 'NET_COFFEE_PAYMENT' as const,
      amount: { ugx: BATCH.payment_amount_ugx },
    };
    const err = await createFarmerPayout(w.deps, coop('COOP-1'), input).catch((e: unknown) => e);
    const res = toErrorResponse(err, 'req-1');
    expect(res.statusCode).toBe(503);
    expect(res.headers).toMatchObject({ 'Retry-After': '5' });
    expect(JSON.parse(res.body as string)).toMatchObject({ error: { code: 'AUDIT_LOG_UNAVAILABLE' } });
    expect(res.body).not.toMatch(/throughput/i);
    expect(w.payouts.size).toBe(0);
    expect(w.orders.size).toBe(0);

    const created = await createFarmerPayout(w.deps, coop('COOP-1'), input);
    expect(created.status).toBe('PROCESSING');
    expectOnePayoutInFlight(w);
    // A second retry by an impatient client is a duplicate, not a second payment.
    await expect(createFarmerPayout(w.deps, coop('COOP-1'), input)).rejects.toMatchObject({ code: 'DUPLICATE_PAYOUT' });
    expect(w.orderCalls).toBe(1);
    await expectSettledOnce(w);
  });
});
