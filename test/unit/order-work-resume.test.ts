import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_TABLE_NAME } from '../../infra/local/dynamodb-local';
import { BatchRepository } from '../../shared/adapters/dynamodb/batch-repo';
import { CustodyRepository } from '../../shared/adapters/dynamodb/custody-repo';
import { keys } from '../../shared/adapters/dynamodb/keys';
import { OrderWorkRepository } from '../../shared/adapters/dynamodb/order-work-index';
import { SettlementRepository } from '../../shared/adapters/dynamodb/settlement-repo';
import { documentClient } from '../../shared/adapters/dynamodb/table';
import type { OrderWorkMessage } from '../../shared/domain/ports/batches';
import { CREATION_STEP_BATCHES } from '../../shared/domain/purchase-order-limits';
import type { PurchaseOrder } from '../../shared/domain/records';
import { logger } from '../../shared/runtime/logger';
import { requeueStalledOrderWork } from '../../shared/use-cases/order-work-sweep';
import { bindAsTheWorker, seedOrderBatches } from '../support/order-batches';
import { useOwnDynamoDbTable } from './support/own-dynamodb-table';

/**
 * Large purchase orders resumed without an operator (docs/api/batches-and-custody.md#resuming-stalled-orders),
 * on DynamoDB Local with the repositories the routes, the order worker and the purchase-order
 * reconciler use: an order whose work message never reached the worker (the request killed between
 * storing the order and queueing it) or was dead-lettered is found in the ORDER_WORK index once its
 * work has not moved for the threshold, and its message queued again, once; an order whose work
 * moves, or that is done, is left alone.
 */

const endpoint = useOwnDynamoDbTable();
let next = 1;
const custody = new CustodyRepository();
const index = new OrderWorkRepository();
/** The reconciler's threshold (RECONCILE_AFTER_SECONDS' default). */
const STALE_S = 300;
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

beforeAll(() => {
  logger.setLogLevel('SILENT');
});

/** A large order over `n` fresh batches, stored CREATING as POST /purchase-orders stores it, created `at`. */
async function storedCreating(n: number, at: string): Promise<PurchaseOrder> {
  const ids = await seedOrderBatches(endpoint(), next, n);
  next += n;
  const po: PurchaseOrder = {
    purchase_order_id: `PO-RESUME-${String(next).padStart(6, '0')}`,
    status: 'CREATING',
    cooperative_id: 'ORDER-COOP',
    batch_ids: ids,
    buyer: 'Hamburg Coffee Importers GmbH',
    price_usd_per_kg: 6.4,
    bound_batch_count: 0,
    created_at: at,
    created_by: 'order-exporter',
  };
  await custody.beginPurchaseOrderCreation(po);
  return po;
}

/** One run of the purchase-order reconciler at `now` (default: now) with threshold `staleS`; the messages it queued for `id`. */
async function sweep(id: string, now = new Date(), staleS = STALE_S): Promise<OrderWorkMessage[]> {
  const queued: OrderWorkMessage[] = [];
  await requeueStalledOrderWork({ orderWorkIndex: index, orderWork: { send: async (m) => void queued.push(m) }, now: () => now }, staleS);
  return queued.filter((m) => m.purchase_order_id === id);
}

/** The order item's ORDER_WORK index entry, if any. */
async function indexEntry(id: string): Promise<{ GSI2PK?: string; GSI2SK?: string }> {
  const r = await documentClient().send(new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: keys.purchaseOrder(id), ConsistentRead: true }));
  return { GSI2PK: r.Item?.GSI2PK, GSI2SK: r.Item?.GSI2SK };
}

/** A DRAFT large order (its batches bound by the worker) made CONFIRMING at `at`, as the confirm route makes it. */
async function confirming(n: number, at: string): Promise<PurchaseOrder> {
  const created = await storedCreating(n, minutesAgo(60));
  const { po } = await bindAsTheWorker(created.purchase_order_id);
  expect(po.status).toBe('DRAFT');
  return custody.beginPurchaseOrderConfirmation(po, 'order-exporter', at);
}

