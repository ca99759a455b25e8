import { defineRoute } from './define';
import { accepted, ok, created } from './success';
import { confirmedPurchaseOrder, purchaseOrder, settlement, settlementReading, unappliedPayment } from '../openapi-example-records';
import * as V from '../view-schemas';
import { PurchaseOrderIdParam } from '../path-params';
import { CreatePurchaseOrderSchema, RefundBuyerPaymentSchema, SettlePurchaseOrderSchema } from '../schemas';

/**
 * The purchase orders routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /purchase-orders */
export const createPurchaseOrderRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/purchase-orders',
  fn: 'create-purchase-order',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'table:batch-read', 'audit:append', 'order-work-queue:send'],
  summary: 'Create a purchase order over batches (DRAFT; above 40 batches CREATING, bound in the background).',
  body: CreatePurchaseOrderSchema,
  notes:
    'Roles: ADMIN; COOPERATIVE with EXPORTER or MANAGER duty. 1–2,000 batches of one cooperative (`MAX_PURCHASE_ORDER_BATCHES`), none already on a purchase order. Up to 40 batches the order is created and every batch bound in one transaction: 201 DRAFT, or 400 VALIDATION_ERROR naming a batch already on another order. Above 40 the answer is 202 at once with the order CREATING (`bound_batch_count` 0): the order worker binds its batches 40 at a time, in order of batch id, each step one transaction (docs/api/batches-and-custody.md#purchase-orders-of-many-batches); GET /purchase-orders/{id} shows `bound_batch_count` of `batch_count` until it is DRAFT, or, when one of its batches is on another order, RELEASING then FAILED with `creation_error` (`code` BATCH_ON_ANOTHER_ORDER, `batch_id`) and every batch it had bound released. `buyer_operator` (name, EORI, address, email, EU country) is the EU importer named in the due diligence statement. `buyer_address` (optional, `0x` + 40 hex digits, kept lower-case): the ledger address the buyer pays the vault from; when named, only its payments count toward the order (others stay in escrow as unapplied payments, refundable by an ADMIN). 201 `{purchase_order_id, status: "DRAFT", amount_due_usdc, paid_usdc, buyer_address, …}`: `amount_due_usdc` = Σ over the batches of the green-coffee weight (the MILLED stage\'s `outturn_kg`) × `price_usd_per_kg`, rounded down to the micro-USDC per batch — null until every batch is milled (it is recorded once they are); the order settles only once its buyer has paid it in full (GET /purchase-orders/{id}/settlement). Each batch\'s audit log records the order.',
  responses: { '201': V.PurchaseOrderViewSchema, '202': V.PurchaseOrderViewSchema },
  notFound: ['BATCH_NOT_FOUND'],
  success: [
    created(purchaseOrder),
    accepted(
      { ...purchaseOrder, status: 'CREATING', batch_count: 600, bound_batch_count: 0 },
      'A large order (above 40 batches), CREATING: the order worker binds its batches in the background; GET /purchase-orders/{id} (`Location`) shows `bound_batch_count` of `batch_count` until it is DRAFT (or FAILED, with `creation_error`).',
    ),
  ],
});

/** /purchase-orders/{id}/confirm */
export const confirmPurchaseOrderRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/purchase-orders/{id}/confirm',
  fn: 'confirm-purchase-order',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'audit:append', 'pin-store', 'ledger-write-queue:send', 'order-work-queue:send'],
  summary: 'Confirm a purchase order: its WAREHOUSED batches move to COMMITTED.',
  pathParams: PurchaseOrderIdParam,
  notes:
    'Confirms the order (idempotent) and moves each of its WAREHOUSED batches to COMMITTED (trace log and audit log); batches reaching WAREHOUSED later move on at that moment. `committed_batch_ids` lists the batches moved now. An order above 40 batches is answered 202 at once, CONFIRMING: the order worker confirms its batches 16 at a time in the background (`confirmed_batch_count` of `batch_count` on GET /purchase-orders/{id}) until it is CONFIRMED (docs/api/batches-and-custody.md#purchase-orders-of-many-batches); calling confirm again while it is CONFIRMING queues the work again (harmless, and resumes a confirmation whose work was lost), once CONFIRMED it answers 200. An order still CREATING (its batches being bound), RELEASING or FAILED: 409 PO_NOT_READY. Unknown id: 404 PO_NOT_FOUND.',
  responses: { '200': V.ConfirmedPurchaseOrderViewSchema, '202': V.ConfirmedPurchaseOrderViewSchema },
  notFound: ['PO_NOT_FOUND'],
  success: [
    ok({
      ...purchaseOrder,
      status: 'CONFIRMED',
      confirmed_at: '2026-11-22T18:55:01.950Z',
      confirmed_batch_count: 1,
      committed_batch_ids: ['BATCH-2026-000001'],
    }),
    {
      status: '202',
      description:
        'A large order still CONFIRMING: the order worker confirms its batches in the background; GET /purchase-orders/{id} shows its progress (`confirmed_batch_count` of `batch_count`).',
      example: {
        ...purchaseOrder,
        status: 'CONFIRMING',
        confirmed_at: '2026-11-22T18:55:01.950Z',
        batch_count: 600,
        bound_batch_count: 600,
        confirmed_batch_count: 0,
        committed_batch_ids: [],
      },
    },
  ],
});

