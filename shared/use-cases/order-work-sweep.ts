import type { OrderWorkIndex, OrderWorkMessage, StalledOrder } from '../domain/ports/batches';
import type { WorkQueue } from '../domain/ports/messaging';
import { ORDER_RUN_HOLD_MS } from '../domain/purchase-order-limits';
import { logger } from '../runtime/logger';

/** Stalled orders looked at per run of the purchase-order reconciler (the rest wait for the next run). */
const STALLED_ORDERS_PER_RUN = 100;

/** Log key of a large order whose work was queued again: its message was lost or dead-lettered (an alarm may filter on it). */
const ORDER_WORK_STALLED_ALARM = 'PURCHASE_ORDER_WORK_STALLED';

/** The ports of the purchase-order reconciler. */
export interface OrderWorkSweepDeps {
  orderWorkIndex: Pick<OrderWorkIndex, 'stalled' | 'requeued'>;
  orderWork: WorkQueue<OrderWorkMessage>;
  now: () => Date;
}

/** The work a stalled order is waiting for, by its status: CREATE (CREATING, RELEASING), CONFIRM (CONFIRMING), else SETTLE. */
function workOf(status: StalledOrder['status']): OrderWorkMessage['work'] {
  if (status === 'CREATING' || status === 'RELEASING') return 'CREATE';
  return status === 'CONFIRMING' ? 'CONFIRM' : 'SETTLE';
}

/**
 * The scheduled purchase-order reconciler (docs/api/batches-and-custody.md#resuming-stalled-orders):
 * every large order in the order-work index whose work has not moved for `staleAfterSeconds`, and
 * never less than a run's hold of a settlement (ORDER_RUN_HOLD_MS, longer than any run: a run under
 * way is not doubled even where the threshold is scaled down, locally)
 * (no step recorded, no SETTLE run started: its message was lost — a crash between storing the
 * order and queueing it — or dead-lettered after the queue's receives) gets its work message queued
 * again (`workOf` its status), up to STALLED_ORDERS_PER_RUN a run, longest stalled first. Each is
 * first recorded as queued again on condition that its work did not move since it was read (so a
 * run of the worker meanwhile, or a second reconciler, wins and nothing is queued), which also
 * moves it: the next look is `staleAfterSeconds` later. The work is idempotent, so a message that
 * was only late does no harm. Logged as an error (ORDER_WORK_STALLED_ALARM) with the order's
 * re-queue count. Returns how many were queued. Errors: the index's and the queue's (the next run
 * retries: an order recorded but not queued is looked at again after `staleAfterSeconds`).
 */
export async function requeueStalledOrderWork(deps: OrderWorkSweepDeps, staleAfterSeconds: number): Promise<number> {
  const now = deps.now();
  const before = new Date(now.getTime() - Math.max(staleAfterSeconds * 1000, ORDER_RUN_HOLD_MS)).toISOString();
  let requeued = 0;
  for (const order of await deps.orderWorkIndex.stalled(before, STALLED_ORDERS_PER_RUN)) {
    if (!(await deps.orderWorkIndex.requeued(order, now.toISOString()))) continue;
    const work = workOf(order.status);
    await deps.orderWork.send({ purchase_order_id: order.purchase_order_id, work });
    requeued += 1;
    logger.error('a large purchase order made no progress: its work is queued again', {
      alarm: ORDER_WORK_STALLED_ALARM,
      purchase_order_id: order.purchase_order_id,
      status: order.status,
      work,
      moved_at: order.moved_at,
      requeues: order.requeues + 1,
    });
  }
  return requeued;
}
