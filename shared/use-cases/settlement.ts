import { assertActsFor } from '../domain/access';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { loanAsOf, planSettlement, type LoanToSettle, type Settlement } from '../domain/lending';
import { microToUsdc } from '../domain/money';
import type { BatchStore, CustodyStore, Hex, LedgerWriteMessage, LoanStore, PayoutStore, SettlementStore, VaultReader, VaultWriteQueue, WebhookReceiptStore, WorkQueue } from '../domain/ports';
import type { StoredVaultCall } from '../domain/records';
import { logger } from '../runtime/logger';
import { CHAIN_EVENTS_SOURCE } from './chain-events';
import { settleBatch } from './custody';
import type { EvidenceKeeping } from './evidence-pinning';
import type { VaultWriteHandler } from './vault-writes';

/**
 * Settlement (decisions §10, §10.1): the buyer pays a purchase order's amount in USDC into the
 * lending vault (`PurchaseOrderPaid`, reported as the signed chain event `purchase_order.paid`);
 * the service then repays each of its batches' loans with interest from the payment (oldest
 * first), unlocks their tokens, records the batches SETTLED (trace log + audit log) and releases
 * what remains to the cooperative — exactly once per purchase order, however often the event
 * arrives. Vault writes go through the single ledger writer; their outcomes come back to
 * `settlementWriteHandlers`.
 */

/** A `purchase_order.paid` chain event, its signature checked and its body validated by the transport. */
export interface BuyerPaymentEvent {
  type: 'purchase_order.paid';
  data: { purchase_order_id: string; payer: string; amount_usd_micro: string; tx_hash: string; block_number: number; log_index: number };
}

/** What a buyer-payment event did (the 200 body's `outcome`). */
export type BuyerPaymentOutcome = 'SETTLEMENT_STARTED' | 'ALREADY_SETTLED' | 'UNKNOWN_PURCHASE_ORDER' | 'MISMATCH' | 'DUPLICATE_WEBHOOK';

/** Log key of buyer payments that do not match the ledger, or arrive for a settled order (an alarm filters on it). */
export const BUYER_PAYMENT_ALARM = 'FORGED_OR_UNEXPECTED_BUYER_PAYMENT';

/** The ports settlement needs. */
export interface SettlementDeps {
  receipts: WebhookReceiptStore;
  vault: Pick<VaultReader, 'purchaseOrderPaymentsInTx'>;
  custody: Pick<CustodyStore, 'getPurchaseOrder' | 'commitStage'>;
  batches: Pick<BatchStore, 'get'>;
  loans: Pick<LoanStore, 'activeForBatch'>;
  payouts: Pick<PayoutStore, 'get'>;
  settlements: SettlementStore;
  vaultWrites: VaultWriteQueue;
  /** The SETTLED stage's evidence: kept before its commit, pinned in the background (decisions §14). */
  evidence: EvidenceKeeping;
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  now: () => Date;
}

/** The vault-write ids of a settlement. */
export const repayWriteId = (purchaseOrderId: string, loanId: string) => `${purchaseOrderId}-repay-${loanId}`;
export const releaseWriteId = (purchaseOrderId: string) => `${purchaseOrderId}-release`;

/**
 * Applies a buyer payment. Steps: a processed `webhook-id` is DUPLICATE_WEBHOOK; the event must
 * match a mined `PurchaseOrderPaid` log of the vault at its `tx_hash`/`log_index` with the same
 * purchase order, payer and amount (else MISMATCH, alarm, nothing changed; 503 LEDGER_UNAVAILABLE
 * when the ledger cannot be read); the purchase order must exist and be CONFIRMED (else
 * UNKNOWN_PURCHASE_ORDER: the USDC stays in the vault's escrow for an operator, alarm). The first
 * payment of an order plans its settlement (`planSettlement`, at the time the event is processed)
 * and stores it once; a payment for an order settled by another transaction is ALREADY_SETTLED
 * (alarm: that USDC waits in escrow). Then — on every delivery, so a crash half-way is repaired by
 * the retry — the planned vault writes are requested (idempotent ids) and the batches recorded
 * SETTLED (a batch already SETTLED is skipped). The receipt is kept last.
 */