/** /purchase-orders/{id}/settlement */
export const getSettlementRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/purchase-orders/{id}/settlement',
  fn: 'get-settlement',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read'],
  summary:
    "A purchase order's buyer payments and settlement: AWAITING_PAYMENT with paid and due, or how the payments were applied (loans repaid with interest, batches SETTLED, remainder released); unapplied payments listed.",
  pathParams: PurchaseOrderIdParam,
  notes:
    "Roles: ADMIN; COOPERATIVE of the purchase order (AGENT, MFI, another cooperative: 403 INSUFFICIENT_PERMISSIONS). A purchase order is paid in full before it settles. Its buyer pays into the lending vault, in one or more payments (chain event `purchase_order.paid`); each payment is kept once and counts toward the order when the order is CONFIRMED, not settled yet, and paid from its `buyer_address` (any address when the order names none). Until the counted payments reach `amount_due_usdc` (Σ over the batches of the MILLED `outturn_kg` × `price_usd_per_kg`; null while a batch is not milled) the answer is `status: \"AWAITING_PAYMENT\"` with `paid_usdc` (no repayments, `payment_tx_hash` null, `created_at` the order's). Then the settlement applies the counted sum (`amount_usdc` = `paid_usdc`): each of the order's batches' loans repaid oldest first with principal + simple interest at `apr` per started day from disbursement to the settlement (`repayments`, each REQUESTED → REPAID once its vault transaction is mined, its BatchToken unlocked), loans the sum could not cover (`unpaid_loan_ids`, they stay ACTIVE and their batches unsettled), the batches recorded SETTLED (trace log and audit log), and the remainder released to the cooperative's settlement address; `status` STARTED, then COMPLETED when every vault write is mined; `short_payment` true when an ADMIN settled it below the amount due (POST /purchase-orders/{id}/settle), `settled_by` who started it. `payments`: the counted payments `{tx_hash, log_index, block_number, payer, amount_usdc, status: COUNTED, received_at, …}`; `unapplied_payments`: payments that stay in the vault's escrow — `unapplied_reason` OTHER_PAYER (not from `buyer_address`), AFTER_SETTLEMENT (arrived after the settlement), UNKNOWN_PURCHASE_ORDER (the order was not confirmed yet) — with `status` UNAPPLIED, REFUND_REQUESTED, REFUNDED (`refund_tx_hash`) or REFUND_REFUSED; an ADMIN returns them with POST /purchase-orders/{id}/refunds. Exactly one settlement per purchase order. 404 PO_NOT_FOUND for an unknown order (a payment to an id that names no order is kept all the same and refunded the same way, by its `tx_hash` and `log_index`).",
  responses: { '200': V.SettlementReadingViewSchema },
  notFound: ['PO_NOT_FOUND'],
  success: [ok(settlementReading)],
});

