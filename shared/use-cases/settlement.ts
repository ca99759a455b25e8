import { assertActsFor } from '../domain/access';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import {
  amountDueUsdMicro,
  classifyBuyerPayment,
  isPaidInFull,
  loanAsOf,
  planSettlement,
  refundIdOf,
  type BuyerPayment,
  type LoanToSettle,
  type Settlement,
  type UnappliedReason,
} from '../domain/lending';
import { microToDecimalString } from '../domain/money';
import { forEachLimited, mapLimited, ORDER_STEP_CONCURRENCY, ORDER_TRANSACTION_MAX_BATCHES } from '../domain/purchase-order-limits';
import type { PurchaseOrder } from '../domain/records';
import type { Hex } from 'viem';
import type { BatchStore, CustodyStore, OrderWorkIndex, OrderWorkMessage } from '../domain/ports/batches';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import type { LoanStore, SettlementStore, VaultReader, VaultWriteQueue } from '../domain/ports/lending';
import type { WebhookReceiptStore, WorkQueue } from '../domain/ports/messaging';
import type { PayoutStore } from '../domain/ports/payouts';
import { logger } from '../runtime/logger';
import { CHAIN_EVENTS_SOURCE } from './chain-events';
import { requestSettlementWrites, settleOneBatch } from './settlement-carry-out';
import type { EvidenceKeeping } from './evidence-pinning';

/**
 * Settlement (docs/api/settlement.md#settlement): the buyer pays a purchase order's amount in USDC into the
 * lending vault, in one or more payments (`PurchaseOrderPaid`, reported as the signed chain event
 * `purchase_order.paid`). Each payment is kept once; it counts toward the order when the order is
 * CONFIRMED, not settled, and paid from its `buyer_address` (any address when none is named).
 * Once the counted payments reach the order's `amount_due_usd_micro` (or an ADMIN settles a
 * short-paid order on purpose), the service repays each of its batches' loans with interest from
 * the sum (oldest first), unlocks their tokens, records the batches SETTLED (trace log + audit
 * log) and releases what remains to the cooperative — exactly once per purchase order. A payment
 * that does not count stays in the vault's escrow as an unapplied payment, which an ADMIN returns
 * to its payer (`refundBuyerPayment`). Vault writes go through the single ledger writer; their
 * outcomes come back to `settlementWriteHandlers`.
 */

/** A `purchase_order.paid` chain event, its signature checked and its body validated by the transport. */
export interface BuyerPaymentEvent {
  type: 'purchase_order.paid';
  data: { purchase_order_id: string; payer: string; amount_usd_micro: string; tx_hash: string; block_number: number; log_index: number };
}

/**
 * What a buyer-payment event did (the 200 body's `outcome`): SETTLEMENT_STARTED (the order is
 * paid in full: settled), AWAITING_PAYMENT (counted, the order is not paid in full yet),
 * OTHER_PAYER / UNKNOWN_PURCHASE_ORDER / ALREADY_SETTLED (kept as an unapplied payment in escrow),
 * MISMATCH (does not match the ledger: ignored), DUPLICATE_WEBHOOK.
 */
export type BuyerPaymentOutcome =
  | 'SETTLEMENT_STARTED'
  | 'AWAITING_PAYMENT'
  | 'OTHER_PAYER'
  | 'ALREADY_SETTLED'
  | 'UNKNOWN_PURCHASE_ORDER'
  | 'MISMATCH'
  | 'DUPLICATE_WEBHOOK';

/** Log key of buyer payments that do not match the ledger, or do not count toward their order (an alarm filters on it). */
export const BUYER_PAYMENT_ALARM = 'FORGED_OR_UNEXPECTED_BUYER_PAYMENT';

/** The actor of settlements started by full payment. */
const SYSTEM_ACTOR = 'system:lending-vault';

