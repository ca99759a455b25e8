import { defineRoute } from './define';
import { ok, accepted } from './success';
import { deposit, loan } from '../openapi-example-records';
import * as V from '../view-schemas';
import { CreateDepositSchema } from '../deposit-schemas';
import { CreateLoanSchema, LoanIdParam } from '../loan-schemas';

/**
 * The lending routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /loans */
export const createLoanRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/loans',
  fn: 'create-loan',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'audit:append', 'price-feed', 'ledger-write-queue:send', 'loan-terms'],
  summary: "Lend to a batch's farmer against its BatchToken (locked in the vault; paid out as a LOAN_DISBURSEMENT).",
  body: CreateLoanSchema,
  notes:
    "Roles: ADMIN; COOPERATIVE with the MANAGER duty, of the batch's cooperative. An advance to the batch's farmer against its BatchToken. The batch must be minted, at DELIVERED or later and not SETTLED (422 BATCH_NOT_ELIGIBLE); its farmer needs a mobile-money phone (422 PHONE_NOT_FOUND). Collateral value = weight_kg × the price feed's USD/kg for the batch's grade; the price feed must be at most 1 hour old (503 STALE_PRICE_FEED, loan origination paused). The loan may be at most 60 % of the collateral value (loan-to-value) and at least 50 USDC; otherwise 422 INSUFFICIENT_COLLATERAL with `error.details` {collateral_value_usdc, max_loan_usdc, minimum_loan_usdc, requested_usdc, price_usd_per_kg, price_updated_at}. One PENDING or ACTIVE loan per batch: 409 BATCH_HAS_ACTIVE_LOAN, also between concurrent requests (exactly one is created). Answer 202 with the loan (status PENDING) and `Location: /loans/{loan_id}`: the BatchToken is first locked in the lending vault on the ledger (`lock_tx_hash`), and only then is the principal paid to the farmer as a LOAN_DISBURSEMENT payment (`disbursement_payment_id`, DISB-<yyyy>-<nnnnnn>, GET /payments/{id}) through the same lifecycle and retries as farmer payouts. The loan is ACTIVE once the disbursement settles (or ends in MANUAL_REVIEW: the money then waits at the cooperative office); CANCELLED when the vault refuses the lock (no money moved). Simple interest at `apr` per started day from disbursement to repayment. The loan is due `due_at` = creation + LOAN_TERM_DAYS (default 180); 90 days past due an unpaid loan is DEFAULTED and written off (see GET /loans/{id}); a batch whose loan is DEFAULTED keeps its token in the vault and takes no new loan (409 BATCH_HAS_ACTIVE_LOAN). Loan numbers refused under concurrency are skipped.",
  responses: { '202': V.LoanViewSchema },
  notFound: ['BATCH_NOT_FOUND'],
  success: [
    accepted(
      { ...loan, status: 'PENDING', lock_tx_hash: null, disbursed_at: null },
      'The loan is PENDING: the BatchToken is being locked, then the principal paid out (`Location: /loans/{loan_id}`).',
    ),
  ],
});

/** /loans/{id} */
export const getLoanRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/loans/{id}',
  fn: 'get-loan',
  auth: 'jwt',
  roles: ['ADMIN', 'MFI', 'COOPERATIVE'],
  needs: ['table:read'],
  summary: 'A loan with its collateral, loan-to-value, disbursement and repayment.',
  pathParams: LoanIdParam,
  notes:
    'Roles: ADMIN; MFI; COOPERATIVE of the batch. Unknown id: 404 LOAN_NOT_FOUND. `ltv` is a fraction (0.6 = 60 %). `due_at` = creation + LOAN_TERM_DAYS (default 180). A loan still ACTIVE 90 days after `due_at` is written off in the vault on chain and becomes DEFAULTED with `defaulted_at`, `loss_usdc` (its principal) and `write_off_tx_hash`; a repayment that reaches the vault first wins.',
  responses: { '200': V.LoanViewSchema },
  notFound: ['LOAN_NOT_FOUND'],
  success: [ok(loan)],
});

