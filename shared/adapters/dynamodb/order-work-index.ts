import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { OrderWorkIndex, StalledOrder } from '../../domain/ports/batches';
import type { PurchaseOrder } from '../../domain/records';
import { keys, ORDER_WORK } from './keys';
import { conditionalUpdate, documentClient, tableName } from './table';

/**
 * The index of large purchase orders with work for the order worker
 * (docs/api/batches-and-custody.md#resuming-stalled-orders): the order item's sparse GSI2 entry
 * ORDER_WORK, `<last progress at>#<id>`. CREATE and CONFIRM work set, move and remove it in the
 * very writes that begin, record and finish each step (shared/adapters/dynamodb/large-order-repo.ts);
 * SETTLE work sets it before its message is queued (`markSettleWork`, or with the ADMIN's settle
 * request) and removes it when a run finds nothing left (`finishSettleWork`).
 */

/** The GSI2 sort key of an order's work moved now (wall clock: when the write is made). */
export function workMovedNow(id: string): string {
  return keys.orderWorkGsi(new Date().toISOString(), id).GSI2SK;
}

/**
 * The update clauses that put an order in the index at `at` (ISO) and count the marking
 * (`order_work_seq`, so a run that began before it does not remove it): SET and ADD parts, and
 * their values.
 */
export function settleWorkMark(id: string, at: string) {
  return {
    set: 'GSI2PK = :owk, GSI2SK = :ows',
    add: 'order_work_seq :owone',
    values: { ':owk': ORDER_WORK, ':ows': keys.orderWorkGsi(at, id).GSI2SK, ':owone': 1 },
  };
}

/** Large purchase orders' work in the ORDER_WORK index (DynamoDB). */
export class OrderWorkRepository implements OrderWorkIndex {
  async markSettleWork(id: string, at: string): Promise<void> {
    const mark = settleWorkMark(id, at);
    await conditionalUpdate({
      Key: keys.purchaseOrder(id),
      UpdateExpression: `SET ${mark.set} ADD ${mark.add}`,
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: mark.values,
    });
  }

  finishSettleWork(id: string, seq: number | undefined): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.purchaseOrder(id),
      UpdateExpression: 'REMOVE GSI2PK, GSI2SK',
      // CREATE and CONFIRM work keep the entry: their own last write removes it.
      ConditionExpression: `GSI2PK = :owk AND NOT (#s IN (:creating, :releasing, :confirming)) AND ${
        seq === undefined ? 'attribute_not_exists(order_work_seq)' : 'order_work_seq = :seq'
      }`,
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: {
        ':owk': ORDER_WORK,
        ':creating': 'CREATING',
        ':releasing': 'RELEASING',
        ':confirming': 'CONFIRMING',
        ...(seq === undefined ? {} : { ':seq': seq }),
      },
    });
  }

  touchWork(id: string, at: string): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.purchaseOrder(id),
      UpdateExpression: 'SET GSI2SK = :ows',
      ConditionExpression: 'GSI2PK = :owk',
      ExpressionAttributeValues: { ':owk': ORDER_WORK, ':ows': keys.orderWorkGsi(at, id).GSI2SK },
    });
  }

  async stalled(before: string, limit: number): Promise<StalledOrder[]> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :owk AND GSI2SK < :before',
        ExpressionAttributeValues: { ':owk': ORDER_WORK, ':before': before },
        ProjectionExpression: 'purchase_order_id, #s, GSI2SK, order_work_requeues',
        ExpressionAttributeNames: { '#s': 'status' },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((item) => ({
      purchase_order_id: item.purchase_order_id as string,
      status: item.status as PurchaseOrder['status'],
      moved_at: (item.GSI2SK as string).slice(0, (item.GSI2SK as string).lastIndexOf('#')),
      requeues: Number(item.order_work_requeues ?? 0),
    }));
  }

  requeued(order: StalledOrder, at: string): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.purchaseOrder(order.purchase_order_id),
      UpdateExpression: 'SET GSI2SK = :now, order_work_requeues = if_not_exists(order_work_requeues, :zero) + :one',
      ConditionExpression: 'GSI2PK = :owk AND GSI2SK = :was',
      ExpressionAttributeValues: {
        ':owk': ORDER_WORK,
        ':was': keys.orderWorkGsi(order.moved_at, order.purchase_order_id).GSI2SK,
        ':now': keys.orderWorkGsi(at, order.purchase_order_id).GSI2SK,
        ':zero': 0,
        ':one': 1,
      },
    });
  }
}
