import type { OrderWorkMessage } from '../domain/ports/batches';
import { forEachLimited, ORDER_STEP_CONCURRENCY, ORDER_WORK_BUDGET_MS, SETTLEMENT_STEP_BATCHES } from '../domain/purchase-order-limits';
import { logger } from '../runtime/logger';
import { continueConfirmation, type PurchaseOrderDeps } from './purchase-orders';
import {
  recordLargeOrderAmountDue,
  requestSettlementWrites,
  settleLargeOrderWhenPaid,
  settleOneBatch,
  type SettlingDeps,
} from './settlement';

/**
 * The order worker (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): the per-batch
 * work of a purchase order above one transaction's size, off the request path, so confirming it,
 * its buyer's payment and an ADMIN's settle answer at once for any order size.
 */

/** The ports of the order worker. */
export type OrderWorkDeps = PurchaseOrderDeps & SettlingDeps;

/**
 * One order work message. CONFIRM: a CONFIRMING order's batches confirmed from
 * `confirmed_batch_count` on (`continueConfirmation`). SETTLE: the order's audit fan-out (each
 * payment's BUYER_PAYMENT_RECEIVED and the settlement's SETTLEMENT_STARTED, each batch once, skipped
 * once marked complete), the settlement's vault writes requested (`requestSettlementWrites`: one
 * id per write, landed once), then its batches recorded SETTLED from `settled_batch_count` on, in
 * steps of SETTLEMENT_STEP_BATCHES, each step's count recorded on condition of the count it
 * started from. No step starts after ORDER_WORK_BUDGET_MS: what is left goes back on the queue as
 * the same message. A redelivered message (after a crash) continues from the recorded progress:
 * a step redone writes nothing twice (each batch's change is conditioned) and counts once.
 * An unknown order, one not CONFIRMING (CONFIRM) or without a settlement (SETTLE, after the audit
 * fan-out) is done. Errors: what the stores throw (the message is then redelivered).
 */
export async function runOrderWork(deps: OrderWorkDeps, msg: OrderWorkMessage): Promise<void> {
  const deadline = deps.now().getTime() + ORDER_WORK_BUDGET_MS;
  const more =
    msg.work === 'CONFIRM'
      ? await confirmSteps(deps, msg.purchase_order_id, deadline)
      : await settleSteps(deps, msg.purchase_order_id, deadline);
  if (more) {
    logger.info('order work continues in a new message', { purchase_order_id: msg.purchase_order_id, work: msg.work });
    await deps.orderWork.send(msg);
  }
}

/** CONFIRM work; true when the order is still CONFIRMING at the deadline. */
async function confirmSteps(deps: OrderWorkDeps, id: string, deadline: number): Promise<boolean> {
  const po = await deps.custody.getPurchaseOrder(id);
  if (po?.status !== 'CONFIRMING') return false;
  const { po: after } = await continueConfirmation(deps, po, deadline);
  if (after.status === 'CONFIRMED') await recordLargeOrderAmountDue(deps, after);
  return after.status === 'CONFIRMING';
}

/** SETTLE work; true when batches are left to settle at the deadline. */
async function settleSteps(deps: OrderWorkDeps, id: string, deadline: number): Promise<boolean> {
  const po = await deps.custody.getPurchaseOrder(id);
  if (!po) return false;
  // The settlement is planned here, off the payment event's request path (a read of every batch and its loan).
  let s = await settleLargeOrderWhenPaid(deps, id);
  await deps.settlements.completeOrderAudits(id, po.batch_ids);
  if (!s) return false;
  s = (await deps.settlements.get(id))!;
  await requestSettlementWrites(deps, s);
  while ((s.settled_batch_count ?? 0) < s.settled_batch_ids.length) {
    if (deps.now().getTime() >= deadline) return true;
    const from = s.settled_batch_count ?? 0;
    const step = s.settled_batch_ids.slice(from, from + SETTLEMENT_STEP_BATCHES);
    const current = s;
    await forEachLimited(step, ORDER_STEP_CONCURRENCY, (batchId) => settleOneBatch(deps, current, batchId));
    await deps.settlements.recordSettledProgress(id, from, from + step.length);
    s = (await deps.settlements.get(id))!;
  }
  return false;
}
