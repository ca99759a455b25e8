import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { BindStepResult } from '../../domain/ports/batches';
import { forEachLimited, ORDER_STEP_CONCURRENCY } from '../../domain/purchase-order-limits';
import type { AuditEntry, Batch, PurchaseOrder, PurchaseOrderCreationError } from '../../domain/records';
import { TransactionConditionError, transactWithAudits } from './audit-append';
import { fromItem, keys, ORDER_WORK } from './keys';
import { appendOrderEventOnce } from './order-fan-out';
import { workMovedNow } from './order-work-index';
import { conditionalUpdate, documentClient, tableName } from './table';

/** The PURCHASE_ORDER_CREATED audit entry of a new purchase order, on each of its batches. */
export function createdEntry(po: PurchaseOrder) {
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
 * Puts a purchase order above one transaction's size CREATING, nothing bound yet
 * (`bound_batch_count` 0), on condition that its id is new
 * (docs/api/batches-and-custody.md#purchase-orders-of-many-batches); in the order-work index from
 * its `created_at` (the same write: no CREATING order is outside it, docs/api/batches-and-custody.md#resuming-stalled-orders).
 */
export async function beginLargeCreation(po: PurchaseOrder): Promise<void> {
  await documentClient().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.purchaseOrder(po.purchase_order_id),
        ...keys.orderWorkGsi(po.created_at, po.purchase_order_id),
        entity: 'PO',
        ...po,
        status: 'CREATING',
        bound_batch_count: 0,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
}

/**
 * One step of a CREATING order's creation, one transaction (at most 40 batches): the order's
 * `bound_batch_count` from → from + step length (DRAFT with the last step) on condition that it is
 * CREATING at `from` (its work moved now in the order-work index; out of it when DRAFT), and each batch of `step` bound to the order (`purchase_order_id`) with its
 * PURCHASE_ORDER_CREATED audit entry on condition that it is on no purchase order. All or nothing:
 * a step done again after a crash, or by a second run, fails the order's condition and writes
 * nothing (ALREADY); a batch on another order fails its own and writes nothing (CONFLICT, that batch).
 * `heads`: the batches as just read (their audit heads), used instead of reading them again.
 */
export async function bindLargeOrderStep(
  po: PurchaseOrder,
  from: number,
  step: readonly string[],
  heads: readonly (Batch | null)[],
): Promise<BindStepResult> {
  const id = po.purchase_order_id;
  const to = from + step.length;
  const complete = to >= po.batch_ids.length;
  try {
    await transactWithAudits({
      items: [
        {
          Update: {
            TableName: tableName(),
            Key: keys.purchaseOrder(id),
            UpdateExpression: complete
              ? 'SET bound_batch_count = :to, #s = :draft REMOVE GSI2PK, GSI2SK'
              : 'SET bound_batch_count = :to, GSI2SK = :moved',
            ConditionExpression: '#s = :creating AND bound_batch_count = :from',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':to': to,
              ':from': from,
              ':creating': 'CREATING',
              ...(complete ? { ':draft': 'DRAFT' } : { ':moved': workMovedNow(id) }),
            },
          },
        },
      ],
      batches: step.map((batchId, i) => {
        const head = heads[i];
        return {
          batchId,
          entry: createdEntry(po),
          batchSet: { expression: 'purchase_order_id = :po', values: { ':po': id } },
          batchCondition: { expression: 'attribute_not_exists(purchase_order_id)', values: {} },
          ...(head?.batch_id === batchId ? { knownHead: { audit_seq: head.audit_seq, audit_head_hash: head.audit_head_hash } } : {}),
        };
      }),
    });
    return { kind: 'BOUND' };
  } catch (err) {
    if (!(err instanceof TransactionConditionError)) throw err;
    if (err.index === 0) return { kind: 'ALREADY' };
    return { kind: 'CONFLICT', batch_id: step[err.index - 1]! };
  }
}

/** CREATING at `boundCount` → RELEASING with `creation_error` (its work moved now); false when the order was not so. */
export function failLargeCreation(id: string, boundCount: number, error: PurchaseOrderCreationError): Promise<boolean> {
  return conditionalUpdate({
    Key: keys.purchaseOrder(id),
    UpdateExpression: 'SET #s = :releasing, creation_error = :e, GSI2SK = :moved',
    ConditionExpression: '#s = :creating AND bound_batch_count = :n',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: {
      ':releasing': 'RELEASING',
      ':creating': 'CREATING',
      ':n': boundCount,
      ':e': error,
      ':moved': workMovedNow(id),
    },
  });
}

/**
 * Undoes a RELEASING order's bindings: each batch of `bound` gets PURCHASE_ORDER_WITHDRAWN (once,
 * its mark) and is released (on condition that it is on this order), ORDER_STEP_CONCURRENCY at a
 * time; then RELEASING → FAILED (out of the order-work index). Idempotent: run again after a crash, it appends and releases
 * nothing twice.
 */
export async function releaseLargeOrder(po: PurchaseOrder, bound: readonly string[]): Promise<void> {
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
  await conditionalUpdate({
    Key: keys.purchaseOrder(id),
    UpdateExpression: 'SET #s = :failed REMOVE GSI2PK, GSI2SK',
    ConditionExpression: '#s = :releasing',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':failed': 'FAILED', ':releasing': 'RELEASING' },
  });
}

/**
 * DRAFT → CONFIRMING (`confirmed_at`, `confirmed_by`, `confirmed_batch_count` 0; in the order-work
 * index from `at`, the same write), conditioned on DRAFT; returns the order as it now is (CONFIRMING, or whatever it already was).
 */
export async function beginLargeConfirmation(po: PurchaseOrder, actor: string, at: string): Promise<PurchaseOrder> {
  await conditionalUpdate({
    Key: keys.purchaseOrder(po.purchase_order_id),
    UpdateExpression: 'SET #s = :c, confirmed_at = :at, confirmed_by = :by, confirmed_batch_count = :zero, GSI2PK = :owk, GSI2SK = :ows',
    ConditionExpression: '#s = :d',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: {
      ':c': 'CONFIRMING',
      ':d': 'DRAFT',
      ':at': at,
      ':by': actor,
      ':zero': 0,
      ':owk': ORDER_WORK,
      ':ows': keys.orderWorkGsi(at, po.purchase_order_id).GSI2SK,
    },
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
 * Records a confirmation step: `confirmed_batch_count` from → to (and CONFIRMED when `complete`,
 * out of the order-work index; else its work moved now),
 * conditioned on the order being CONFIRMING at `from` — so a step done twice counts once.
 * Returns false when another call recorded it first.
 */
export async function recordLargeConfirmation(id: string, from: number, to: number, complete: boolean): Promise<boolean> {
  return conditionalUpdate({
    Key: keys.purchaseOrder(id),
    UpdateExpression: complete
      ? 'SET confirmed_batch_count = :to, #s = :confirmed REMOVE GSI2PK, GSI2SK'
      : 'SET confirmed_batch_count = :to, GSI2SK = :moved',
    ConditionExpression: '#s = :confirming AND confirmed_batch_count = :from',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: {
      ':to': to,
      ':from': from,
      ':confirming': 'CONFIRMING',
      ...(complete ? { ':confirmed': 'CONFIRMED' } : { ':moved': workMovedNow(id) }),
    },
  });
}