export async function applyBuyerPayment(deps: SettlementDeps, input: { webhookId: string; event: BuyerPaymentEvent }): Promise<{ received: true; outcome: BuyerPaymentOutcome; purchase_order_id?: string }> {
  const { webhookId, event: { data } } = input;
  const facts = { webhook_id: webhookId, purchase_order_id: data.purchase_order_id, tx_hash: data.tx_hash, log_index: data.log_index, amount_usd_micro: data.amount_usd_micro };
  if (await deps.receipts.hasWebhook(CHAIN_EVENTS_SOURCE, webhookId)) return { received: true, outcome: 'DUPLICATE_WEBHOOK' };

  let logs;
  try {
    logs = await deps.vault.purchaseOrderPaymentsInTx(data.tx_hash as Hex);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw new DomainError('LEDGER_UNAVAILABLE', `The ledger could not be read to check the buyer payment: ${(err as Error).message}`);
  }
  const log = logs.find((l) => l.logIndex === data.log_index);
  const mismatch = !log ? `no mined PurchaseOrderPaid log of the vault at ${data.tx_hash}#${data.log_index}`
    : log.purchaseOrderId !== data.purchase_order_id ? `the ledger log pays ${log.purchaseOrderId}`
      : log.amountUsdMicro.toString() !== data.amount_usd_micro ? `the ledger log pays ${log.amountUsdMicro} micro-USDC`
        : log.payer.toLowerCase() !== data.payer.toLowerCase() ? `the ledger log was paid by ${log.payer}` : null;
  if (mismatch || !log) {
    logger.error('buyer payment event does not match the ledger: ignored', { ...facts, alarm: BUYER_PAYMENT_ALARM, reason: mismatch });
    return { received: true, outcome: 'MISMATCH' };
  }

  const outcome = await settle(deps, { purchaseOrderId: log.purchaseOrderId, txHash: log.txHash, logIndex: log.logIndex, payer: log.payer, amountUsdMicro: Number(log.amountUsdMicro) }, facts);
  await deps.receipts.claimWebhook(CHAIN_EVENTS_SOURCE, webhookId, deps.now().toISOString());
  return { received: true, outcome, purchase_order_id: data.purchase_order_id };
}

async function settle(
  deps: SettlementDeps,
  payment: { purchaseOrderId: string; txHash: string; logIndex: number; payer: string; amountUsdMicro: number },
  facts: Record<string, unknown>,
): Promise<BuyerPaymentOutcome> {
  const po = await deps.custody.getPurchaseOrder(payment.purchaseOrderId);
  if (!po || po.status !== 'CONFIRMED') {
    logger.error('buyer payment for an unknown or unconfirmed purchase order: the USDC stays in escrow', { ...facts, alarm: BUYER_PAYMENT_ALARM, po_status: po?.status ?? null });
    return 'UNKNOWN_PURCHASE_ORDER';
  }
  let settlement = await deps.settlements.get(po.purchase_order_id);
  if (!settlement) {
    const at = deps.now().toISOString();
    const loans: LoanToSettle[] = [];
    const exportedWithoutLoan: string[] = [];
    for (const batchId of po.batch_ids) {
      const stored = await deps.loans.activeForBatch(batchId);
      if (stored) {
        loans.push({ loan: loanAsOf(stored, await deps.payouts.get(stored.disbursement_payment_id)) });
        continue;
      }
      const batch = await deps.batches.get(batchId);
      if (batch?.stage === 'EXPORTED') exportedWithoutLoan.push(batchId);
    }
    const plan = planSettlement({ amountUsdMicro: payment.amountUsdMicro, paidAt: at, loans, exportedWithoutLoan });
    const candidate: Settlement = {
      purchase_order_id: po.purchase_order_id, cooperative_id: po.cooperative_id, status: 'STARTED',
      payment_tx_hash: payment.txHash, payment_log_index: payment.logIndex, payer: payment.payer, amount_usd_micro: payment.amountUsdMicro,
      repayments: Object.fromEntries(plan.repayments.map((r) => [r.loan_id, r])), unpaid_loan_ids: plan.unpaid_loan_ids, settled_batch_ids: plan.settled_batch_ids,
      remainder_usd_micro: plan.remainder_usd_micro, remainder_status: plan.remainder_usd_micro > 0 ? 'REQUESTED' : 'NONE',
      created_at: at, updated_at: at,
      ...(plan.repayments.length === 0 && plan.remainder_usd_micro === 0 ? { status: 'COMPLETED' as const, completed_at: at } : {}),
    };
    await deps.settlements.start(candidate);
    settlement = (await deps.settlements.get(po.purchase_order_id))!;
    if (plan.unpaid_loan_ids.length) logger.warn('buyer payment short of the loans: the youngest stay ACTIVE', { ...facts, unpaid_loan_ids: plan.unpaid_loan_ids });
  }
  if (settlement.payment_tx_hash.toLowerCase() !== payment.txHash.toLowerCase() || settlement.payment_log_index !== payment.logIndex) {
    logger.error('a second buyer payment for a settled purchase order: it stays in escrow', { ...facts, alarm: BUYER_PAYMENT_ALARM, settled_by: settlement.payment_tx_hash });
    return 'ALREADY_SETTLED';
  }
  await carryOut(deps, settlement);
  logger.info('settlement under way', { ...facts, repayments: Object.keys(settlement.repayments).length, settled_batch_ids: settlement.settled_batch_ids, remainder_usd_micro: settlement.remainder_usd_micro });
  return 'SETTLEMENT_STARTED';
}