/** The ports settlement needs. */
export interface SettlementDeps {
  receipts: WebhookReceiptStore;
  vault: Pick<VaultReader, 'purchaseOrderPaymentsInTx'>;
  custody: Pick<CustodyStore, 'getPurchaseOrder' | 'commitStage'>;
  /** Batch reads; a settlement is planned from one batched read of its order's batches (`getMany`). */
  batches: Pick<BatchStore, 'get' | 'getMany'>;
  /** The loans of the order's batches, in batched reads. */
  loans: Pick<LoanStore, 'activeForBatches'>;
  payouts: Pick<PayoutStore, 'get'>;
  settlements: SettlementStore;
  vaultWrites: VaultWriteQueue;
  /** The SETTLED stage's evidence: kept before its commit, pinned in the background (docs/api/evidence.md#evidence-on-ipfs). */
  evidence: EvidenceKeeping;
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  /** The order worker's queue: the per-batch work of an order above one transaction's size. */
  orderWork: WorkQueue<OrderWorkMessage>;
  /** Large orders with work for the order worker: SETTLE work is marked there before it is queued. */
  orderWorkIndex: Pick<OrderWorkIndex, 'markSettleWork'>;
  now: () => Date;
}

/** What settling an order needs: every settlement port but the webhook receipts and the vault's logs. */
export type SettlingDeps = Omit<SettlementDeps, 'receipts' | 'vault' | 'settlements'> & {
  settlements: Pick<
    SettlementStore,
    | 'get'
    | 'start'
    | 'payments'
    | 'recordAmountDue'
    | 'completeOrderAudits'
    | 'recordSettledProgress'
    | 'markWritesRequested'
    | 'claimRun'
    | 'releaseRun'
  >;
};

/**
 * Queues a large order's SETTLE work, marked first in the order-work index: a message lost after
 * the mark (a crash before the send, a dead-lettered run) is queued again by the purchase-order
 * reconciler (docs/api/batches-and-custody.md#resuming-stalled-orders).
 */
async function queueSettleWork(deps: Pick<SettlementDeps, 'orderWork' | 'orderWorkIndex' | 'now'>, purchaseOrderId: string): Promise<void> {
  await deps.orderWorkIndex.markSettleWork(purchaseOrderId, deps.now().toISOString());
  await deps.orderWork.send({ purchase_order_id: purchaseOrderId, work: 'SETTLE' });
}

/** Whether an order's per-batch settlement work goes to the order worker (above one transaction's size). */
const isLargeOrder = (po: Pick<PurchaseOrder, 'batch_ids'> | null): boolean => (po?.batch_ids.length ?? 0) > ORDER_TRANSACTION_MAX_BATCHES;

/** The vault-write id of a buyer payment's refund (its refund id: one per payment). */
const refundWriteId = (txHash: string, logIndex: number) => refundIdOf(txHash, logIndex);

/**
 * Applies a buyer payment. Steps: a processed `webhook-id` is DUPLICATE_WEBHOOK; the event must
 * match a mined `PurchaseOrderPaid` log of the vault at its `tx_hash`/`log_index` with the same
 * purchase order, payer and amount (else MISMATCH, alarm, nothing changed; 503 LEDGER_UNAVAILABLE
 * when the ledger cannot be read). The payment is kept once (`classifyBuyerPayment`: counted, or
 * unapplied — OTHER_PAYER, UNKNOWN_PURCHASE_ORDER, ALREADY_SETTLED — with an alarm: that USDC
 * waits in escrow for an ADMIN's refund), with an audit entry on the order's batches. Then, on
 * every delivery (so a crash half-way is repaired by the retry), the order is settled when its
 * counted payments reach the amount due (`settleWhenPaid`). The receipt is kept last.
 */
