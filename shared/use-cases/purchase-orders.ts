import { assertActsFor, assertDuty } from '../domain/access';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { newJobId } from '../domain/ids';
import { LEDGER_ADDRESS, amountDueUsdMicro } from '../domain/lending';
import type { BatchStore, CustodyStore, OrderWorkMessage } from '../domain/ports/batches';
import type { WorkQueue } from '../domain/ports/messaging';
import {
  bindingOrder,
  CONFIRMATION_STEP_BATCHES,
  CREATION_STEP_BATCHES,
  forEachLimited,
  ORDER_STEP_CONCURRENCY,
  ORDER_TRANSACTION_MAX_BATCHES,
} from '../domain/purchase-order-limits';
import type { Batch, PurchaseOrder } from '../domain/records';
import { logger } from '../runtime/logger';
import { commitToPurchaseOrder, type CustodyDeps, type EvidenceMemo } from './custody';

/** The ports confirming a purchase order needs (it commits stage changes). */
export type PurchaseOrderDeps = Omit<CustodyDeps, 'custody' | 'batches'> & {
  /** Batch reads: one at a time, and batched for a large order's steps. */
  batches: Pick<BatchStore, 'get' | 'getMany'>;
  custody: Pick<
    CustodyStore,
    | 'getPurchaseOrder'
    | 'confirmPurchaseOrder'
    | 'commitStage'
    | 'beginPurchaseOrderConfirmation'
    | 'confirmPurchaseOrderBatch'
    | 'recordConfirmationProgress'
    | 'bindPurchaseOrderStep'
    | 'failPurchaseOrderCreation'
    | 'releasePurchaseOrderBatches'
  >;
  /** The order worker's queue: a large order's confirmation steps run there. */
  orderWork: WorkQueue<OrderWorkMessage>;
};

/** POST /purchase-orders input, validated by the transport (CreatePurchaseOrderSchema). */
export interface PurchaseOrderInput {
  batch_ids: string[];
  buyer: string;
  /** USD per kg, > 0. */
  price_usd_per_kg: number;
  /** The EU importer (the DDS operator). */
  buyer_operator?: PurchaseOrder['buyer_operator'];
  /** The ledger address the buyer pays from (0x + 40 hex digits, checked by the transport). */
  buyer_address?: string;
}

/** The ports creating a purchase order needs. */
export interface CreationDeps {
  batches: Pick<BatchStore, 'getMany'>;
  custody: Pick<
    CustodyStore,
    'createPurchaseOrder' | 'beginPurchaseOrderCreation' | 'failPurchaseOrderCreation' | 'releasePurchaseOrderBatches'
  >;
  /** The order worker's queue: a large order's batches are bound there. */
  orderWork: WorkQueue<OrderWorkMessage>;
  now: () => Date;
}

/**
 * POST /purchase-orders (docs/api/batches-and-custody.md#custody-trail): a purchase order over batches of one cooperative.
 * The batches are read in batches (`getMany`) and checked (all minted, one cooperative).
 * Up to ORDER_TRANSACTION_MAX_BATCHES batches the order is created DRAFT with every batch bound
 * in one transaction (on those reads). Above, the order is stored CREATING (nothing bound yet) and
 * a CREATE message goes to the order worker, which binds the batches step by step
 * (`continueCreation`); the order is returned CREATING (the transport answers 202; GET shows
 * `bound_batch_count`, then DRAFT, or FAILED with `creation_error`)
 * (docs/api/batches-and-custody.md#purchase-orders-of-many-batches). When the message cannot be
 * queued the order is FAILED (nothing was bound) and the error is thrown. The CREATING order is in
 * the order-work index from the write that stores it, so one whose message is never queued (the
 * function stopped in between) is queued again by the purchase-order reconciler
 * (docs/api/batches-and-custody.md#resuming-stalled-orders).
 * It records `amount_due_usd_micro` (`amountDueUsdMicro`: the batches' MILLED outturn × price)
 * when every batch is milled — else it is recorded once they are, when a payment arrives or the
 * settlement is read — and the optional `buyer_address` (lower-cased).
 * Errors: INSUFFICIENT_PERMISSIONS (duty EXPORTER or MANAGER; cooperative binding), BATCH_NOT_FOUND,
 * VALIDATION_ERROR (batches of several cooperatives, a batch of a small order already on a purchase order).
 */