/** /purchase-orders/{id}/settle */
export const settlePurchaseOrderRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/purchase-orders/{id}/settle',
  fn: 'settle-purchase-order',
  auth: 'jwt',
  roles: ['ADMIN'],
  needs: ['table:write', 'table:batch-read', 'audit:append', 'pin-store', 'ledger-write-queue:send', 'order-work-queue:send'],
  summary: 'Settle a purchase order on the payments counted so far; below the amount due only with accept_short_payment (ADMIN).',
  body: SettlePurchaseOrderSchema,
  pathParams: PurchaseOrderIdParam,
  notes:
    "Roles: ADMIN only (any other role: 403 INSUFFICIENT_PERMISSIONS). Settles a CONFIRMED purchase order on the payments counted toward it so far, as a full payment would (see GET /purchase-orders/{id}/settlement). Body `{accept_short_payment: boolean (default false)}`. When the counted payments reach the amount due no flag is needed (a settlement the payments did not start, e.g. the amount due became known only after the last payment); below it — or while the amount due is not known — only with `accept_short_payment: true`, recorded as `short_payment: true` with the ADMIN as `settled_by` and in the SETTLEMENT_STARTED audit entry of every batch; loans the sum cannot cover stay ACTIVE (`unpaid_loan_ids`). 200 with the settlement (STARTED). An order above 40 batches is settled by the order worker, as its buyer's full payment would be (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): the call checks the same and answers 202 at once with the order; the worker plans and starts the settlement as this ADMIN (GET /purchase-orders/{id}/settlement shows it, STARTED then COMPLETED); asked again before the settlement starts, 202 again (the first request is kept), once it has started 409 PO_ALREADY_SETTLED; a payment event meanwhile starts the same one settlement. Errors: 404 PO_NOT_FOUND; 422 PO_NOT_CONFIRMED; 409 PO_ALREADY_SETTLED (settled already, or by a payment meanwhile); 409 NO_PAYMENT_RECEIVED (no payment counts toward the order: nothing to settle); 422 SHORT_PAYMENT_NOT_ACCEPTED (paid below the amount due without `accept_short_payment: true`, `details[0].path` `accept_short_payment`).",
  responses: { '200': V.SettlementViewSchema, '202': V.PurchaseOrderViewSchema },
  notFound: ['PO_NOT_FOUND'],
  success: [
    ok({
      ...settlement,
      status: 'STARTED',
      short_payment: true,
      settled_by: 'admin-1',
      remainder_status: 'REQUESTED',
      remainder_tx_hash: null,
      completed_at: null,
    }),
    {
      status: '202',
      description:
        'An order above 40 batches: the order worker plans and starts its settlement in the background; GET /purchase-orders/{id}/settlement shows it.',
      example: { ...confirmedPurchaseOrder, batch_count: 600, confirmed_batch_count: 600, paid_usdc: 38_400 },
    },
  ],
});

/** /purchase-orders/{id}/refunds */
export const refundBuyerPaymentRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/purchase-orders/{id}/refunds',
  fn: 'refund-buyer-payment',
  auth: 'jwt',
  roles: ['ADMIN'],
  needs: ['table:write', 'audit:append', 'ledger-write-queue:send'],
  summary: 'Return an unapplied buyer payment (another payer, an unknown order, after settlement) to its payer from the vault (ADMIN).',
  body: RefundBuyerPaymentSchema,
  pathParams: PurchaseOrderIdParam,
  notes:
    "Roles: ADMIN only (any other role: 403 INSUFFICIENT_PERMISSIONS). Returns an unapplied buyer payment — from another address than the order's `buyer_address`, for an unknown or unconfirmed order, or after the settlement — to the address that paid it, from the order's escrow in the lending vault (`refundPayment(poRef, refundRef, payer, amount)`, through the single ledger writer). Body `{tx_hash, log_index}` of the payment (`PurchaseOrderPaid` log), as listed in `unapplied_payments`. 202 with the payment, `status: REFUND_REQUESTED` and its `refund_id` (`RFD-…`, one per payment: the vault accepts it once); REFUNDED with `refund_tx_hash` once mined (audit entries PAYMENT_REFUND_REQUESTED and PAYMENT_REFUNDED on the order's batches). Asking again while REFUND_REQUESTED is a no-op answered 202; a refund the vault refused (REFUND_REFUSED) may be asked again. Errors: 404 BUYER_PAYMENT_NOT_FOUND (no such payment for this order id); 409 PAYMENT_COUNTED (it counts toward the order: not refundable); 409 PAYMENT_ALREADY_REFUNDED.",
  responses: { '202': V.BuyerPaymentViewSchema },
  notFound: ['BUYER_PAYMENT_NOT_FOUND'],
  success: [
    {
      status: '202',
      description: 'Accepted: the refund is requested from the vault (REFUNDED on GET /purchase-orders/{id}/settlement once mined).',
      example: { ...unappliedPayment, status: 'REFUND_REQUESTED', refund_tx_hash: null, refunded_at: null },
    },
  ],
});

/** GET /purchase-orders/{id} */
export const getPurchaseOrderRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/purchase-orders/{id}',
  fn: 'get-purchase-order',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read'],
  summary: 'Read a purchase order: its status, batches, buyer, price, amount due and paid (ADMIN, the cooperative).',
  pathParams: PurchaseOrderIdParam,
  notes:
    "The purchase order as POST /purchase-orders and its confirmation answer it, with `batch_count`, `bound_batch_count` (the progress of a large order's creation: `status` CREATING until every batch is bound, then DRAFT; FAILED with `creation_error` when a batch was on another order) and `confirmed_batch_count` (the progress of a large order's confirmation: `status` CONFIRMING until every batch is confirmed). A COOPERATIVE token reads its own cooperative's purchase orders only (another cooperative's: 403 INSUFFICIENT_PERMISSIONS); an unknown id is 404 PO_NOT_FOUND.",
  responses: { '200': V.PurchaseOrderViewSchema },
  success: [ok({ ...confirmedPurchaseOrder, batch_count: 1, confirmed_batch_count: 1 })],
  notFound: ['PO_NOT_FOUND'],
});