export async function applyBuyerPayment(
  deps: SettlementDeps,
  input: { webhookId: string; event: BuyerPaymentEvent },
): Promise<{ received: true; outcome: BuyerPaymentOutcome; purchase_order_id?: string }> {
  const {
    webhookId,
    event: { data },
  } = input;
  const facts = {
    webhook_id: webhookId,
    purchase_order_id: data.purchase_order_id,
    tx_hash: data.tx_hash,
    log_index: data.log_index,
    amount_usd_micro: data.amount_usd_micro,
  };
  if (await deps.receipts.hasWebhook(CHAIN_EVENTS_SOURCE, webhookId)) return { received: true, outcome: 'DUPLICATE_WEBHOOK' };

  let logs;
  try {
    logs = await deps.vault.purchaseOrderPaymentsInTx(data.tx_hash as Hex);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw new DomainError('LEDGER_UNAVAILABLE', `The ledger could not be read to check the buyer payment: ${(err as Error).message}`);
  }
  const log = logs.find((l) => l.logIndex === data.log_index);
  const mismatch = !log
    ? `no mined PurchaseOrderPaid log of the vault at ${data.tx_hash}#${data.log_index}`
    : log.purchaseOrderId !== data.purchase_order_id
      ? `the ledger log pays ${log.purchaseOrderId}`
      : log.amountUsdMicro.toString() !== data.amount_usd_micro
        ? `the ledger log pays ${log.amountUsdMicro} micro-USDC`
        : log.payer.toLowerCase() !== data.payer.toLowerCase()
          ? `the ledger log was paid by ${log.payer}`
          : null;
  if (mismatch || !log) {
    logger.error('buyer payment event does not match the ledger: ignored', { ...facts, alarm: BUYER_PAYMENT_ALARM, reason: mismatch });
    return { received: true, outcome: 'MISMATCH' };
  }

  const outcome = await receivePayment(
    deps,
    {
      purchaseOrderId: log.purchaseOrderId,
      txHash: log.txHash,
      logIndex: log.logIndex,
      blockNumber: Number(log.blockNumber),
      payer: log.payer,
      amountUsdMicro: Number(log.amountUsdMicro),
    },
    facts,
  );
  await deps.receipts.claimWebhook(CHAIN_EVENTS_SOURCE, webhookId, deps.now().toISOString());
  return { received: true, outcome, purchase_order_id: data.purchase_order_id };
}

const UNAPPLIED_OUTCOME: Record<UnappliedReason, BuyerPaymentOutcome> = {
  OTHER_PAYER: 'OTHER_PAYER',
  UNKNOWN_PURCHASE_ORDER: 'UNKNOWN_PURCHASE_ORDER',
  AFTER_SETTLEMENT: 'ALREADY_SETTLED',
};

async function receivePayment(
  deps: SettlementDeps,
  p: { purchaseOrderId: string; txHash: string; logIndex: number; blockNumber: number; payer: string; amountUsdMicro: number },
  facts: Record<string, unknown>,
): Promise<BuyerPaymentOutcome> {
  const po = await deps.custody.getPurchaseOrder(p.purchaseOrderId);
  const standing = classifyBuyerPayment({ po, settled: Boolean(po?.settled_at), payer: p.payer });
  const candidate: BuyerPayment = {
    purchase_order_id: p.purchaseOrderId,
    tx_hash: p.txHash.toLowerCase(),
    log_index: p.logIndex,
    block_number: p.blockNumber,
    payer: p.payer,
    amount_usd_micro: p.amountUsdMicro,
    status: standing.counts ? 'COUNTED' : 'UNAPPLIED',
    ...(standing.counts ? {} : { unapplied_reason: standing.reason }),
    received_at: deps.now().toISOString(),
  };
  // An order above one transaction's size gets its audit entries from the order worker, off the request path.
  const large = isLargeOrder(po);
  const { payment } = await deps.settlements.recordPayment(candidate, large ? [] : (po?.batch_ids ?? []));
  if (large) await queueSettleWork(deps, p.purchaseOrderId);
  if (payment.status !== 'COUNTED') {
    logger.error('buyer payment does not count toward its purchase order: it stays in escrow as an unapplied payment', {
      ...facts,
      alarm: BUYER_PAYMENT_ALARM,
      reason: payment.unapplied_reason,
      payer: p.payer,
      po_status: po?.status ?? null,
    });
    return UNAPPLIED_OUTCOME[payment.unapplied_reason ?? 'UNKNOWN_PURCHASE_ORDER'];
  }
  if (large) return (await paidInFull(deps, p.purchaseOrderId)) ? 'SETTLEMENT_STARTED' : 'AWAITING_PAYMENT';
  const settled = await settleWhenPaid(deps, p.purchaseOrderId, { acceptShortPayment: false, actor: SYSTEM_ACTOR });
  if (!settled) {
    logger.info('buyer payment counted: the purchase order is not paid in full yet', facts);
    return 'AWAITING_PAYMENT';
  }
  logger.info('settlement under way', {
    ...facts,
    repayments: Object.keys(settled.repayments).length,
    settled_batches: settled.settled_batch_ids.length,
    remainder_usd_micro: settled.remainder_usd_micro,
  });
  return 'SETTLEMENT_STARTED';
}