export async function createPurchaseOrder(deps: CreationDeps, caller: Caller, input: PurchaseOrderInput): Promise<PurchaseOrder> {
  assertDuty(caller, ['EXPORTER', 'MANAGER']);
  // Read in batches (100 a request); a small order's batches are bound on these reads (no batch read again).
  const batches = await deps.batches.getMany(input.batch_ids);
  const missing = input.batch_ids.filter((_, i) => !batches[i]);
  if (missing.length) throw new DomainError('BATCH_NOT_FOUND', `Batch ${missing.join(', ')} is not recognised.`);
  const coops = new Set(batches.map((b) => b!.cooperative_id));
  if (coops.size > 1)
    throw new DomainError('VALIDATION_ERROR', 'A purchase order covers batches of one cooperative.', {
      details: [{ path: 'batch_ids', message: 'batches of several cooperatives' }],
    });
  const cooperativeId = batches[0]!.cooperative_id;
  assertActsFor(caller, cooperativeId);
  if (input.buyer_address !== undefined && !LEDGER_ADDRESS.test(input.buyer_address)) {
    throw new DomainError('VALIDATION_ERROR', 'buyer_address must be a ledger address (0x and 40 hex digits).', {
      details: [{ path: 'buyer_address', message: 'must be 0x and 40 hex digits' }],
    });
  }
  const due = amountDueUsdMicro(
    batches.map((b) => ({ outturn_kg: b!.outturn_kg })),
    input.price_usd_per_kg,
  );
  const large = input.batch_ids.length > ORDER_TRANSACTION_MAX_BATCHES;
  const po: PurchaseOrder = {
    purchase_order_id: `PO-${newJobId().slice(4)}`,
    status: large ? 'CREATING' : 'DRAFT',
    cooperative_id: cooperativeId,
    batch_ids: input.batch_ids,
    buyer: input.buyer,
    price_usd_per_kg: input.price_usd_per_kg,
    ...(input.buyer_operator ? { buyer_operator: input.buyer_operator } : {}),
    ...(due !== null ? { amount_due_usd_micro: due } : {}),
    ...(input.buyer_address ? { buyer_address: input.buyer_address.toLowerCase() } : {}),
    ...(large ? { bound_batch_count: 0 } : {}),
    created_at: deps.now().toISOString(),
    created_by: caller.sub,
  };
  if (!large) {
    await deps.custody.createPurchaseOrder(
      po,
      batches.filter((b): b is Batch => b !== null),
    );
    return po;
  }
  await deps.custody.beginPurchaseOrderCreation(po);
  try {
    await deps.orderWork.send({ purchase_order_id: po.purchase_order_id, work: 'CREATE' });
  } catch (err) {
    // Nothing is bound yet: the order is FAILED at once (no run will ever bind it), and the caller gets the error.
    const failed = {
      ...po,
      status: 'RELEASING' as const,
      creation_error: {
        code: 'NOT_QUEUED' as const,
        message: 'The order could not be handed to the order worker; nothing was bound. Create it again.',
      },
    };
    try {
      if (await deps.custody.failPurchaseOrderCreation(po.purchase_order_id, 0, failed.creation_error))
        await deps.custody.releasePurchaseOrderBatches(failed, []);
    } catch (cleanup) {
      logger.error('a CREATING order whose work was not queued could not be marked FAILED', {
        purchase_order_id: po.purchase_order_id,
        error: String(cleanup),
      });
    }
    throw err;
  }
  return po;
}

/** The ports of a large order's creation steps (the order worker). */
export interface CreationStepDeps {
  batches: Pick<BatchStore, 'getMany'>;
  custody: Pick<CustodyStore, 'getPurchaseOrder' | 'bindPurchaseOrderStep' | 'failPurchaseOrderCreation' | 'releasePurchaseOrderBatches'>;
  now: () => Date;
}

