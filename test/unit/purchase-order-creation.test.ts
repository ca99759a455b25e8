import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_TABLE_NAME } from '../../infra/local/dynamodb-local';
import { BatchRepository } from '../../shared/adapters/dynamodb/batch-repo';
import { CustodyRepository } from '../../shared/adapters/dynamodb/custody-repo';
import { keys } from '../../shared/adapters/dynamodb/keys';
import { documentClient } from '../../shared/adapters/dynamodb/table';
import { CREATION_STEP_BATCHES, MAX_PURCHASE_ORDER_BATCHES } from '../../shared/domain/purchase-order-limits';
import type { OrderWorkMessage } from '../../shared/domain/ports/batches';
import type { PurchaseOrder } from '../../shared/domain/records';
import { ROUTE_TIMEOUT_SECONDS } from '../../shared/needs';
import { purchaseOrderView } from '../../shared/http/views';
import { logger } from '../../shared/runtime/logger';
import { continueCreation } from '../../shared/use-cases/purchase-orders';
import { bindAsTheWorker, requestOrder, seedOrderBatches, timeOrderCreation } from '../support/order-batches';
import { useOwnDynamoDbTable } from './support/own-dynamodb-table';

/**
 * Creating purchase orders of many batches on DynamoDB Local
 * (docs/api/batches-and-custody.md#purchase-orders-of-many-batches), with the repositories
 * POST /purchase-orders and the order worker use: the request answers CREATING at once, having
 * bound nothing; the worker binds the batches 40 to a transaction with the order's progress, so a
 * run stopped half-way (its budget, a crash) leaves a resumable order and a step done again writes
 * nothing; two orders over the same batches: exactly one wins, the other FAILED with every batch
 * it bound released.
 */

const endpoint = useOwnDynamoDbTable();
let next = 1;
/** `n` fresh batches (ids increasing from call to call). */
const fresh = async (n: number): Promise<string[]> => {
  const ids = await seedOrderBatches(endpoint(), next, n);
  next += n;
  return ids;
};

beforeAll(() => {
  logger.setLogLevel('SILENT');
});

/** The batch as stored: the order it is on, and its audit head. */
async function stored(batchId: string): Promise<{ purchase_order_id?: string; audit_seq: number }> {
  const r = await documentClient().send(new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: keys.batch(batchId), ConsistentRead: true }));
  return r.Item as { purchase_order_id?: string; audit_seq: number };
}

/** The types of a batch's audit entries naming `poId`, in order. */
async function orderEntries(batchId: string, poId: string): Promise<string[]> {
  const r = await documentClient().send(
    new QueryCommand({
      TableName: LOCAL_TABLE_NAME,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.audit(batchId, 0).PK },
      ConsistentRead: true,
    }),
  );
  return (r.Items ?? []).filter((e) => e.payload?.purchase_order_id === poId).map((e) => e.type as string);
}

/** For each of `batchIds`: the order it is on ('' for none). */
const ordersOf = (batchIds: readonly string[]) => Promise.all(batchIds.map(async (b) => (await stored(b)).purchase_order_id ?? ''));