/**
 * Whether a large order's counted payments reach its amount due (read from the order: one read
 * once the amount due is recorded), so the payment event can answer at once while the order
 * worker, already queued, plans and starts the settlement (`settleLargeOrderWhenPaid`).
 */
async function paidInFull(deps: SettlingDeps, purchaseOrderId: string): Promise<boolean> {
  const po = await deps.custody.getPurchaseOrder(purchaseOrderId);
  if (!po || po.settled_at) return Boolean(po?.settled_at);
  const paid = po.paid_usd_micro ?? 0;
  return paid > 0 && isPaidInFull(paid, await amountDueOf(deps, po));
}

/**
 * The order worker's start of a large order's settlement: as a full payment starts a small one's
 * (the settlement planned from every batch's loan and stage, created once), without carrying it
 * out, which is the worker's next step. An ADMIN's request kept on the order
 * (`settle_request`, POST /purchase-orders/{id}/settle) settles it as that ADMIN — below the
 * amount due when the request accepted a short payment; otherwise only a full payment does.
 * Returns the settlement, or null while the order is not (to be) settled. Errors: the stores'.
 */
export async function settleLargeOrderWhenPaid(deps: SettlingDeps, purchaseOrderId: string): Promise<Settlement | null> {
  const request = (await deps.custody.getPurchaseOrder(purchaseOrderId))?.settle_request;
  return settleWhenPaid(deps, purchaseOrderId, {
    acceptShortPayment: request?.accept_short_payment ?? false,
    actor: request?.requested_by ?? SYSTEM_ACTOR,
    inWorker: true,
  });
}

/**
 * Records a just-CONFIRMED large order's amount due (when every batch has its outturn), so its
 * payment events answer from the order alone. Errors: the stores'.
 */
export async function recordLargeOrderAmountDue(deps: Pick<SettlingDeps, 'batches' | 'settlements'>, po: PurchaseOrder): Promise<void> {
  await amountDueOf(deps, po);
}

/**
 * The order's amount due: recorded on it, or computed from its batches' outturn once every batch
 * is milled (then recorded, when `settlements` is given). Null while a batch has no outturn. The
 * batches are read with `batches.getMany` (batched reads).
 */
async function amountDueOf(
  deps: { batches: Pick<BatchStore, 'getMany'>; settlements?: Pick<SettlementStore, 'recordAmountDue'> },
  po: PurchaseOrder,
): Promise<number | null> {
  if (po.amount_due_usd_micro !== undefined) return po.amount_due_usd_micro;
  const batches = await deps.batches.getMany(po.batch_ids);
  const due = amountDueUsdMicro(
    batches.map((b) => ({ outturn_kg: b?.outturn_kg })),
    po.price_usd_per_kg,
  );
  if (due !== null && deps.settlements) await deps.settlements.recordAmountDue(po.purchase_order_id, due);
  return due;
}

