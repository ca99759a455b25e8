import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DomainError } from '../../domain/errors';
import { forEachLimited, ORDER_STEP_CONCURRENCY } from '../../domain/purchase-order-limits';
import type { AuditEntry, Batch, PurchaseOrder } from '../../domain/records';
import { fromItem, keys } from './keys';
import { appendOrderEventOnce } from './order-fan-out';
import { conditionalUpdate, documentClient, tableName } from './table';

/** A batch found on another purchase order while a large order binds its batches. */
class BoundElsewhere extends Error {
  constructor(readonly batchId: string) {
    super(`batch ${batchId} is on another purchase order`);
  }
}

/** The audit entry of a new purchase order, on each of its batches. */
function createdEntry(po: PurchaseOrder) {
  return {
    type: 'PURCHASE_ORDER_CREATED',
    at: po.created_at,
    actor: po.created_by,
    payload: {
      purchase_order_id: po.purchase_order_id,
      buyer: po.buyer,
      price_usd_per_kg: po.price_usd_per_kg,
      buyer_operator: po.buyer_operator ?? null,
    },
  };
}

/**
 * Creates a purchase order above one transaction's size (docs/api/batches-and-custody.md#purchase-orders-of-many-batches):
 * the order is put (attribute_not_exists), then each batch is bound to it with its
 * PURCHASE_ORDER_CREATED audit entry in its own transaction, on condition that the batch is on no
 * other order (`appendOrderEventOnce`, once per batch). A batch found on another order undoes the
 * binding: the batches bound so far get PURCHASE_ORDER_WITHDRAWN in their audit log and are
 * released, and the order is WITHDRAWN (unknown from then on). Errors: VALIDATION_ERROR naming the batch (`batch_ids.<i>`).
 */
export async function createLargePurchaseOrder(po: PurchaseOrder, heads?: readonly Batch[]): Promise<void> {
  const id = po.purchase_order_id;
  await documentClient().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.purchaseOrder(id), entity: 'PO', ...po },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
  const bound: string[] = [];
  try {
    await forEachLimited(po.batch_ids, ORDER_STEP_CONCURRENCY, async (batchId, i) => {
      const head = heads?.[i];
      await appendOrderEventOnce({
        batchId,
        ...(head?.batch_id === batchId ? { knownHead: head as unknown as Record<string, unknown> } : {}),
        eventKey: `PURCHASE_ORDER_CREATED#${id}`,
        entry: createdEntry(po),
        batchSet: { expression: 'purchase_order_id = :po', values: { ':po': id } },
        batchCondition: { expression: 'attribute_not_exists(purchase_order_id) OR purchase_order_id = :po', values: {} },
        checkHead: (head) => {
          if (head.purchase_order_id !== undefined && head.purchase_order_id !== id) throw new BoundElsewhere(batchId);
        },
      });
      bound.push(batchId);
    });
  } catch (err) {
    if (!(err instanceof BoundElsewhere)) throw err;
    await withdraw(po, bound);
    const i = po.batch_ids.indexOf(err.batchId);
    throw new DomainError('VALIDATION_ERROR', `Batch ${err.batchId} is already on another purchase order.`, {
      details: [{ path: `batch_ids.${i}`, message: 'already on another purchase order' }],
    });
  }
}

/**
 * Undoes a large order's creation: each bound batch gets PURCHASE_ORDER_WITHDRAWN (once) and is
 * released; the order becomes WITHDRAWN (never read as an order again: `getPurchaseOrder` answers null).
 */
async function withdraw(po: PurchaseOrder, bound: string[]): Promise<void> {
  const id = po.purchase_order_id;
  await forEachLimited(bound, ORDER_STEP_CONCURRENCY, async (batchId) => {
    await appendOrderEventOnce({
      batchId,
      eventKey: `PURCHASE_ORDER_WITHDRAWN#${id}`,
      entry: {
        type: 'PURCHASE_ORDER_WITHDRAWN',
        at: po.created_at,
        actor: po.created_by,
        payload: { purchase_order_id: id, reason: 'another batch of the order is on another purchase order' },
      },
    });
    await conditionalUpdate({
      Key: keys.batch(batchId),
      UpdateExpression: 'REMOVE purchase_order_id',
      ConditionExpression: 'purchase_order_id = :po',
      ExpressionAttributeValues: { ':po': id },
    });
  });
  // Nothing in the service deletes an item (docs/security-iam.md): the order is kept, WITHDRAWN, and reads as unknown.
  await documentClient().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.purchaseOrder(id),
      UpdateExpression: 'SET #s = :w',
      ConditionExpression: '#s = :d',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':w': 'WITHDRAWN', ':d': 'DRAFT' },
    }),
  );
}

/**
 * DRAFT → CONFIRMING (`confirmed_at`, `confirmed_by`, `confirmed_batch_count` 0), conditioned on
 * DRAFT; returns the order as it now is (CONFIRMING, or whatever it already was).
 */
export async function beginLargeConfirmation(po: PurchaseOrder, actor: string, at: string): Promise<PurchaseOrder> {
  await conditionalUpdate({
    Key: keys.purchaseOrder(po.purchase_order_id),
    UpdateExpression: 'SET #s = :c, confirmed_at = :at, confirmed_by = :by, confirmed_batch_count = :zero',
    ConditionExpression: '#s = :d',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':c': 'CONFIRMING', ':d': 'DRAFT', ':at': at, ':by': actor, ':zero': 0 },
  });
  const r = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.purchaseOrder(po.purchase_order_id), ConsistentRead: true }),
  );
  return fromItem<PurchaseOrder>(r.Item!);
}

/**
 * One batch's PURCHASE_ORDER_CONFIRMED audit entry, once (a repeated step appends nothing): the
 * entry appended now, or null. `head`: the batch as just read, instead of reading it again.
 */
export function confirmLargeOrderBatch(po: PurchaseOrder, batchId: string, head?: Batch): Promise<AuditEntry | null> {
  return appendOrderEventOnce({
    batchId,
    ...(head ? { knownHead: head as unknown as Record<string, unknown> } : {}),
    eventKey: `PURCHASE_ORDER_CONFIRMED#${po.purchase_order_id}`,
    entry: {
      type: 'PURCHASE_ORDER_CONFIRMED',
      at: po.confirmed_at!,
      actor: po.confirmed_by ?? 'system:purchase-order',
      payload: { purchase_order_id: po.purchase_order_id },
    },
  });
}

/**
 * Records a confirmation step: `confirmed_batch_count` from → to (and CONFIRMED when `complete`),
 * conditioned on the order being CONFIRMING at `from` — so a step done twice counts once.
 * Returns false when another call recorded it first.
 */
export async function recordLargeConfirmation(id: string, from: number, to: number, complete: boolean): Promise<boolean> {
  return conditionalUpdate({
    Key: keys.purchaseOrder(id),
    UpdateExpression: `SET confirmed_batch_count = :to${complete ? ', #s = :confirmed' : ''}`,
    ConditionExpression: '#s = :confirming AND confirmed_batch_count = :from',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: {
      ':to': to,
      ':from': from,
      ':confirming': 'CONFIRMING',
      ...(complete ? { ':confirmed': 'CONFIRMED' } : {}),
    },
  });
}
