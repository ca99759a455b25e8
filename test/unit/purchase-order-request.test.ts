import type { OrderWorkMessage } from '../../shared/domain/ports/batches';
import { ORDER_TRANSACTION_MAX_BATCHES } from '../../shared/domain/purchase-order-limits';
import type { Batch, PurchaseOrder } from '../../shared/domain/records';
import { confirmPurchaseOrder, createPurchaseOrder } from '../../shared/use-cases/purchase-orders';
import { aBatch, fakeBatchStore, fakeCustodyStore } from './support/fakes';

/**
 * POST /purchase-orders's use case (docs/api/batches-and-custody.md#purchase-orders-of-many-batches):
 * up to 40 batches the order is created and bound in the request on one batched read; above, it is
 * stored CREATING and its binding queued for the order worker, nothing bound in the request (the
 * worker's steps run on DynamoDB Local in purchase-order-creation.test.ts); an order not created
 * yet cannot be confirmed.
 */
const COOP = 'COOP-1';
const caller = { role: 'COOPERATIVE', sub: 'exporter-1', cooperative_id: COOP, duties: ['EXPORTER'] } as never;
const anOrder = (ids: string[]): PurchaseOrder => ({
  purchase_order_id: 'PO-1',
  status: 'DRAFT',
  cooperative_id: COOP,
  batch_ids: ids,
  buyer: 'Hamburg Coffee Importers GmbH',
  price_usd_per_kg: 6.4,
  created_at: '2026-11-27T00:00:00.000Z',
  created_by: 'exporter-1',
});

describe('creating a purchase order', () => {
  const idsOf = (n: number) => Array.from({ length: n }, (_, i) => `BATCH-2026-${String(i + 1).padStart(6, '0')}`);
  const reading = (readMany: string[][]) => ({
    getMany: async (batchIds: readonly string[]) => {
      readMany.push([...batchIds]);
      return batchIds.map((id) => aBatch({ batch_id: id, cooperative_id: COOP, outturn_kg: 50 }));
    },
  });

  it('of at most 40 batches: reads them in one batched read and binds them on those reads, in the request (DRAFT)', async () => {
    const ids = idsOf(ORDER_TRANSACTION_MAX_BATCHES);
    const readMany: string[][] = [];
    let bound: { po: PurchaseOrder; heads?: readonly Batch[] } | undefined;
    const po = await createPurchaseOrder(
      {
        batches: reading(readMany),
        custody: fakeCustodyStore({
          createPurchaseOrder: async (order, heads) => {
            bound = { po: order, ...(heads ? { heads } : {}) };
          },
        }),
        orderWork: { send: async () => Promise.reject(new Error('a small order queues nothing')) },
        now: () => new Date('2026-11-27T00:00:00Z'),
      },
      caller,
      { batch_ids: ids, buyer: 'Hamburg Coffee Importers GmbH', price_usd_per_kg: 6.4 },
    );
    expect(readMany).toEqual([ids]);
    expect(po.status).toBe('DRAFT');
    expect(bound?.po).toBe(po);
    expect(bound?.heads?.map((b) => b.batch_id)).toEqual(ids);
  });

  it('above 40 batches: stores the order CREATING and queues its binding for the order worker; nothing is bound in the request', async () => {
    const ids = idsOf(250);
    const readMany: string[][] = [];
    const begun: PurchaseOrder[] = [];
    const queued: OrderWorkMessage[] = [];
    const po = await createPurchaseOrder(
      {
        batches: reading(readMany),
        custody: fakeCustodyStore({
          beginPurchaseOrderCreation: async (order) => {
            begun.push(order);
          },
        }),
        orderWork: { send: async (m) => void queued.push(m) },
        now: () => new Date('2026-11-27T00:00:00Z'),
      },
      caller,
      { batch_ids: ids, buyer: 'Hamburg Coffee Importers GmbH', price_usd_per_kg: 6.4 },
    );
    expect(readMany).toEqual([ids]);
    expect(po).toMatchObject({ status: 'CREATING', bound_batch_count: 0, amount_due_usd_micro: 250 * 50 * 6_400_000 });
    expect(begun).toEqual([po]);
    expect(queued).toEqual([{ purchase_order_id: po.purchase_order_id, work: 'CREATE' }]);
  });

  it('above 40 batches, when the work cannot be queued: the order is FAILED (nothing was bound) and the error is thrown', async () => {
    const failed: Array<[string, number, string]> = [];
    const released: Array<[string, number]> = [];
    await expect(
      createPurchaseOrder(
        {
          batches: reading([]),
          custody: fakeCustodyStore({
            beginPurchaseOrderCreation: async () => undefined,
            failPurchaseOrderCreation: async (id, n, e) => {
              failed.push([id, n, e.code]);
              return true;
            },
            releasePurchaseOrderBatches: async (order, bound) => {
              released.push([order.status, bound.length]);
            },
          }),
          orderWork: { send: async () => Promise.reject(new Error('queue unavailable')) },
          now: () => new Date('2026-11-27T00:00:00Z'),
        },
        caller,
        { batch_ids: idsOf(41), buyer: 'Hamburg Coffee Importers GmbH', price_usd_per_kg: 6.4 },
      ),
    ).rejects.toThrow('queue unavailable');
    expect(failed.map(([, n, code]) => [n, code])).toEqual([[0, 'NOT_QUEUED']]);
    expect(released).toEqual([['RELEASING', 0]]);
  });

  it.each(['CREATING', 'RELEASING', 'FAILED'] as const)(
    'a %s order cannot be confirmed: 409 PO_NOT_READY, nothing written',
    async (status) => {
      const order = { ...anOrder(idsOf(60)), status };
      // Every write of the fake store throws ("unexpected call"): only the read is allowed.
      const custody = fakeCustodyStore({ getPurchaseOrder: async () => structuredClone(order) });
      const deps = { batches: fakeBatchStore(), custody, orderWork: { send: async () => Promise.reject(new Error('nothing to queue')) } };
      await expect(confirmPurchaseOrder({ ...deps, now: () => new Date() } as never, caller, 'PO-1')).rejects.toMatchObject({
        code: 'PO_NOT_READY',
      });
    },
  );
});