/**
 * Settles the order when its counted payments reach the amount due — or below it when
 * `acceptShortPayment` (an ADMIN's decision) and something was paid — and carries the
 * settlement out (idempotent: an existing settlement is carried out again, which repairs a crash
 * half-way). The settlement applies exactly the counted sum: it is created in one transaction
 * with the order's `settled_at` on condition that the sum did not change (read again otherwise).
 * Returns the settlement, or null when the order is not (to be) settled yet.
 */
async function settleWhenPaid(
  deps: SettlingDeps,
  purchaseOrderId: string,
  opts: { acceptShortPayment: boolean; actor: string; inWorker?: boolean },
): Promise<Settlement | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const existing = await deps.settlements.get(purchaseOrderId);
    const po = await deps.custody.getPurchaseOrder(purchaseOrderId);
    if (existing) {
      if (opts.inWorker) return existing;
      if (isLargeOrder(po)) await queueSettleWork(deps, purchaseOrderId);
      else await carryOut(deps, existing);
      return existing;
    }
    if (po?.status !== 'CONFIRMED') return null;
    const due = await amountDueOf(deps, po);
    const paid = po.paid_usd_micro ?? 0;
    if (paid <= 0 || (!isPaidInFull(paid, due) && !opts.acceptShortPayment)) return null;
    const counted = (await deps.settlements.payments(purchaseOrderId)).filter((x) => x.status === 'COUNTED');
    if (counted.reduce((sum, x) => sum + x.amount_usd_micro, 0) !== paid) continue; // a payment counting right now
    const last = [...counted].sort((a, b) => a.block_number - b.block_number || a.log_index - b.log_index).at(-1)!;
    const at = deps.now().toISOString();
    const loans: LoanToSettle[] = [];
    const exportedWithoutLoan: string[] = [];
    // Every batch and its loan in batched reads; then each loan's disbursement (one read per loan).
    const [read, stored] = await Promise.all([deps.batches.getMany(po.batch_ids), deps.loans.activeForBatches(po.batch_ids)]);
    const standing = new Array<LoanToSettle | 'EXPORTED' | null>(po.batch_ids.length);
    await forEachLimited(po.batch_ids, ORDER_STEP_CONCURRENCY, async (_, i) => {
      const loan = stored[i];
      if (loan) standing[i] = { loan: loanAsOf(loan, await deps.payouts.get(loan.disbursement_payment_id)) };
      else standing[i] = read[i]?.stage === 'EXPORTED' ? 'EXPORTED' : null;
    });
    po.batch_ids.forEach((batchId, i) => {
      const s = standing[i];
      if (s === 'EXPORTED') exportedWithoutLoan.push(batchId);
      else if (s) loans.push(s);
    });
    const plan = planSettlement({ amountUsdMicro: paid, paidAt: at, loans, exportedWithoutLoan });
    const candidate: Settlement = {
      purchase_order_id: po.purchase_order_id,
      cooperative_id: po.cooperative_id,
      status: 'STARTED',
      payment_tx_hash: last.tx_hash,
      payment_log_index: last.log_index,
      payer: last.payer,
      amount_usd_micro: paid,
      amount_due_usd_micro: due,
      short_payment: !isPaidInFull(paid, due),
      settled_by: opts.actor,
      payments: counted.map((x) => ({ tx_hash: x.tx_hash, log_index: x.log_index, payer: x.payer, amount_usd_micro: x.amount_usd_micro })),
      repayments: Object.fromEntries(plan.repayments.map((r) => [r.loan_id, r])),
      unpaid_loan_ids: plan.unpaid_loan_ids,
      settled_batch_ids: plan.settled_batch_ids,
      remainder_usd_micro: plan.remainder_usd_micro,
      remainder_status: plan.remainder_usd_micro > 0 ? 'REQUESTED' : 'NONE',
      created_at: at,
      updated_at: at,
      ...(plan.repayments.length === 0 && plan.remainder_usd_micro === 0 ? { status: 'COMPLETED' as const, completed_at: at } : {}),
    };
    const large = isLargeOrder(po);
    if (!(await deps.settlements.start(candidate, large ? [] : po.batch_ids, opts.actor))) continue;
    if (plan.unpaid_loan_ids.length)
      logger.warn('buyer payment short of the loans: the youngest stay ACTIVE', {
        purchase_order_id: purchaseOrderId,
        unpaid_loan_ids: plan.unpaid_loan_ids,
      });
    const settlement = (await deps.settlements.get(purchaseOrderId))!;
    if (opts.inWorker) return settlement;
    if (large) await queueSettleWork(deps, purchaseOrderId);
    else await carryOut(deps, settlement);
    return settlement;
  }
  throw new DomainError(
    'AUDIT_LOG_UNAVAILABLE',
    `Purchase order ${purchaseOrderId}: payments kept arriving while it was being settled; retry.`,
  );
}