describe('creating a purchase order above one transaction (DynamoDB Local)', () => {
  it(`of ${MAX_PURCHASE_ORDER_BATCHES} batches: answered CREATING well within the route's timeout, nothing bound; the order worker binds every batch once (DRAFT)`, async () => {
    const ids = await fresh(MAX_PURCHASE_ORDER_BATCHES);
    const { answerMs, answer, po, runs } = await timeOrderCreation(ids);
    expect(answer).toMatchObject({ status: 'CREATING', bound_batch_count: 0 });
    // The request reads the batches and stores the order: no per-batch write (measured 0.3–0.5 s at load 5–6).
    expect(answerMs).toBeLessThan((ROUTE_TIMEOUT_SECONDS * 1000) / 2);
    expect(po).toMatchObject({ status: 'DRAFT', bound_batch_count: MAX_PURCHASE_ORDER_BATCHES, batch_ids: ids });
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(new Set(await ordersOf(ids))).toEqual(new Set([po.purchase_order_id]));
    // Each batch's audit log has the order's creation once (spot checks across the steps), on an unbroken chain.
    for (const b of [ids[0]!, ids[39]!, ids[40]!, ids[999]!, ids[1999]!]) {
      expect(await orderEntries(b, po.purchase_order_id)).toEqual(['PURCHASE_ORDER_CREATED']);
      expect((await stored(b)).audit_seq).toBe(2);
      expect((await new BatchRepository().auditEntries(b)).map((e) => e.sequence_number)).toEqual([2]);
    }
  }, 240_000);

  it('a run stopped half-way leaves it CREATING with its progress (a prefix in binding order bound); a step done again writes nothing; the next run finishes it', async () => {
    const ids = (await fresh(200)).reverse(); // given in descending order: bound in ascending order of id
    const queued: OrderWorkMessage[] = [];
    const answer = await requestOrder(ids, queued);
    expect(queued).toEqual([{ purchase_order_id: answer.purchase_order_id, work: 'CREATE' }]);
    const custody = new CustodyRepository();
    const batches = new BatchRepository();
    // A run whose budget ends after two steps.
    let checks = 0;
    const stopsAfterTwo = { batches, custody, now: () => new Date(++checks > 2 ? 8.64e15 : Date.now()) };
    const half = await continueCreation(stopsAfterTwo, (await custody.getPurchaseOrder(answer.purchase_order_id))!, Date.now() + 60_000);
    expect(half).toMatchObject({ status: 'CREATING', bound_batch_count: 2 * CREATION_STEP_BATCHES });
    const order = [...ids].sort();
    const on = await ordersOf(order);
    expect(on.slice(0, 80).every((p) => p === answer.purchase_order_id)).toBe(true);
    expect(on.slice(80).every((p) => p === '')).toBe(true);

    // A crash after the second step's transaction, before its run went on: the step is done again.
    const step = order.slice(CREATION_STEP_BATCHES, 2 * CREATION_STEP_BATCHES);
    const again = await custody.bindPurchaseOrderStep(half, CREATION_STEP_BATCHES, step, await batches.getMany(step));
    expect(again).toEqual({ kind: 'ALREADY' });
    expect((await stored(step[0]!)).audit_seq).toBe(2);

    const { po } = await bindAsTheWorker(answer.purchase_order_id);
    expect(po).toMatchObject({ status: 'DRAFT', bound_batch_count: 200 });
    expect(new Set(await ordersOf(ids))).toEqual(new Set([po.purchase_order_id]));
    for (const b of [order[0]!, order[79]!, order[80]!, order[199]!]) {
      expect(await orderEntries(b, po.purchase_order_id)).toEqual(['PURCHASE_ORDER_CREATED']);
    }
  });

  it('two orders over shared batches, bound at once: exactly one is DRAFT; the other FAILED, naming a shared batch, every batch it bound released', async () => {
    for (let round = 0; round < 3; round++) {
      // Each order has 60 batches of its own (lower ids: bound first) and 100 shared.
      const ownA = await fresh(60);
      const ownB = await fresh(60);
      const shared = await fresh(100);
      const queued: OrderWorkMessage[] = [];
      // Given in different orders (A: the shared batches' upper half first; B: them in descending order): bound in order of id.
      const a = await requestOrder([...shared.slice(50), ...ownA, ...shared.slice(0, 50)], queued);
      const b = await requestOrder([...[...shared].reverse(), ...ownB], queued);
      const [ra, rb] = await Promise.all([bindAsTheWorker(a.purchase_order_id), bindAsTheWorker(b.purchase_order_id)]);
      const statuses = [ra.po.status, rb.po.status].sort();
      expect(statuses).toEqual(['DRAFT', 'FAILED']);
      const [winner, loser, loserOwn] = ra.po.status === 'DRAFT' ? [ra.po, rb.po, ownB] : [rb.po, ra.po, ownA];
      expect(loser.creation_error).toMatchObject({ code: 'BATCH_ON_ANOTHER_ORDER' });
      expect(shared).toContain(loser.creation_error!.batch_id);
      expect(new Set(await ordersOf(winner.batch_ids))).toEqual(new Set([winner.purchase_order_id]));
      expect(new Set(await ordersOf(loserOwn))).toEqual(new Set(['']));
      // The loser's first step (40 of its own batches) was bound and released: created, then withdrawn, once each. Its
      // second step (its 20 other own batches and the lowest shared ones) failed whole: nothing of it written.
      for (const bId of [loserOwn[0]!, loserOwn[39]!])
        expect(await orderEntries(bId, loser.purchase_order_id)).toEqual(['PURCHASE_ORDER_CREATED', 'PURCHASE_ORDER_WITHDRAWN']);
      for (const bId of [loserOwn[40]!, loserOwn[59]!, shared[0]!]) expect(await orderEntries(bId, loser.purchase_order_id)).toEqual([]);
      expect(purchaseOrderView(loser)).toMatchObject({ status: 'FAILED', bound_batch_count: 0, batch_count: 160 });
      // Released batches can go on another order.
      const again = await requestOrder(loserOwn, []);
      expect((await bindAsTheWorker(again.purchase_order_id)).po.status).toBe('DRAFT');
    }
  }, 180_000);

  it('a small order takes a batch a CREATING order has not bound yet: the large order FAILS there and releases the rest; a small order naming a bound batch is refused', async () => {
    const ids = await fresh(120);
    const large = await requestOrder(ids, []);
    const last = [...ids].sort()[119]!;
    const small = await requestOrder([last], []);
    expect(small.status).toBe('DRAFT');
    const { po } = await bindAsTheWorker(large.purchase_order_id);
    expect(po).toMatchObject({ status: 'FAILED', creation_error: { code: 'BATCH_ON_ANOTHER_ORDER', batch_id: last } });
    expect(await ordersOf(ids)).toEqual(ids.map((b) => (b === last ? small.purchase_order_id : '')));

    const other = await fresh(50);
    const done = (await bindAsTheWorker((await requestOrder(other, [])).purchase_order_id)).po;
    expect(done.status).toBe('DRAFT');
    await expect(requestOrder([other[10]!], [])).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('a batch of a RELEASING order met again (a crash during the release): released once, the order FAILED', async () => {
    const ids = await fresh(90);
    const custody = new CustodyRepository();
    const batches = new BatchRepository();
    const answer = await requestOrder(ids, []);
    const order = [...ids].sort();
    const first = order.slice(0, CREATION_STEP_BATCHES);
    await custody.bindPurchaseOrderStep(answer, 0, first, await batches.getMany(first));
    const error = { code: 'BATCH_ON_ANOTHER_ORDER' as const, message: 'test', batch_id: order[50]! };
    expect(await custody.failPurchaseOrderCreation(answer.purchase_order_id, CREATION_STEP_BATCHES, error)).toBe(true);
    const releasing = (await custody.getPurchaseOrder(answer.purchase_order_id)) as PurchaseOrder;
    // The first run crashed after releasing 20 of them, before the order was FAILED: the redelivered message releases the rest.
    await custody.releasePurchaseOrderBatches({ ...releasing }, first.slice(0, 20));
    await documentClient().send(
      new UpdateCommand({
        TableName: LOCAL_TABLE_NAME,
        Key: keys.purchaseOrder(answer.purchase_order_id),
        UpdateExpression: 'SET #s = :r',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':r': 'RELEASING' },
      }),
    );
    const { po } = await bindAsTheWorker(answer.purchase_order_id);
    expect(po.status).toBe('FAILED');
    expect(new Set(await ordersOf(ids))).toEqual(new Set(['']));
    for (const b of [first[0]!, first[39]!])
      expect(await orderEntries(b, answer.purchase_order_id)).toEqual(['PURCHASE_ORDER_CREATED', 'PURCHASE_ORDER_WITHDRAWN']);
  });
});
