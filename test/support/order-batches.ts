import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { localTableClient, LOCAL_TABLE_NAME } from '../../infra/local/dynamodb-local';
import { BatchRepository } from '../../shared/adapters/dynamodb/batch-repo';
import { CustodyRepository } from '../../shared/adapters/dynamodb/custody-repo';
import { keys } from '../../shared/adapters/dynamodb/keys';
import type { OrderWorkMessage } from '../../shared/domain/ports/batches';
import { ORDER_WORK_BUDGET_MS } from '../../shared/domain/purchase-order-limits';
import type { Batch, PurchaseOrder } from '../../shared/domain/records';
import { continueCreation, createPurchaseOrder } from '../../shared/use-cases/purchase-orders';
import { aBatch } from '../unit/support/fakes';

/**
 * Purchase orders of many batches straight on a DynamoDB Local table (the bench's
 * BENCH_ONLY=po-create and test/unit/purchase-order-creation.test.ts): batches seeded in the state
 * creation needs, and an order's creation as POST /purchase-orders and the order worker make it.
 */

/** The cooperative of the seeded batches, and an exporter of it. */
const ORDER_COOP = 'ORDER-COOP';
const orderExporter = { role: 'COOPERATIVE', sub: 'order-exporter', cooperative_id: ORDER_COOP, duties: ['EXPORTER'] } as never;

/**
 * Puts `n` minted batches of ORDER_COOP on no order (WAREHOUSED, 60 kg milled, audit head at 1),
 * ids `BATCH-2026-<first…>`, 25 to a request, on the table of DynamoDB Local at `endpoint`.
 */
export async function seedOrderBatches(endpoint: string, first: number, n: number): Promise<string[]> {
  const client = localTableClient(endpoint);
  const batches: Batch[] = Array.from({ length: n }, (_, i) =>
    aBatch({
      batch_id: `BATCH-2026-${String(first + i).padStart(6, '0')}`,
      cooperative_id: ORDER_COOP,
      stage: 'WAREHOUSED',
      outturn_kg: 60,
    }),
  );
  for (let i = 0; i < batches.length; i += 25) {
    await client.send(
      new BatchWriteCommand({
        RequestItems: {
          [LOCAL_TABLE_NAME]: batches.slice(i, i + 25).map((b) => ({
            PutRequest: { Item: { ...keys.batch(b.batch_id), ...keys.batchGsi(ORDER_COOP, b.batch_id), entity: 'BATCH', ...b } },
          })),
        },
      }),
    );
  }
  client.destroy();
  return batches.map((b) => b.batch_id);
}

/** POST /purchase-orders's use case over `batchIds` with the function's repositories; the CREATE messages it queues are pushed on `queued`. */
export function requestOrder(batchIds: string[], queued: OrderWorkMessage[]): Promise<PurchaseOrder> {
  return createPurchaseOrder(
    {
      batches: new BatchRepository(),
      custody: new CustodyRepository(),
      orderWork: { send: async (m) => void queued.push(m) },
      now: () => new Date(),
    },
    orderExporter,
    { batch_ids: batchIds, buyer: 'Hamburg Coffee Importers GmbH', price_usd_per_kg: 6.4 },
  );
}

/**
 * The order worker's CREATE work on order `id` until it is no longer CREATING: run after run of
 * `continueCreation` (each with ORDER_WORK_BUDGET_MS). Returns the order as it ends and the runs made.
 */
export async function bindAsTheWorker(id: string): Promise<{ po: PurchaseOrder; runs: number }> {
  const custody = new CustodyRepository();
  let po = (await custody.getPurchaseOrder(id))!;
  let runs = 0;
  do {
    runs++;
    po = await continueCreation({ batches: new BatchRepository(), custody, now: () => new Date() }, po, Date.now() + ORDER_WORK_BUDGET_MS);
  } while (po.status === 'CREATING');
  return { po, runs };
}

/**
 * One creation of an order over `batchIds`, timed in ms: to the answer of POST /purchase-orders
 * (`requestOrder`; above 40 batches 202 CREATING), and to the order DRAFT (or FAILED) as the order
 * worker binds its batches (`bindAsTheWorker`, on the queued message). Throws when it fails.
 */
export async function timeOrderCreation(
  batchIds: string[],
): Promise<{ answerMs: number; boundMs: number; answer: PurchaseOrder; po: PurchaseOrder; runs: number }> {
  const queued: OrderWorkMessage[] = [];
  const t = performance.now();
  const answer = await requestOrder(batchIds, queued);
  const answerMs = performance.now() - t;
  if (queued.length === 0) return { answerMs, boundMs: answerMs, answer, po: answer, runs: 0 };
  const { po, runs } = await bindAsTheWorker(answer.purchase_order_id);
  return { answerMs, boundMs: performance.now() - t, answer, po, runs };
}