/**
 * What an ADMIN's settle call did: STARTED the settlement (an order up to one transaction's size,
 * carried out on the request path), or QUEUED it for the order worker (a larger order; the order
 * as it stands, its request kept on it).
 */
export type SettleAnswer = { kind: 'STARTED'; settlement: Settlement } | { kind: 'QUEUED'; po: PurchaseOrder };

/**
 * POST /purchase-orders/{id}/settle (ADMIN): settles the order on the payments counted so far,
 * below the amount due only with `accept_short_payment: true` (an ADMIN's explicit decision;
 * recorded as `short_payment` and in the SETTLEMENT_STARTED audit entries). An order above one
 * transaction's size is settled by the order worker, as a full payment's is: the request is kept on
 * the order (`requestSettlement`; a request kept before stays) and the work queued (QUEUED), so
 * no read of every batch and loan is on the request path; asked again before the settlement
 * starts, it queues the work again; a payment event meanwhile starts the same one settlement
 * (created once). Errors: INSUFFICIENT_PERMISSIONS (not ADMIN), PO_NOT_FOUND, PO_NOT_CONFIRMED
 * (422), PO_ALREADY_SETTLED (409), NO_PAYMENT_RECEIVED (409: nothing counted toward the order),
 * SHORT_PAYMENT_NOT_ACCEPTED (422: paid below the amount due, or the amount due not known yet,
 * without accept_short_payment).
 */
export async function settlePurchaseOrder(
  deps: SettlementDeps,
  caller: Caller,
  purchaseOrderId: string,
  input: { accept_short_payment: boolean },
): Promise<SettleAnswer> {
  if (caller.role !== 'ADMIN') throw new DomainError('INSUFFICIENT_PERMISSIONS', 'Only ADMIN settles a purchase order by hand.');
  const po = await deps.custody.getPurchaseOrder(purchaseOrderId);
  if (!po) throw new DomainError('PO_NOT_FOUND', `Purchase order ${purchaseOrderId} is not recognised.`);
  if (po.status !== 'CONFIRMED') throw new DomainError('PO_NOT_CONFIRMED', `Purchase order ${purchaseOrderId} is not confirmed.`);
  if (po.settled_at || (await deps.settlements.get(purchaseOrderId)))
    throw new DomainError('PO_ALREADY_SETTLED', `Purchase order ${purchaseOrderId} is settled already.`);
  const paid = po.paid_usd_micro ?? 0;
  if (paid <= 0)
    throw new DomainError(
      'NO_PAYMENT_RECEIVED',
      `No payment counts toward purchase order ${purchaseOrderId} yet: there is nothing to settle.`,
    );
  const due = await amountDueOf(deps, po);
  if (!isPaidInFull(paid, due) && !input.accept_short_payment) {
    throw new DomainError(
      'SHORT_PAYMENT_NOT_ACCEPTED',
      `Purchase order ${purchaseOrderId} is paid ${microToDecimalString(paid)} of ${due === null ? 'an amount not known yet' : microToDecimalString(due)} USDC; settle it short only with accept_short_payment: true.`,
      {
        details: [{ path: 'accept_short_payment', message: 'must be true to settle below the amount due' }],
      },
    );
  }
  if (isLargeOrder(po)) {
    const request = { requested_by: caller.sub, requested_at: deps.now().toISOString(), accept_short_payment: input.accept_short_payment };
    if (!(await deps.settlements.requestSettlement(purchaseOrderId, request)))
      throw new DomainError('PO_ALREADY_SETTLED', `Purchase order ${purchaseOrderId} was settled meanwhile.`);
    await deps.orderWork.send({ purchase_order_id: purchaseOrderId, work: 'SETTLE' });
    return { kind: 'QUEUED', po: (await deps.custody.getPurchaseOrder(purchaseOrderId)) ?? po };
  }
  const settled = await settleWhenPaid(deps, purchaseOrderId, { acceptShortPayment: input.accept_short_payment, actor: caller.sub });
  if (!settled)
    throw new DomainError('PO_ALREADY_SETTLED', `Purchase order ${purchaseOrderId} could not be settled: it changed meanwhile.`);
  if (settled.settled_by !== caller.sub)
    throw new DomainError('PO_ALREADY_SETTLED', `Purchase order ${purchaseOrderId} was settled meanwhile by its buyer's payment.`);
  return { kind: 'STARTED', settlement: settled };
}