/**
 * Binds a CREATING order's batches from `bound_batch_count` on, in binding order (`bindingOrder`:
 * sorted by id), CREATION_STEP_BATCHES at a time: the step's batches read at once (`getMany`),
 * then bound in one transaction with the step recorded on the order (`bindPurchaseOrderStep`:
 * conditioned on the count it started from, so it is done and counted once; the last step makes
 * it DRAFT). A batch found on another order stops it: CREATING → RELEASING with `creation_error`
 * naming that batch, then the batches bound so far get PURCHASE_ORDER_WITHDRAWN and are released
 * and the order is FAILED (`releasePurchaseOrderBatches`; a RELEASING order met again is released
 * again, which writes nothing twice). Idempotent: a repeated or concurrent call redoes at most one
 * step, which writes nothing. No step starts after `deadline` (epoch ms, by `deps.now`).
 * Returns the order as it ends (CREATING when the deadline came first).
 */
export async function continueCreation(deps: CreationStepDeps, start: PurchaseOrder, deadline: number): Promise<PurchaseOrder> {
  let po = start;
  const order = bindingOrder(po.batch_ids);
  while (po.status === 'CREATING' && deps.now().getTime() < deadline) {
    const from = po.bound_batch_count ?? 0;
    const step = order.slice(from, from + CREATION_STEP_BATCHES);
    const heads = await deps.batches.getMany(step);
    const found = await deps.custody.bindPurchaseOrderStep(po, from, step, heads);
    if (found.kind === 'CONFLICT') {
      await deps.custody.failPurchaseOrderCreation(po.purchase_order_id, from, {
        code: 'BATCH_ON_ANOTHER_ORDER',
        message: `Batch ${found.batch_id} is already on another purchase order.`,
        batch_id: found.batch_id,
      });
    }
    po = (await deps.custody.getPurchaseOrder(po.purchase_order_id))!;
  }
  if (po.status === 'RELEASING') {
    await deps.custody.releasePurchaseOrderBatches(po, order.slice(0, po.bound_batch_count ?? 0));
    po = (await deps.custody.getPurchaseOrder(po.purchase_order_id))!;
  }
  return po;
}

/**
 * POST /purchase-orders/{id}/confirm: the purchase order becomes CONFIRMED (idempotent) and each
 * of its batches at WAREHOUSED moves to COMMITTED (trace log and audit log; callers can never set
 * COMMITTED themselves). Batches that reach WAREHOUSED later move on at that moment.
 * Up to ORDER_TRANSACTION_MAX_BATCHES batches the order and every PURCHASE_ORDER_CONFIRMED audit
 * entry are one transaction. Above, the order goes DRAFT → CONFIRMING and a CONFIRM message goes
 * to the order worker, which confirms its batches in steps of CONFIRMATION_STEP_BATCHES
 * (`continueConfirmation`); the order is returned CONFIRMING (the transport answers 202, and
 * GET /purchase-orders/{id} shows the progress). A call that finds it CONFIRMING queues the work
 * again (harmless: the steps are idempotent), which also resumes a confirmation whose messages were lost;
 * without such a call the purchase-order reconciler does (the CONFIRMING order is in the order-work
 * index from the write that begins it: docs/api/batches-and-custody.md#resuming-stalled-orders).
 * Errors: PO_NOT_FOUND, INSUFFICIENT_PERMISSIONS, PO_NOT_READY (the order is CREATING, RELEASING or FAILED).
 */
