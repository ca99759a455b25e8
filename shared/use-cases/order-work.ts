import type { OrderWorkIndex, OrderWorkMessage } from '../domain/ports/batches';
import { newJobId } from '../domain/ids';
import type { Settlement } from '../domain/lending';
import {
  forEachLimited,
  ORDER_RUN_HOLD_MS,
  ORDER_RUN_RETRY_S,
  ORDER_STEP_CONCURRENCY,
  ORDER_WORK_BUDGET_MS,
  SETTLEMENT_STEP_BATCHES,
} from '../domain/purchase-order-limits';
import type { PurchaseOrder } from '../domain/records';
import { logger } from '../runtime/logger';
import type { EvidenceMemo } from './custody';
import { continueConfirmation, continueCreation, type PurchaseOrderDeps } from './purchase-orders';
import { recordLargeOrderAmountDue, settleLargeOrderWhenPaid, type SettlingDeps } from './settlement';
import { requestSettlementWrites, settleOneBatch } from './settlement-carry-out';

/**
 * The order worker (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): the per-batch
 * work of a purchase order above one transaction's size, off the request path, so confirming it,
 * its buyer's payment and an ADMIN's settle answer at once for any order size.
 */

/** The ports of the order worker. */
export type OrderWorkDeps = PurchaseOrderDeps &
  SettlingDeps & {
    /** Large orders with work for the order worker: a SETTLE run moves its order there and removes it when done. */
    orderWorkIndex: Pick<OrderWorkIndex, 'markSettleWork' | 'touchWork' | 'finishSettleWork'>;
  };

/**
 * One order work message. CREATE: a CREATING order's batches bound from `bound_batch_count` on
 * (`continueCreation`; DRAFT when done, or released and FAILED when one is on another order).
 * CONFIRM: a CONFIRMING order's batches confirmed from
 * `confirmed_batch_count` on (`continueConfirmation`). SETTLE: the settlement planned (batched
 * reads), its vault writes requested first (`requestSettlementWrites`: one id per write, landed
 * once), then its batches recorded SETTLED from `settled_batch_count` on, in steps of
 * SETTLEMENT_STEP_BATCHES read at once and written ORDER_STEP_CONCURRENCY at a time, each step's
 * count recorded on condition of the count it started from; then the order's audit fan-out (each
 * payment's BUYER_PAYMENT_RECEIVED and the settlement's SETTLEMENT_STARTED, each batch once,
 * skipped once marked complete). No step starts after ORDER_WORK_BUDGET_MS: what is left goes
 * back on the queue as the same message. A redelivered message (after a crash) continues from the
 * recorded progress: a step redone writes nothing twice (each batch's change is conditioned) and
 * counts once, and the vault writes, once marked requested on the settlement, are not asked again.
 * An unknown order, one neither CREATING nor RELEASING (CREATE), one not CONFIRMING (CONFIRM) or without a settlement (SETTLE, after the
 * payments' audit fan-out) is done. CREATE and CONFIRM steps move the order's entry in the
 * order-work index with their own writes; a SETTLE run that holds the settlement moves it when
 * it starts, and one that leaves nothing to do removes it (`finishSettleWork`), so the
 * purchase-order reconciler queues again only work whose message was lost
 * (docs/api/batches-and-custody.md#resuming-stalled-orders). Errors: what the stores throw (the
 * message is then redelivered).
 */
export async function runOrderWork(deps: OrderWorkDeps, msg: OrderWorkMessage): Promise<void> {
  const deadline = deps.now().getTime() + ORDER_WORK_BUDGET_MS;
  const more =
    msg.work === 'CREATE'
      ? await createSteps(deps, msg.purchase_order_id, deadline)
      : msg.work === 'CONFIRM'
        ? await confirmSteps(deps, msg.purchase_order_id, deadline)
        : await settleSteps(deps, msg.purchase_order_id, deadline);
  if (more) {
    logger.info('order work continues in a new message', { purchase_order_id: msg.purchase_order_id, work: msg.work });
    await deps.orderWork.send(msg);
  }
}