/**
 * POST /purchase-orders/{id}/refunds (ADMIN): returns an unapplied buyer payment (another payer,
 * an unknown order, after settlement) to the address that paid it, through the vault's
 * `refundPayment` (single ledger writer). Idempotent: a refund already requested is requested
 * again (same refund id, which the vault accepts once). Errors: INSUFFICIENT_PERMISSIONS,
 * BUYER_PAYMENT_NOT_FOUND (404), PAYMENT_COUNTED (409: it counts toward the order),
 * PAYMENT_ALREADY_REFUNDED (409).
 */
export async function refundBuyerPayment(
  deps: Pick<SettlementDeps, 'custody' | 'settlements' | 'vaultWrites' | 'now'>,
  caller: Caller,
  purchaseOrderId: string,
  input: { tx_hash: string; log_index: number },
): Promise<BuyerPayment> {
  if (caller.role !== 'ADMIN') throw new DomainError('INSUFFICIENT_PERMISSIONS', 'Only ADMIN refunds a buyer payment.');
  const notFound = () =>
    new DomainError(
      'BUYER_PAYMENT_NOT_FOUND',
      `No buyer payment ${input.tx_hash}#${input.log_index} for purchase order ${purchaseOrderId}.`,
    );
  let payment = await deps.settlements.getPayment(purchaseOrderId, input.tx_hash, input.log_index);
  if (!payment) throw notFound();
  if (payment.status === 'COUNTED')
    throw new DomainError(
      'PAYMENT_COUNTED',
      `Payment ${payment.tx_hash}#${payment.log_index} counts toward purchase order ${purchaseOrderId}; only unapplied payments are refunded.`,
    );
  if (payment.status === 'REFUNDED')
    throw new DomainError(
      'PAYMENT_ALREADY_REFUNDED',
      `Payment ${payment.tx_hash}#${payment.log_index} was refunded already (${payment.refund_tx_hash}).`,
    );
  const refundId = refundIdOf(payment.tx_hash, payment.log_index);
  if (payment.status !== 'REFUND_REQUESTED') {
    const po = await deps.custody.getPurchaseOrder(purchaseOrderId);
    const at = deps.now().toISOString();
    await deps.settlements.requestRefund(
      payment,
      { refund_id: refundId, refund_requested_by: caller.sub, refund_requested_at: at },
      po?.batch_ids ?? [],
    );
    payment = (await deps.settlements.getPayment(purchaseOrderId, input.tx_hash, input.log_index))!;
    if (payment.status === 'COUNTED')
      throw new DomainError(
        'PAYMENT_COUNTED',
        `Payment ${payment.tx_hash}#${payment.log_index} counts toward purchase order ${purchaseOrderId}.`,
      );
    if (payment.status === 'REFUNDED')
      throw new DomainError(
        'PAYMENT_ALREADY_REFUNDED',
        `Payment ${payment.tx_hash}#${payment.log_index} was refunded already (${payment.refund_tx_hash}).`,
      );
  }
  await deps.vaultWrites.request(
    refundWriteId(payment.tx_hash, payment.log_index),
    {
      kind: 'REFUND_PAYMENT',
      ref: refundId,
      purchaseOrderRef: purchaseOrderId,
      to: payment.payer,
      amountUsdMicro: BigInt(payment.amount_usd_micro),
      paymentTxHash: payment.tx_hash,
      paymentLogIndex: payment.log_index,
    },
    deps.now().toISOString(),
  );
  return payment;
}