/** /mfi/deposits */
export const createMfiDepositRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/mfi/deposits',
  fn: 'create-mfi-deposit',
  auth: 'jwt',
  roles: ['MFI', 'ADMIN'],
  needs: ['table:write', 'onramp'],
  summary: 'Deposit fiat into the lending vault through the on-ramp (MFI for itself, ADMIN for an MFI): an MFI_DEPOSIT payment DEP-….',
  body: CreateDepositSchema,
  idempotent: true,
  notes:
    'Roles: MFI (deposits for the `mfi_id` of its token; another `mfi_id` in the body: 403 INSUFFICIENT_PERMISSIONS); ADMIN (must give `mfi_id`, else 400). Body `{source_currency, source_amount, mfi_id?}`: `source_currency` one of UGX, KES, USD (ISO 4217); `source_amount` whole units of it, 1 to 100000000000. Stores the MFI_DEPOSIT payment `DEP-<yyyy>-<nnnnnn>` (PROCESSING) first, then places the fiat on-ramp order (reference = the payment id, idempotent at the on-ramp) delivering USDC to the service treasury (the ledger signer). 202 `{payment_id, payment_type: "MFI_DEPOSIT", status: "PROCESSING", mfi_id, source_currency, source_amount, amount_usdc (0 until the on-ramp delivers), ramp_payment_id, created_at, …}` with `Location: /payments/DEP-…`. The deposit becomes COMPLETED (`amount_usdc`, `chain_tx_hash` of the vault deposit, `vault_shares_issued` as an integer of micro-shares (10^-6 share; the vault\'s 12-decimal on-chain figure ÷ 10^6), `completed_at`) once the on-ramp\'s signed completion webhook is confirmed and the vault deposit is mined; an on-ramp reversal withdraws the shares again: REFUNDED (`refund_tx_hash`, `refunded_at`). `Idempotency-Key` as on POST /batch/submit. On-ramp unreachable: 503 PROVIDER_UNAVAILABLE with `details.payment_id`; that deposit is FAILED (`failure_reason`), nothing was ordered, retry (should the lost call have placed the order after all, its confirmed completion revives the deposit). On-ramp refusal: 400 VALIDATION_ERROR with its reason, the deposit FAILED.',
  responses: { '202': V.DepositViewSchema },
  success: [
    accepted(
      { ...deposit, status: 'PROCESSING', amount_usdc: 0, completed_at: null, chain_tx_hash: null, vault_shares_issued: null },
      'The deposit is PROCESSING with the on-ramp (`Location: /payments/DEP-…`).',
    ),
  ],
});

/** /mfi/vault */
export const getMfiVaultRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/mfi/vault',
  fn: 'get-mfi-vault',
  auth: 'jwt',
  roles: ['MFI', 'ADMIN'],
  needs: ['vault:read', 'table:read'],
  summary:
    'The lending vault: total assets, shares, share price, loans outstanding, utilisation, rate, loans 30+ days past due (PAR30) and written-off principal; an MFI token also sees its own shares (MFI, ADMIN).',
  notes:
    "Roles: MFI; ADMIN. `{total_assets_usdc, total_shares, share_price_usdc, loans_outstanding_usdc, utilisation, apr, par30_usdc, defaults_usdc}` read from the vault on the ledger: USDC as numbers (6 decimals), shares as integers of micro-shares (10^-6 share; on chain a share has 12 decimals, the asset's 6 plus a decimals offset of 6 against the first-depositor inflation attack), `share_price_usdc` = USDC per whole share (total assets / total shares; 1 for an empty vault), `utilisation` = loans outstanding / total assets (0 for an empty vault), `apr` the vault's annual simple-interest rate (LOAN_APR, default 0.12), `par30_usdc` the principal of ACTIVE loans 30 or more days past their `due_at`, `defaults_usdc` the principal written off (loans DEFAULTED 90 days past due: no longer in total assets, so the share price reflects the loss). For an MFI token also its own `{shares, value_usdc}`. 503 LEDGER_UNAVAILABLE when the ledger cannot be read.",
  responses: { '200': V.VaultViewSchema },
  success: [
    ok({
      total_assets_usdc: 20000.111538,
      total_shares: 20000000000,
      share_price_usdc: 1.000005,
      loans_outstanding_usdc: 339.26,
      utilisation: 0.017,
      apr: 0.12,
      par30_usdc: 0,
      defaults_usdc: 0,
      shares: 20000000000,
      value_usdc: 20000.111537,
    }),
  ],
});