/** CREATE work; true when the order is still CREATING at the deadline. */
async function createSteps(deps: OrderWorkDeps, id: string, deadline: number): Promise<boolean> {
  const po = await deps.custody.getPurchaseOrder(id);
  if (po?.status !== 'CREATING' && po?.status !== 'RELEASING') return false;
  const after = await continueCreation(deps, po, deadline);
  return after.status === 'CREATING';
}

/** CONFIRM work; true when the order is still CONFIRMING at the deadline. */
async function confirmSteps(deps: OrderWorkDeps, id: string, deadline: number): Promise<boolean> {
  const po = await deps.custody.getPurchaseOrder(id);
  if (po?.status !== 'CONFIRMING') return false;
  const { po: after } = await continueConfirmation(deps, po, deadline);
  if (after.status === 'CONFIRMED') await recordLargeOrderAmountDue(deps, after);
  return after.status === 'CONFIRMING';
}

/**
 * SETTLE work; true when batches are left to settle at the deadline. The ledger writes come first:
 * right after the settlement is planned its vault writes are requested, then every batch's SETTLED
 * record (its audit entry and trace-log write in one conditioned transaction, so the record carries
 * that entry's hash) in wide concurrent steps; the order-level audit fan-out follows, off the
 * ledger's path. Without a settlement (not paid in full yet) only the payments' fan-out runs. One
 * run at a time carries a settlement out (`claimRun`, held ORDER_RUN_HOLD_MS): a message arriving
 * meanwhile (a payment event delivered again, an ADMIN's call) is queued again ORDER_RUN_RETRY_S
 * later instead of doing the same work beside it.
 */
async function settleSteps(deps: OrderWorkDeps, id: string, deadline: number): Promise<boolean> {
  const po = await deps.custody.getPurchaseOrder(id);
  if (!po) return false;
  // SETTLE work marked after this read (a later payment, an ADMIN's request) keeps the order in the index for its own run.
  const seq = po.order_work_seq;
  // The settlement is planned here, off the payment event's request path (batched reads of every batch and its loan).
  const planned = await settleLargeOrderWhenPaid(deps, id);
  if (!planned) {
    await deps.settlements.completeOrderAudits(id, po.batch_ids);
    await deps.orderWorkIndex.finishSettleWork(id, seq);
    return false;
  }
  const runId = newJobId();
  const now = deps.now();
  if (!(await deps.settlements.claimRun(id, runId, now.toISOString(), new Date(now.getTime() + ORDER_RUN_HOLD_MS).toISOString()))) {
    logger.info('another run carries the settlement out: looked at again later', { purchase_order_id: id });
    await deps.orderWork.send({ purchase_order_id: id, work: 'SETTLE' }, { delaySeconds: ORDER_RUN_RETRY_S });
    return false;
  }
  try {
    await deps.orderWorkIndex.touchWork(id, now.toISOString());
    const more = await carryOutHeld(deps, po, (await deps.settlements.get(id))!, deadline);
    if (!more) await deps.orderWorkIndex.finishSettleWork(id, seq);
    return more;
  } finally {
    await deps.settlements.releaseRun(id, runId);
  }
}

/** The settlement's steps while this run holds it; true when batches are left at the deadline. */
async function carryOutHeld(deps: OrderWorkDeps, po: PurchaseOrder, start: Settlement, deadline: number): Promise<boolean> {
  const id = po.purchase_order_id;
  let s = start;
  if (!s.writes_requested) {
    await requestSettlementWrites(deps, s);
    await deps.settlements.markWritesRequested(id);
  }
  const memo: EvidenceMemo = new Map();
  while ((s.settled_batch_count ?? 0) < s.settled_batch_ids.length) {
    if (deps.now().getTime() >= deadline) return true;
    const from = s.settled_batch_count ?? 0;
    const step = s.settled_batch_ids.slice(from, from + SETTLEMENT_STEP_BATCHES);
    const current = s;
    const read = await deps.batches.getMany(step);
    await forEachLimited(step, ORDER_STEP_CONCURRENCY, (batchId, i) =>
      settleOneBatch(deps, current, batchId, { batch: read[i] ?? null, memo }),
    );
    await deps.settlements.recordSettledProgress(id, from, from + step.length);
    s = (await deps.settlements.get(id))!;
  }
  await deps.settlements.completeOrderAudits(id, po.batch_ids);
  return false;
}