/**
 * Carries a settlement out (an order up to one transaction's size, on the request path):
 * `requestSettlementWrites`, then every batch recorded SETTLED (`settleOneBatch`); idempotent.
 */
async function carryOut(deps: SettlingDeps, s: Settlement): Promise<void> {
  await requestSettlementWrites(deps, s);
  await forEachLimited(s.settled_batch_ids, ORDER_STEP_CONCURRENCY, (batchId) => settleOneBatch(deps, s, batchId));
}

/** The order's amount due for a reader (nothing recorded): recorded on it, else from its batches read one by one (no batched reads). */
async function amountDueReadOnly(batches: Pick<BatchStore, 'get'>, po: PurchaseOrder): Promise<number | null> {
  if (po.amount_due_usd_micro !== undefined) return po.amount_due_usd_micro;
  const read = await mapLimited(po.batch_ids, ORDER_STEP_CONCURRENCY, (id) => batches.get(id));
  return amountDueUsdMicro(
    read.map((b) => ({ outturn_kg: b?.outturn_kg })),
    po.price_usd_per_kg,
  );
}

/** What GET /purchase-orders/{id}/settlement shows: the settlement, or the order awaiting payment, with every buyer payment. */
export type SettlementReading =
  | { kind: 'SETTLED'; po: PurchaseOrder; settlement: Settlement; amountDueUsdMicro: number | null; payments: BuyerPayment[] }
  | { kind: 'AWAITING_PAYMENT'; po: PurchaseOrder; amountDueUsdMicro: number | null; payments: BuyerPayment[] };

/**
 * GET /purchase-orders/{id}/settlement (ADMIN; COOPERATIVE of the order): the settlement once
 * the order is settled, else AWAITING_PAYMENT with what is paid and due; both with the order's
 * buyer payments (counted and unapplied). Errors: PO_NOT_FOUND (404) for an unknown order;
 * INSUFFICIENT_PERMISSIONS.
 */
export async function readSettlement(
  deps: {
    custody: Pick<CustodyStore, 'getPurchaseOrder'>;
    settlements: Pick<SettlementStore, 'get' | 'payments'>;
    batches: Pick<BatchStore, 'get'>;
  },
  caller: Caller,
  purchaseOrderId: string,
): Promise<SettlementReading> {
  const po = await deps.custody.getPurchaseOrder(purchaseOrderId);
  if (!po) throw new DomainError('PO_NOT_FOUND', `Purchase order ${purchaseOrderId} is not recognised.`);
  if (caller.role === 'AGENT' || caller.role === 'MFI')
    throw new DomainError('INSUFFICIENT_PERMISSIONS', 'Settlements are shown to ADMIN and the cooperative of the purchase order.');
  assertActsFor(caller, po.cooperative_id);
  const [s, payments] = await Promise.all([deps.settlements.get(purchaseOrderId), deps.settlements.payments(purchaseOrderId)]);
  if (s)
    return { kind: 'SETTLED', po, settlement: s, amountDueUsdMicro: s.amount_due_usd_micro ?? po.amount_due_usd_micro ?? null, payments };
  return { kind: 'AWAITING_PAYMENT', po, amountDueUsdMicro: await amountDueReadOnly(deps.batches, po), payments };
}