describe('large orders whose work message was lost or dead-lettered are resumed (DynamoDB Local)', () => {
  it('a CREATING order no message will reach (the request killed before queueing): its CREATE work is queued again once stale, then the worker makes it DRAFT and it leaves the index', async () => {
    const po = await storedCreating(60, minutesAgo(10));
    expect((await indexEntry(po.purchase_order_id)).GSI2PK).toBe('ORDER_WORK');
    expect(await sweep(po.purchase_order_id)).toEqual([{ purchase_order_id: po.purchase_order_id, work: 'CREATE' }]);
    // Queued again once: the re-queue moved the order's work, so the next run (and one beside it) finds nothing to do.
    expect(await sweep(po.purchase_order_id)).toEqual([]);
    const { po: after } = await bindAsTheWorker(po.purchase_order_id);
    expect(after).toMatchObject({ status: 'DRAFT', bound_batch_count: 60, order_work_requeues: 1 });
    expect(await indexEntry(po.purchase_order_id)).toEqual({ GSI2PK: undefined, GSI2SK: undefined });
    expect(await sweep(po.purchase_order_id, new Date(Date.now() + 3_600_000))).toEqual([]);
  });

  it('a fresh CREATING order is not queued again; one whose steps keep moving is not either, until they stop', async () => {
    const fresh = await storedCreating(50, new Date().toISOString());
    expect(await sweep(fresh.purchase_order_id)).toEqual([]);
    // A threshold scaled down (the local stack: 3 s) still waits a run's hold (55 s): a run under way is not doubled.
    const recent = await storedCreating(45, new Date(Date.now() - 20_000).toISOString());
    expect(await sweep(recent.purchase_order_id, new Date(), 3)).toEqual([]);
    expect(await sweep(recent.purchase_order_id, new Date(Date.now() + 40_000), 3)).toEqual([
      { purchase_order_id: recent.purchase_order_id, work: 'CREATE' },
    ]);

    const old = await storedCreating(90, minutesAgo(20));
    // A run recorded a step just now (then its message was dead-lettered): its work moved.
    const first = [...old.batch_ids].sort().slice(0, CREATION_STEP_BATCHES);
    expect(await custody.bindPurchaseOrderStep(old, 0, first, await new BatchRepository().getMany(first))).toEqual({ kind: 'BOUND' });
    expect(await sweep(old.purchase_order_id)).toEqual([]);
    // Nothing moves for longer than the threshold: queued again.
    expect(await sweep(old.purchase_order_id, new Date(Date.now() + (STALE_S + 5) * 1000))).toEqual([
      { purchase_order_id: old.purchase_order_id, work: 'CREATE' },
    ]);
  });

  it('two reconcilers at once queue a stalled order once', async () => {
    const po = await storedCreating(45, minutesAgo(30));
    const [a, b] = await Promise.all([sweep(po.purchase_order_id), sweep(po.purchase_order_id)]);
    expect([...a, ...b]).toEqual([{ purchase_order_id: po.purchase_order_id, work: 'CREATE' }]);
  });

  it('a CONFIRMING order whose CONFIRM message was dead-lettered: queued again; progress recorded keeps it from the next look; CONFIRMED leaves the index', async () => {
    const po = await confirming(120, minutesAgo(15));
    expect(po.status).toBe('CONFIRMING');
    expect(await sweep(po.purchase_order_id)).toEqual([{ purchase_order_id: po.purchase_order_id, work: 'CONFIRM' }]);
    expect(await custody.recordConfirmationProgress(po.purchase_order_id, 0, 100, false)).toBe(true);
    expect(await sweep(po.purchase_order_id, new Date(Date.now() + 60_000))).toEqual([]);
    expect(await custody.recordConfirmationProgress(po.purchase_order_id, 100, 120, true)).toBe(true);
    expect(await indexEntry(po.purchase_order_id)).toEqual({ GSI2PK: undefined, GSI2SK: undefined });
    expect(await sweep(po.purchase_order_id, new Date(Date.now() + 3_600_000))).toEqual([]);
  });

  it('SETTLE work (a payment, an ADMIN request) dead-lettered: queued again; a run that read the order before a later request does not take it out of the index', async () => {
    const po = await confirming(41, minutesAgo(40));
    await custody.recordConfirmationProgress(po.purchase_order_id, 0, 41, true);
    const id = po.purchase_order_id;
    // An ADMIN's settle request marks the work in its own write.
    const settlements = new SettlementRepository();
    expect(
      await settlements.requestSettlement(id, { requested_by: 'admin-1', requested_at: minutesAgo(12), accept_short_payment: true }),
    ).toBe(true);
    expect(await sweep(id)).toEqual([{ purchase_order_id: id, work: 'SETTLE' }]);
    // A run reads the order; a payment's SETTLE work is marked meanwhile: the run's finish leaves the order in the index.
    const seen = (await custody.getPurchaseOrder(id))!.order_work_seq;
    expect(seen).toBe(1);
    await index.markSettleWork(id, minutesAgo(11));
    expect(await index.finishSettleWork(id, seen)).toBe(false);
    expect(await sweep(id)).toEqual([{ purchase_order_id: id, work: 'SETTLE' }]);
    // The run of that later message finds nothing left: the order leaves the index.
    expect(await index.finishSettleWork(id, (await custody.getPurchaseOrder(id))!.order_work_seq)).toBe(true);
    expect(await sweep(id, new Date(Date.now() + 3_600_000))).toEqual([]);
  });

  it('a SETTLE mark on an order still CONFIRMING stays with its confirmation, which the reconciler resumes as CONFIRM', async () => {
    const po = await confirming(50, minutesAgo(25));
    await index.markSettleWork(po.purchase_order_id, minutesAgo(25));
    expect(await index.finishSettleWork(po.purchase_order_id, (await custody.getPurchaseOrder(po.purchase_order_id))!.order_work_seq)).toBe(
      false,
    );
    expect(await sweep(po.purchase_order_id)).toEqual([{ purchase_order_id: po.purchase_order_id, work: 'CONFIRM' }]);
  });
});
