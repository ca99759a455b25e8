import { defineRoute } from './define';
import { ok, created } from './success';
import { deposit, payment, payoutStatus } from '../openapi-example-records';
import * as V from '../view-schemas';
import { BatchIdParam, FarmerPaymentIdParam, PaymentIdParam, PayoutIdParam } from '../path-params';
import { ResolvePayoutSchema } from '../manual-review-schemas';
import { FarmerPayoutSchema } from '../schemas';

/**
 * The payments routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /payments/farmer-payout */
export const createFarmerPayoutRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/payments/farmer-payout',
  fn: 'create-farmer-payout',
  auth: 'jwt',
  roles: ['COOPERATIVE', 'ADMIN'],
  needs: ['table:write', 'audit:append', 'payout:discard', 'payout-provider', 'payout-state-machine:start', 'manual-payout-limit'],
  summary: 'Pay a farmer to mobile money.',
  body: FarmerPayoutSchema,
  notes:
    'Roles: ADMIN; COOPERATIVE with the MANAGER duty, of the batch\'s cooperative (moving money takes two keys: another duty, an AGENT or an MFI is 403 INSUFFICIENT_PERMISSIONS with `error.details.required_duty: "MANAGER"`, checked before the body). Limits, decided in the transaction that creates the payout, so concurrent requests cannot pass them together: the FARMER_PAYOUTs of one batch (automatic and manual) together never exceed the batch\'s value, weight_kg × (prices_ugx_per_kg[grade] + export_premium_ugx_per_kg) in UGX — the net coffee payment fixed at submission plus the export premium — each payout counted in UGX at its quoted rate: above it 422 PAYOUT_EXCEEDS_BATCH_VALUE with `error.details` {batch_value_ugx, paid_ugx, payout_ugx, exchange_rate}; the manual payouts of one cooperative (any caller) together never exceed MANUAL_PAYOUT_DAILY_LIMIT_USDC (default 10000) per UTC day: above it 422 DAILY_PAYOUT_LIMIT_REACHED with `error.details` {day, daily_limit_usdc, requested_usdc}. Nothing is created on either refusal; a payout removed because its order never reached the provider gives its share back. Answers 201 with status PROCESSING once the provider accepted the order. `amount_usdc`: > 0, at most 6 decimals, at most 100000. `batch_id` must name a batch of the cooperative delivered by `farmer_id`. Provider unreachable after 3 attempts: 503 PROVIDER_UNAVAILABLE; retry freely — nothing is created, or, when the provider could not say whether the order was placed, the payout named in `error.details.payout_id` stays PENDING and the retry resumes it under the same provider reference (201, never a second order). One payout per batch and `reason`: a second is 409 DUPLICATE_PAYOUT, nothing created. `reason: LOAN_DISBURSEMENT` is refused (400): a loan is paid out by POST /loans, after its BatchToken is locked. Provider rejects the order: 500 PAYOUT_FAILED with `error.details.payout_id`; the payout is FAILED and its automatic retries (30/60/120 s) run. Payout ids may skip a sequence number when a creation was abandoned.',
  responses: { '201': V.PayoutCreatedViewSchema },
  notFound: ['FARMER_NOT_REGISTERED', 'BATCH_NOT_FOUND'],
  success: [
    created({
      payout_id: 'PAY-2026-000002-02',
      status: 'PROCESSING',
      farmer_id: 'UG-SIR-001877',
      batch_id: 'BATCH-2026-000002',
      reason: 'QUALITY_BONUS',
      amount_usdc: 25.5,
      estimated_ugx: 94356,
      exchange_rate: 3700.25,
      phone: '+256 7•• ••• 760',
      provider_order_id: 'ord_01M829RYHRT3KXMBX0GJ87H1VB',
      estimated_completion_seconds: 30,
      created_at: '2026-11-22T18:56:10.470Z',
    }),
  ],
});

/** /payments/farmer-payout/{id} */
export const getFarmerPayoutRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/payments/farmer-payout/{id}',
  fn: 'get-farmer-payout',
  auth: 'jwt',
  roles: ['COOPERATIVE', 'ADMIN', 'MFI'],
  needs: ['table:read'],
  summary: 'Status of a farmer payout.',
  pathParams: PayoutIdParam,
  responses: { '200': V.PayoutStatusViewSchema },
  notFound: ['PAYMENT_NOT_FOUND'],
  success: [ok(payoutStatus)],
});