/** Requests the settlement's vault writes and records its batches SETTLED; idempotent. */
async function carryOut(deps: SettlementDeps, s: Settlement): Promise<void> {
  const at = deps.now().toISOString();
  for (const r of Object.values(s.repayments)) {
    if (r.status !== 'REQUESTED') continue;
    await deps.vaultWrites.request(repayWriteId(s.purchase_order_id, r.loan_id), { kind: 'REPAY_LOAN', ref: r.loan_id, purchaseOrderRef: s.purchase_order_id, amountUsdMicro: BigInt(r.amount_usd_micro) }, at);
  }
  if (s.remainder_status === 'REQUESTED') {
    await deps.vaultWrites.request(releaseWriteId(s.purchase_order_id), { kind: 'RELEASE_REMAINDER', ref: s.purchase_order_id, cooperativeId: s.cooperative_id, amountUsdMicro: BigInt(s.remainder_usd_micro) }, at);
  }
  const repaidByBatch = new Map(Object.values(s.repayments).map((r) => [r.batch_id, r]));
  for (const batchId of s.settled_batch_ids) {
    const r = repaidByBatch.get(batchId);
    await settleBatch(deps, batchId, {
      purchase_order_id: s.purchase_order_id, payment_tx_hash: s.payment_tx_hash, amount_usdc: microToUsdc(s.amount_usd_micro),
      loan_id: r?.loan_id ?? null, loan_repaid_usdc: r ? microToUsdc(r.amount_usd_micro) : null,
    });
  }
}

/** The ports of the ledger writer's settlement handlers. */
export interface SettlementWriteDeps {
  loans: Pick<LoanStore, 'transition'>;
  settlements: Pick<SettlementStore, 'recordRepayment' | 'recordRemainder'>;
  now: () => Date;
}

/**
 * The ledger writer's handlers of REPAY_LOAN and RELEASE_REMAINDER writes. Repayment mined: the
 * loan REPAID (repaid amount, tx, the purchase order; its guard released, LOAN_REPAID audit entry)
 * and the settlement's repayment REPAID; refused: the repayment REFUSED (alarm; the loan stays
 * ACTIVE). Remainder mined: RELEASED with its tx; refused: REFUSED. The settlement completes when
 * nothing is outstanding. Idempotent.
 */
export function settlementWriteHandlers(deps: SettlementWriteDeps): {
  REPAY_LOAN: VaultWriteHandler<Extract<StoredVaultCall, { kind: 'REPAY_LOAN' }>>;
  RELEASE_REMAINDER: VaultWriteHandler<Extract<StoredVaultCall, { kind: 'RELEASE_REMAINDER' }>>;
} {
  return {
    REPAY_LOAN: {
      async mined(call, txHash) {
        const at = deps.now().toISOString();
        await deps.loans.transition(call.ref, ['PENDING', 'ACTIVE'], 'REPAID', {
          repaid_usd_micro: Number(call.amountUsdMicro), repay_tx_hash: txHash, repaid_at: at, repaid_by_purchase_order_id: call.purchaseOrderRef,
        }, at);
        await deps.settlements.recordRepayment(call.purchaseOrderRef, call.ref, { status: 'REPAID', tx_hash: txHash }, at);
      },
      async refused(call, reason) {
        logger.error('loan repayment refused by the vault: the loan stays ACTIVE', { alarm: BUYER_PAYMENT_ALARM, loan_id: call.ref, purchase_order_id: call.purchaseOrderRef, reason });
        await deps.settlements.recordRepayment(call.purchaseOrderRef, call.ref, { status: 'REFUSED' }, deps.now().toISOString());
      },
    },
    RELEASE_REMAINDER: {
      async mined(call, txHash) {
        await deps.settlements.recordRemainder(call.ref, { status: 'RELEASED', tx_hash: txHash }, deps.now().toISOString());
      },
      async refused(call, reason) {
        logger.error('release of a buyer payment remainder refused by the vault', { alarm: BUYER_PAYMENT_ALARM, purchase_order_id: call.ref, reason });
        await deps.settlements.recordRemainder(call.ref, { status: 'REFUSED' }, deps.now().toISOString());
      },
    },
  };
}

/**
 * GET /purchase-orders/{id}/settlement (ADMIN; COOPERATIVE of the order). Errors: PO_NOT_FOUND
 * (404) for an unknown order or one without a settlement yet; INSUFFICIENT_PERMISSIONS.
 */
export async function readSettlement(deps: { custody: Pick<CustodyStore, 'getPurchaseOrder'>; settlements: Pick<SettlementStore, 'get'> }, caller: Caller, purchaseOrderId: string): Promise<Settlement> {
  const po = await deps.custody.getPurchaseOrder(purchaseOrderId);
  if (!po) throw new DomainError('PO_NOT_FOUND', `Purchase order ${purchaseOrderId} is not recognised.`);
  if (caller.role === 'AGENT' || caller.role === 'MFI') throw new DomainError('INSUFFICIENT_PERMISSIONS', 'Settlements are shown to ADMIN and the cooperative of the purchase order.');
  assertActsFor(caller, po.cooperative_id);
  const s = await deps.settlements.get(purchaseOrderId);
  if (!s) throw new DomainError('PO_NOT_FOUND', `Purchase order ${purchaseOrderId} has no settlement yet: its buyer has not paid into the vault.`);
  return s;
}