export async function confirmPurchaseOrder(
  deps: PurchaseOrderDeps,
  caller: Caller,
  id: string,
): Promise<{ po: PurchaseOrder; committed: string[] }> {
  assertDuty(caller, ['EXPORTER', 'MANAGER']);
  const po = await deps.custody.getPurchaseOrder(id);
  if (!po) throw new DomainError('PO_NOT_FOUND', `Purchase order ${id} is not recognised.`);
  assertActsFor(caller, po.cooperative_id);
  if (po.status === 'CREATING' || po.status === 'RELEASING' || po.status === 'FAILED')
    throw new DomainError('PO_NOT_READY', `Purchase order ${id} is ${po.status}: only a created order (DRAFT) can be confirmed.`);
  const at = deps.now().toISOString();
  if (po.batch_ids.length > ORDER_TRANSACTION_MAX_BATCHES) {
    const begun = await deps.custody.beginPurchaseOrderConfirmation(po, caller.sub, at);
    if (begun.status === 'CONFIRMING') await deps.orderWork.send({ purchase_order_id: id, work: 'CONFIRM' });
    return { po: begun, committed: [] };
  }
  await deps.custody.confirmPurchaseOrder(po, caller.sub, at);
  const confirmed = (await deps.custody.getPurchaseOrder(id))!;
  const committed: string[] = [];
  for (const batchId of po.batch_ids) {
    if (await commitToPurchaseOrder(deps, confirmed, batchId)) committed.push(batchId);
  }
  return { po: confirmed, committed };
}

/**
 * Confirms a CONFIRMING order's batches from `confirmed_batch_count` on, CONFIRMATION_STEP_BATCHES
 * at a time: the step's batches read at once (`getMany`), then for each, ORDER_STEP_CONCURRENCY
 * at a time, its PURCHASE_ORDER_CONFIRMED audit entry (once per batch) and its move WAREHOUSED →
 * COMMITTED, both built on that read (the entry's append gives the head the move builds on: no
 * batch is read again unless a condition finds it changed) (a batch moved already is skipped; the COMMITTED evidence, the same for every batch of
 * the order, built and archived once per run), then the step recorded on the order
 * (conditioned on the count it started from, so it counts once; the last step makes it CONFIRMED).
 * Idempotent: a repeated or concurrent call redoes at most one step, which writes nothing twice.
 * No step starts after `deadline` (epoch ms, by `deps.now`). Returns the order as it ends
 * (CONFIRMING when the deadline came first) and the batches this call moved to COMMITTED.
 */
export async function continueConfirmation(
  deps: PurchaseOrderDeps,
  start: PurchaseOrder,
  deadline: number,
): Promise<{ po: PurchaseOrder; committed: string[] }> {
  let po = start;
  const committed: string[] = [];
  const memo: EvidenceMemo = new Map();
  while (po.status === 'CONFIRMING' && deps.now().getTime() < deadline) {
    const from = po.confirmed_batch_count ?? 0;
    const step = po.batch_ids.slice(from, from + CONFIRMATION_STEP_BATCHES);
    const current = po;
    const read = await deps.batches.getMany(step);
    await forEachLimited(step, ORDER_STEP_CONCURRENCY, async (batchId, i) => {
      const batch = read[i] ?? null;
      const entry = await deps.custody.confirmPurchaseOrderBatch(current, batchId, batch ?? undefined);
      // The entry just appended is the batch's new audit head: the commit builds on it without reading the batch again.
      const head =
        batch && entry
          ? { batch: { ...batch, audit_seq: entry.sequence_number, audit_head_hash: entry.hash }, batchIsHead: true }
          : { batch };
      if (await commitToPurchaseOrder(deps, current, batchId, { ...head, memo })) committed.push(batchId);
    });
    const to = from + step.length;
    await deps.custody.recordConfirmationProgress(po.purchase_order_id, from, to, to >= po.batch_ids.length);
    po = (await deps.custody.getPurchaseOrder(po.purchase_order_id))!;
  }
  return { po, committed };
}

/**
 * GET /purchase-orders/{id}: one purchase order, for ADMIN or a token acting for its cooperative.
 * Errors: PO_NOT_FOUND (404), INSUFFICIENT_PERMISSIONS (403: another cooperative).
 */
export async function getPurchaseOrder(
  custody: Pick<CustodyStore, 'getPurchaseOrder'>,
  caller: Caller,
  id: string,
): Promise<PurchaseOrder> {
  const po = await custody.getPurchaseOrder(id);
  if (!po) throw new DomainError('PO_NOT_FOUND', `Purchase order ${id} is not recognised.`);
  assertActsFor(caller, po.cooperative_id);
  return po;
}