/** /payments/farmer-payout/{id}/resolve */
export const resolveFarmerPayoutRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/payments/farmer-payout/{id}/resolve',
  fn: 'resolve-farmer-payout',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'audit:append', 'payout-state-machine:start'],
  summary: "Close a payout in manual review: paid in cash at the office, or a retry to the farmer's current phone.",
  body: ResolvePayoutSchema,
  pathParams: FarmerPaymentIdParam,
  notes:
    'Closes a payout in MANUAL_REVIEW — a farmer payout `PAY-…` or a loan disbursement `DISB-…` (its loan stays ACTIVE throughout). Roles: ADMIN; COOPERATIVE with the MANAGER duty, of the payout\'s cooperative (AGENT, MFI, another duty or another cooperative: 403 INSUFFICIENT_PERMISSIONS). Unknown payout: 404 PAYMENT_NOT_FOUND. Body, one of: `{resolution: "PAID_IN_CASH", receipt_number (1–64 letters, digits, / _ . -), paid_at (ISO 8601 UTC, not in the future, not before the payout was created)}` → COMPLETED with `settlement_channel: "CASH_AT_OFFICE"` and `cash_receipt {receipt_number, paid_at}`, the cooperative\'s holding balance reduced by the payout\'s USDC, the batch\'s payment PAYMENT_CONFIRMED (net coffee payment), audit entry PAYOUT_PAID_IN_CASH; or `{resolution: "RETRY"}` → a new round of attempts through the payout state machine to the farmer\'s CURRENT phone (correct it first with PATCH /farmers/{id}; none on record: 422 PHONE_NOT_FOUND): status PROCESSING, `retry_count` 0, the USDC taken out of the holding balance again, audit entry PAYOUT_RETRY_REQUESTED. Round r makes attempts 4r+1 … 4r+4 with new provider references `<payout_id>-A<n>` (every earlier order has FAILED, so nothing is paid twice), with the same 30/60/120 s retries; if it ends in MANUAL_REVIEW again, the USDC is held again and the manager notified again. Anything else is 400 VALIDATION_ERROR. A payout that is not in MANUAL_REVIEW (never there, already resolved, or resolved by a concurrent request: exactly one of concurrent resolutions wins) is 422 STAGE_OUT_OF_ORDER with `details.status` — the nearest code of the catalogue: the payout\'s lifecycle is not at the step a resolution belongs to (DUPLICATE_REQUEST is about idempotency keys, DUPLICATE_PAYOUT about creating a second payout). Answer: the payout status response with `resolution`, `phone` (masked), `attempt`, `resolution_round`, `resolved_at`. Payout and payment reads show `settlement_channel` (MOBILE_MONEY unless paid in cash) and `cash_receipt` (null unless paid in cash).',
  responses: { '200': V.PayoutResolutionViewSchema },
  notFound: ['PAYMENT_NOT_FOUND'],
  success: [
    ok({
      ...payoutStatus,
      payout_id: 'PAY-2026-000004-01',
      settlement_channel: 'CASH_AT_OFFICE',
      cash_receipt: { receipt_number: 'RCPT-MBL-0042', paid_at: '2026-11-23T08:10:00.000Z' },
      failure_reason: 'INVALID_MSISDN',
      resolution: 'PAID_IN_CASH',
      phone: '+256 7•• ••• 613',
      attempt: 4,
      resolution_round: 0,
      resolved_at: '2026-11-23T08:12:41.003Z',
    }),
  ],
});

/** /payments/{id} */
export const getPaymentRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/payments/{id}',
  fn: 'get-payment',
  auth: 'jwt',
  roles: ['COOPERATIVE', 'ADMIN', 'MFI'],
  needs: ['table:read'],
  summary: 'A payment record of any type.',
  pathParams: PaymentIdParam,
  notes:
    "The payment record by type. `PAY-…`: FARMER_PAYOUT (ADMIN; the payout's cooperative). `DEP-…`: MFI_DEPOSIT with `mfi_id, source_currency, source_amount, ramp_payment_id, chain_tx_hash, vault_shares_issued` (integer share units) and `refund_tx_hash, refunded_at, failure_reason`; status PROCESSING, COMPLETED, FAILED or REFUNDED; ADMIN, or the MFI whose deposit it is (another MFI and every COOPERATIVE: 403 INSUFFICIENT_PERMISSIONS). Unknown id: 404 PAYMENT_NOT_FOUND.",
  responses: { '200': V.PaymentViewSchema },
  notFound: ['PAYMENT_NOT_FOUND'],
  success: [
    {
      ...ok(
        payment,
        'A FARMER_PAYOUT or LOAN_DISBURSEMENT (`PAY-…`, `DISB-…`, the latter with `loan_id`) or an MFI_DEPOSIT (`DEP-…`, see the deposit fields).',
      ),
      examples: {
        FARMER_PAYOUT: { summary: 'A farmer payout (PAY-…)', value: payment },
        MFI_DEPOSIT: { summary: 'An MFI deposit (DEP-…)', value: deposit },
      },
    },
  ],
});

/** /payments */
export const listPaymentsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/payments',
  fn: 'list-payments',
  auth: 'jwt',
  roles: ['COOPERATIVE', 'ADMIN'],
  needs: ['table:read'],
  summary: 'Payments of a batch, paginated.',
  query: [
    { name: 'batch_id', in: 'query', required: true, schema: BatchIdParam },
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
    { name: 'next_token', in: 'query', required: false, description: 'Opaque, from the previous page.', schema: { type: 'string' } },
  ],
  notes:
    'Query: `batch_id` (required), `limit` (1–100, default 50), `next_token` (opaque, from the previous page). Oldest first. `total` counts all payments of the batch.',
  responses: { '200': V.PaymentListViewSchema },
  notFound: ['BATCH_NOT_FOUND'],
  success: [
    ok({
      payments: [
        {
          payment_id: 'PAY-2026-000002-01',
          payment_type: 'FARMER_PAYOUT',
          status: 'COMPLETED',
          amount_usdc: 238.686576,
          completed_at: '2026-11-22T18:54:55.522Z',
        },
      ],
      total: 1,
      limit: 50,
      next_token: null,
    }),
  ],
});
