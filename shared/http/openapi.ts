import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { creditScoreFormulaText } from '../domain/credit-score';
import { ERROR_CODES } from './error-codes';
import {
  errorCodesFor,
  errorExamples,
  errorResponses,
  outboundWebhooks,
  STANDARD_WEBHOOK_HEADERS,
  successResponses,
  namedBranchSchemas,
} from './openapi-responses';
import { routes, type RouteDef } from '../manifest';
import {
  BatchIdParam,
  CidParam,
  DdsIdParam,
  FarmerPaymentIdParam,
  JobIdParam,
  PathId,
  PaymentIdParam,
  PayoutIdParam,
  PurchaseOrderIdParam,
} from './path-params';
import type { MaxDecimalsAction } from './schema-parts';
import { ResolvePayoutSchema, UpdateFarmerSchema } from './manual-review-schemas';
import { CreateDepositSchema } from './deposit-schemas';
import { CreateLoanSchema, LoanIdParam } from './loan-schemas';
import { CreateOutboundEndpointSchema, DeliveryIdParam, EndpointIdParam } from './outbound-webhook-schemas';
import { CreateEvidenceUploadSchema } from './evidence-upload-schemas';
import {
  CreateCooperativeSchema,
  CreatePurchaseOrderSchema,
  FarmerPayoutSchema,
  RefundBuyerPaymentSchema,
  RegisterFarmerSchema,
  SettlePurchaseOrderSchema,
  StageUpdateSchema,
  SubmitBatchSchema,
  UpdateCooperativeSchema,
} from './schemas';

/**
 * The OpenAPI 3.1 document, generated from the route table and the same valibot schemas that
 * validate requests. Behaviour the specification leaves open is written into `description`s here
 *.
 */

const requestBodies: Record<string, v.GenericSchema> = {
  'create-cooperative': CreateCooperativeSchema,
  'update-cooperative': UpdateCooperativeSchema,
  'register-farmer': RegisterFarmerSchema,
  'submit-batch': SubmitBatchSchema,
  'create-farmer-payout': FarmerPayoutSchema,
  'update-batch-stage': StageUpdateSchema,
  'create-purchase-order': CreatePurchaseOrderSchema,
  'settle-purchase-order': SettlePurchaseOrderSchema,
  'refund-buyer-payment': RefundBuyerPaymentSchema,
  'update-farmer': UpdateFarmerSchema,
  'resolve-farmer-payout': ResolvePayoutSchema,
  'create-mfi-deposit': CreateDepositSchema,
  'create-loan': CreateLoanSchema,
  'create-webhook-endpoint': CreateOutboundEndpointSchema,
  'create-evidence-upload': CreateEvidenceUploadSchema,
};

const notes: Record<string, string> = {
  'create-evidence-upload':
    "Photos by upload URL, for photos too large for the JSON body. Roles: ADMIN; COOPERATIVE with any stage duty (QUALITY_OFFICER, MILL_OPERATOR, WAREHOUSE_MANAGER, EXPORTER), of the batch's cooperative (another cooperative, AGENT, MFI: 403 INSUFFICIENT_PERMISSIONS). Body `{content_type: image/jpeg|image/png|image/webp, size_bytes: the photo's exact size, 1 to 10485760 (10 MiB)}`. 201 `{upload_id (UPL-<ULID>), batch_id, content_type, size_bytes, url, method: \"PUT\", headers, expires_at, attach_by}`: step 1, PUT the photo's bytes to `url` with exactly `headers` (Content-Type and Content-Length are signed: another type or size is refused by S3) before `expires_at` (15 minutes); step 2, send PATCH /batch/{id}/stage with `evidence_upload_id` instead of `evidence_photo_base64` before `attach_by` (24 hours). Unknown batch: 404 BATCH_NOT_FOUND. `Idempotency-Key` as on POST /batch/submit, per batch: a retry with the same key and body answers the same upload (`idempotent-replayed: true`; its URL may have expired by then), the same key with another body is 400, a key whose first request is still running 409 DUPLICATE_REQUEST.",
  'create-webhook-endpoint':
    "Outbound webhooks. Roles: ADMIN (the service's own endpoints: every event); COOPERATIVE with the MANAGER duty (events of its own cooperative's batches: every type but deposit.completed); MFI (its own deposit.completed, and loan.disbursed / loan.repaid of every loan, since MFIs fund the vault every loan is drawn from). Other roles and duties: 403 INSUFFICIENT_PERMISSIONS. Body `{url, events: [1–8 distinct types], description?}`; an event the owner may not receive or a refused URL is 400 VALIDATION_ERROR with `details[].path` `events[i]` or `url`. URLs must be https and resolve only to public addresses (private, loopback, link-local, carrier-grade NAT, metadata 169.254.169.254, multicast and reserved ranges are refused; checked again at every delivery, on the connection's own DNS answer); the local stack also accepts http on loopback. 201 `{endpoint_id (whe_…), url, events, description, status: ACTIVE, disabled_reason: null, owner {kind, id}, created_at, updated_at, secret, previous_secret_expires_at: null}` with `Location`: the `whsec_…` secret is shown only in this answer and in rotate-secret's; store it to verify signatures (Standard Webhooks).",
  'list-webhook-endpoints':
    "The caller's own endpoints (ADMIN: the service's; a cooperative MANAGER: its cooperative's; an MFI: its own), oldest first, ACTIVE or DISABLED (`disabled_reason`: a 410 answer). Secrets are never shown. Other roles: 403 INSUFFICIENT_PERMISSIONS.",
  'delete-webhook-endpoint':
    "Deletes an endpoint of the caller (ADMIN: any). Its deliveries still waiting end DEAD. Unknown or deleted id: 404 ROUTE_NOT_FOUND (the catalogue has no webhook-specific code); another owner's: 403 INSUFFICIENT_PERMISSIONS.",
  'rotate-webhook-secret':
    'A new `whsec_…` secret, shown only in this answer (200, the endpoint with `secret` and `previous_secret_expires_at`). For 24 hours both secrets sign: `webhook-signature` carries one `v1,…` signature per secret, space-separated, and a Standard Webhooks verifier accepts either. Errors as DELETE.',
  'list-webhook-deliveries':
    "The endpoint's delivery log, newest first: `{deliveries: [{delivery_id (whd_…), endpoint_id, event_id (the webhook-id), event_type, state, attempts, last_status_code, last_error, last_attempt_at, next_attempt_at, created_at, updated_at}], limit, next_token}`. `state`: PENDING (queued, not attempted yet, or replayed), FAILED (the last attempt failed; the next is due at `next_attempt_at`), DELIVERED (a 2xx answer), DEAD (no more attempts: the schedule of 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h is exhausted after 8 attempts, the receiver answered 410, or the endpoint was deleted or disabled). Query: `limit` 1–100 (default 50), `next_token` opaque. Errors as DELETE.",
  'replay-webhook-delivery':
    "Sends a delivery again, whatever its state, from the start of the retry schedule: the same `webhook-id` and body (receivers deduplicate on webhook-id), signed with the endpoint's current secret(s). 202 with the delivery, `state: PENDING`, `attempts` keeping its total count, `next_attempt_at` now. Unknown delivery or deleted endpoint: 404 ROUTE_NOT_FOUND; another owner's: 403 INSUFFICIENT_PERMISSIONS; a DISABLED endpoint (it answered 410): 400 VALIDATION_ERROR — register the URL again.",
  'submit-batch':
    'Required fields: all but `weight_slip_photo_url`. Waits for the BatchToken mint receipt up to a few seconds and answers 201; if the receipt is slow, or the request carries `Prefer: respond-async` (RFC 7240), answers 202 `{job_id, status: "PENDING", batch_id}` with `Location: /jobs/{job_id}`. The batch starts at DELIVERED; its first audit entry is `AUD-<batch_id>-1`. The NET_COFFEE_PAYMENT payout (round(weight_kg × cooperative price for the grade) UGX) starts right after; `payment_status` is INITIATED, then PAYMENT_CONFIRMED on settlement, MANUAL_REVIEW when retries are exhausted, NOT_PAYABLE when the farmer has no phone. A farm whose forest check is PENDING may deliver; FLAGGED may not (GFW_CHECK_FAILED). A batch is not readable until its token is minted. An `Idempotency-Key` header (1–255 visible ASCII characters, kept 24 hours per token subject) makes a retry with the same body return the first answer (`idempotent-replayed: true`) instead of a second batch; the same key with another body is 400, a key whose first request is still running 409 DUPLICATE_REQUEST.',
  'create-farmer-payout':
    'Roles: ADMIN; COOPERATIVE with the MANAGER duty, of the batch\'s cooperative (moving money takes two keys: another duty, an AGENT or an MFI is 403 INSUFFICIENT_PERMISSIONS with `error.details.required_duty: "MANAGER"`, checked before the body). Limits, decided in the transaction that creates the payout, so concurrent requests cannot pass them together: the FARMER_PAYOUTs of one batch (automatic and manual) together never exceed the batch\'s value, weight_kg × (prices_ugx_per_kg[grade] + export_premium_ugx_per_kg) in UGX — the net coffee payment fixed at submission plus the export premium — each payout counted in UGX at its quoted rate: above it 422 PAYOUT_EXCEEDS_BATCH_VALUE with `error.details` {batch_value_ugx, paid_ugx, payout_ugx, exchange_rate}; the manual payouts of one cooperative (any caller) together never exceed MANUAL_PAYOUT_DAILY_LIMIT_USDC (default 10000) per UTC day: above it 422 DAILY_PAYOUT_LIMIT_REACHED with `error.details` {day, daily_limit_usdc, requested_usdc}. Nothing is created on either refusal; a payout removed because its order never reached the provider gives its share back. Answers 201 with status PROCESSING once the provider accepted the order. `amount_usdc`: > 0, at most 6 decimals, at most 100000. `batch_id` must name a batch of the cooperative delivered by `farmer_id`. Provider unreachable after 3 attempts: 503 PROVIDER_UNAVAILABLE; retry freely — nothing is created, or, when the provider could not say whether the order was placed, the payout named in `error.details.payout_id` stays PENDING and the retry resumes it under the same provider reference (201, never a second order). One payout per batch and `reason`: a second is 409 DUPLICATE_PAYOUT, nothing created. `reason: LOAN_DISBURSEMENT` is refused (400): a loan is paid out by POST /loans, after its BatchToken is locked. Provider rejects the order: 500 PAYOUT_FAILED with `error.details.payout_id`; the payout is FAILED and its automatic retries (30/60/120 s) run. Payout ids may skip a sequence number when a creation was abandoned.',
  'list-payments':
    'Query: `batch_id` (required), `limit` (1–100, default 50), `next_token` (opaque, from the previous page). Oldest first. `total` counts all payments of the batch.',
  'payout-provider-webhook':
    "Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature` (v1, HMAC-SHA256 under the whsec_ secret), 5 minutes tolerance. Body `{type: \"order.settled\"|\"order.failed\", data: {order_id, reference, amount_ugx, exchange_rate, mobile_money_transaction_id, settled_at, failure_reason}}`. Each event is confirmed with the provider before it is applied: the order with the event's `reference` must exist at the provider with the event's status and `order_id`, the payout's USD amount, and the same values as the event; the provider's values are stored, never the event's. Acknowledged (200 `{received, outcome}`) only after the event is durably recorded; replays of a `webhook-id` and events that no longer apply are acknowledged and change nothing; an event the provider does not confirm is acknowledged with outcome `MISMATCH`, changes nothing (the payout is settled from the provider's own answer later) and raises an alarm. 503 PROVIDER_UNAVAILABLE when the provider cannot be asked: nothing recorded, resend with the same `webhook-id`.",
  'get-payment':
    "The payment record by type. `PAY-…`: FARMER_PAYOUT (ADMIN; the payout's cooperative). `DEP-…`: MFI_DEPOSIT with `mfi_id, source_currency, source_amount, ramp_payment_id, chain_tx_hash, vault_shares_issued` (integer share units) and `refund_tx_hash, refunded_at, failure_reason`; status PROCESSING, COMPLETED, FAILED or REFUNDED; ADMIN, or the MFI whose deposit it is (another MFI and every COOPERATIVE: 403 INSUFFICIENT_PERMISSIONS). Unknown id: 404 PAYMENT_NOT_FOUND.",
  'create-mfi-deposit':
    'Roles: MFI (deposits for the `mfi_id` of its token; another `mfi_id` in the body: 403 INSUFFICIENT_PERMISSIONS); ADMIN (must give `mfi_id`, else 400). Body `{source_currency, source_amount, mfi_id?}`: `source_currency` one of UGX, KES, USD (ISO 4217); `source_amount` whole units of it, 1 to 100000000000. Stores the MFI_DEPOSIT payment `DEP-<yyyy>-<nnnnnn>` (PROCESSING) first, then places the fiat on-ramp order (reference = the payment id, idempotent at the on-ramp) delivering USDC to the service treasury (the ledger signer). 202 `{payment_id, payment_type: "MFI_DEPOSIT", status: "PROCESSING", mfi_id, source_currency, source_amount, amount_usdc (0 until the on-ramp delivers), ramp_payment_id, created_at, …}` with `Location: /payments/DEP-…`. The deposit becomes COMPLETED (`amount_usdc`, `chain_tx_hash` of the vault deposit, `vault_shares_issued` as an integer of micro-shares (10^-6 share; the vault\'s 12-decimal on-chain figure ÷ 10^6), `completed_at`) once the on-ramp\'s signed completion webhook is confirmed and the vault deposit is mined; an on-ramp reversal withdraws the shares again: REFUNDED (`refund_tx_hash`, `refunded_at`). `Idempotency-Key` as on POST /batch/submit. On-ramp unreachable: 503 PROVIDER_UNAVAILABLE with `details.payment_id`; that deposit is FAILED (`failure_reason`), nothing was ordered, retry (should the lost call have placed the order after all, its confirmed completion revives the deposit). On-ramp refusal: 400 VALIDATION_ERROR with its reason, the deposit FAILED.',
  'onramp-webhook':
    'Standard Webhooks (as the payout webhook) from the fiat on-ramp. Body `{type: "onramp.order.completed"|"onramp.order.reversed"|"onramp.order.failed", data: {ramp_payment_id, reference (DEP-…), source_currency, source_amount, usdc_amount (decimal), transfer_tx_hash, completed_at, reversed_at, failure_reason}}`. Each event is confirmed with the on-ramp (GET of the order) before it is applied: the order must carry the deposit\'s reference, currency, amount and ramp id, the treasury as destination, the event\'s status and the same values; otherwise 200 outcome `MISMATCH`, nothing changes and an alarm is logged. Completed: the USDC is recorded and the vault deposit requested (the single ledger writer; COMPLETED when mined). Reversed: the vault reversal of the deposit\'s shares is requested once the deposit is COMPLETED (REFUNDED when mined). Failed: a deposit without delivered USDC becomes FAILED. 200 `{received: true, outcome: APPLIED|DUPLICATE_WEBHOOK|IGNORED|UNKNOWN_REFERENCE|MISMATCH}`; replays and repeated events change nothing. 503 PROVIDER_UNAVAILABLE when the on-ramp cannot be asked: nothing recorded, resend.',
  'get-mfi-vault':
    "Roles: MFI; ADMIN. `{total_assets_usdc, total_shares, share_price_usdc, loans_outstanding_usdc, utilisation, apr, par30_usdc, defaults_usdc}` read from the vault on the ledger: USDC as numbers (6 decimals), shares as integers of micro-shares (10^-6 share; on chain a share has 12 decimals, the asset's 6 plus a decimals offset of 6 against the first-depositor inflation attack), `share_price_usdc` = USDC per whole share (total assets / total shares; 1 for an empty vault), `utilisation` = loans outstanding / total assets (0 for an empty vault), `apr` the vault's annual simple-interest rate (LOAN_APR, default 0.12), `par30_usdc` the principal of ACTIVE loans 30 or more days past their `due_at`, `defaults_usdc` the principal written off (loans DEFAULTED 90 days past due: no longer in total assets, so the share price reflects the loss). For an MFI token also its own `{shares, value_usdc}`. 503 LEDGER_UNAVAILABLE when the ledger cannot be read.",
  'get-farmer': 'The phone is masked (`+256 7•• ••• 123`).',
  'update-farmer':
    "Roles: ADMIN; COOPERATIVE with the MANAGER duty, of the farmer's cooperative — the payout phone decides where money goes, so it takes the same two keys as a manual payout (an AGENT, another duty, another cooperative or an MFI: 403 INSUFFICIENT_PERMISSIONS, checked before the body). Body `{phone}`: a Ugandan mobile number in E.164 (+2567…), the registration rule (otherwise 400 VALIDATION_ERROR). Unknown farmer: 404 FARMER_NOT_REGISTERED. The same number again changes nothing. One update, conditioned on the phone being still the one read (a concurrent change: 409 DUPLICATE_REQUEST, nothing written), records `phone`, `phone_updated_at`, the token subject and an audit entry in the farmer's `phone_changes` (`{at, actor, actor_role, previous_phone, phone}`, numbers masked); then the cooperative manager is notified (the managers' SNS topic, attribute `cooperative_id`, event `farmer.phone_changed`, both numbers masked) and the old number gets an SMS naming the new number masked (a notice that cannot be sent is logged for an operator; the change stands). The answer is the farmer as GET /farmers/{id} shows it (phone masked). Payouts already made keep the phone they were made to; a payout in MANUAL_REVIEW goes to the new phone only through POST /payments/farmer-payout/{id}/resolve `{resolution: \"RETRY\"}`.",
  'resolve-farmer-payout':
    'Closes a payout in MANUAL_REVIEW — a farmer payout `PAY-…` or a loan disbursement `DISB-…` (its loan stays ACTIVE throughout). Roles: ADMIN; COOPERATIVE with the MANAGER duty, of the payout\'s cooperative (AGENT, MFI, another duty or another cooperative: 403 INSUFFICIENT_PERMISSIONS). Unknown payout: 404 PAYMENT_NOT_FOUND. Body, one of: `{resolution: "PAID_IN_CASH", receipt_number (1–64 letters, digits, / _ . -), paid_at (ISO 8601 UTC, not in the future, not before the payout was created)}` → COMPLETED with `settlement_channel: "CASH_AT_OFFICE"` and `cash_receipt {receipt_number, paid_at}`, the cooperative\'s holding balance reduced by the payout\'s USDC, the batch\'s payment PAYMENT_CONFIRMED (net coffee payment), audit entry PAYOUT_PAID_IN_CASH; or `{resolution: "RETRY"}` → a new round of attempts through the payout state machine to the farmer\'s CURRENT phone (correct it first with PATCH /farmers/{id}; none on record: 422 PHONE_NOT_FOUND): status PROCESSING, `retry_count` 0, the USDC taken out of the holding balance again, audit entry PAYOUT_RETRY_REQUESTED. Round r makes attempts 4r+1 … 4r+4 with new provider references `<payout_id>-A<n>` (every earlier order has FAILED, so nothing is paid twice), with the same 30/60/120 s retries; if it ends in MANUAL_REVIEW again, the USDC is held again and the manager notified again. Anything else is 400 VALIDATION_ERROR. A payout that is not in MANUAL_REVIEW (never there, already resolved, or resolved by a concurrent request: exactly one of concurrent resolutions wins) is 422 STAGE_OUT_OF_ORDER with `details.status` — the nearest code of the catalogue: the payout\'s lifecycle is not at the step a resolution belongs to (DUPLICATE_REQUEST is about idempotency keys, DUPLICATE_PAYOUT about creating a second payout). Answer: the payout status response with `resolution`, `phone` (masked), `attempt`, `resolution_round`, `resolved_at`. Payout and payment reads show `settlement_channel` (MOBILE_MONEY unless paid in cash) and `cash_receipt` (null unless paid in cash).',
  'get-credit-score': `Roles: ADMIN; MFI; COOPERATIVE of the farmer (another cooperative: 403 INSUFFICIENT_PERMISSIONS; unknown farmer: 404 FARMER_NOT_REGISTERED). Answer \`{farmer_id, score, band, computed_at, formula_version, factors: [{name, value, effect}]}\`, computed from this service's records (the farmer's confirmed batches — at most 1,000, read from a bounded query of the cooperative's batches —, their loans — at most 200 —, the registration date). ${creditScoreFormulaText()}`,
  'update-batch-stage':
    "Roles: COOPERATIVE with the stage's duty (GRADED: QUALITY_OFFICER, MILLED: MILL_OPERATOR, WAREHOUSED: WAREHOUSE_MANAGER, EXPORTED: EXPORTER; a token without `duties` holds all); AGENT tokens get 403. `evidence` by stage — GRADED: `{grade (required; outside the set: INVALID_GRADE), moisture_pct (required), screen_size, defect_count, cupping_score, notes}`; MILLED: `{mill_id, outturn_kg (> 0, at most the batch weight), milled_at}`; WAREHOUSED: `{warehouse_id (required), lot_number, position}`; EXPORTED: `{export_permit (required), destination_country (ISO 3166-1 alpha-2, required), vessel_name, bill_of_lading}`. Unknown evidence fields are rejected. `evidence_photo_base64`: a `data:image/jpeg|png|webp;base64,` URI whose bytes are that image type, at most 4 MiB decoded (413 above); the body may be up to 6 MiB. Larger photos, or clients that prefer it, go by upload URL: `evidence_upload_id` names an upload from POST /batch/{id}/evidence-uploads whose bytes were PUT to its URL (not together with `evidence_photo_base64`: 400). An upload that cannot be attached is 422 EVIDENCE_UPLOAD_INVALID with `details {upload_id, reason}`, reason MISSING (no such upload, or nothing was PUT), OTHER_BATCH, EXPIRED (older than 24 hours), SIZE_MISMATCH (the object is not the declared size), TYPE_MISMATCH (the bytes are not the declared image type) or ALREADY_USED (the evidence of another stage already; a retry of the same stage update may name it again); its bytes then go into the evidence like a base64 photo. The evidence JSON (RFC 8785 canonical) and the photo form one UnixFS directory; `evidence_ipfs_cid` is its CIDv1 (as `ipfs add --cid-version 1 -r` gives it). Its CAR is stored in the service's own evidence copy before anything commits (an outage there: 503 AUDIT_LOG_UNAVAILABLE, nothing changed) and served at GET /ipfs/{cid}; pinning to IPFS runs in the background: the answer does not wait for it, and GET /batch/{id} shows the stage's `evidence_pin_status` (PENDING, then PINNED, or FAILED while retries last). The stage, its audit entry and the trace-log write are committed in one transaction; the trace-log transaction is made by a single ledger writer. 200 once it is mined (`chain_tx_hash` set); 202 `{job_id, status: PENDING, …the same fields with chain_tx_hash null}` when the ledger is slow or unreachable: the stage change stands, and the job completes (GET /jobs/{id}: COMPLETE with `tx_hash`) once the transaction lands. EXPORTED from WAREHOUSED with an unconfirmed purchase order: 422 PO_NOT_CONFIRMED. COMMITTED and SETTLED are not accepted (400): COMMITTED follows purchase-order confirmation.",
  'get-ipfs':
    'Public, read-only: the public evidence packages of custody stages (a directory holding `evidence.json` and at most a photo) by their IPFS CID, from the service\'s own copy whatever their pin status — so anyone can fetch the bytes and recompute the CID with `ipfs add --cid-version 1 -r`. Nothing else is served: a due diligence statement (full names, exact plots) is private, and its CID answers 404 exactly as an unknown one. Photos have their metadata (EXIF, XMP, GPS, text chunks) removed before they are hashed. GET /ipfs/{cid}: a directory gives the JSON listing `{cid, entries: [{name, cid, size}]}` (size in bytes, sorted by name); GET /ipfs/{cid}/{name}: a text file (evidence.json) answers its exact bytes with the content type of its name; a photo (any other file) answers 302 to a presigned URL of the service\'s copy, valid 5 minutes, which serves its exact bytes. Listings and text files are immutable: `cache-control: public, max-age=29030400, immutable`, `etag: "<cid>[/name]"`. A CID or name the store does not hold: 404 ROUTE_NOT_FOUND; a malformed CID: 400 VALIDATION_ERROR. Only root CIDs of evidence packages are served (not their inner blocks).',
  'get-trace':
    "Public, no token: the trace of a batch for a buyer or a consumer scanning a bag. GET /trace/{id} answers an HTML page (phone-sized, no outside assets), or with `Accept: application/json` (and not text/html) the same view as JSON: `{batch_id, token_id, grade, weight_kg, stage, cooperative: {name, district}, farmer: {first_name, district}, plot: {source: POLYGON|POINT_AND_AREA, area_ha, geometry (GeoJSON Polygon, [lng, lat])}, stages: [{stage, at, chain_tx_hash, evidence_ipfs_cid}], dds_reference_number (once the DDS is AVAILABLE, else null), verification: {verified, checks_passed, checks_total, failures: [{sequence_number, check}], entries_total, entries_anchored, awaiting_anchor}, page_url, qr_url}` (`entries_anchored` of `entries_total` audit entries anchored on the ledger; `awaiting_anchor` failed only for want of the next periodic anchor, which the page shows as pending rather than failed). A farm registered as a point is drawn as the circle of its declared area. `verification` is computed as GET /batch/{id}/audit computes `verified` (`verified: null` with `unavailable_reason` while the ledger cannot be read). Never a phone number, a payment or amount, a farmer id or a full name (first name and district only). Plot coordinates are rounded to 3 decimals (about 110 m); a point farm's circle is drawn round the rounded point. Evidence links go to GET /ipfs/{cid}. GET /trace/{id}/qr.svg: the QR code (image/svg+xml) of the page's absolute URL, `<PUBLIC_BASE_URL>/trace/{id}`: every link comes from the PUBLIC_BASE_URL setting, never from Host or X-Forwarded-* headers. HTML pages carry a Content-Security-Policy without inline script, `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer` (HSTS in AWS). An unknown batch: 404 BATCH_NOT_FOUND (an HTML page when HTML was asked for); a malformed id: 400 VALIDATION_ERROR. `cache-control: public, max-age=60` on the page (stages change).",
  'get-batch-audit':
    "Entries `{sequence_number, message_id, type, at, actor, payload, prev_hash, hash}` of the batch's append-only, hash-chained audit log (hash = SHA-256 of the RFC 8785 canonical JSON of `{batch_id, sequence_number, type, at, actor, payload, prev_hash}`; the first prev_hash is 64 zeros). Each entry also carries `anchor` (not part of its hash): how it is anchored on the ledger — entry 1 by its BatchToken mint and each STAGE_CHANGED by its TraceLog transaction (`{tx_hash, block_number}`); every other entry (payout transitions, purchase orders, DDS, loans) by a periodic anchor: `{tx_hash, block_number, root, proof, head_sequence_number, head_hash}` — the AuditAnchor transaction that committed `root`, a Merkle root of many batches' audit heads (an OpenZeppelin StandardMerkleTree over leaves `(string batch_id, uint256 sequence_number, bytes32 0x<hash>)`), `proof` the head's proof, and the head (this batch's entry `head_sequence_number` ≥ this entry, linked to it by the hash chain); `null` until the next periodic anchor (every ANCHOR_INTERVAL_S, default 300 s) covers it. Anyone can check a head with AuditAnchor's `isAnchoredHead(root, proof, batch_id, head_sequence_number, 0x<head_hash>)`. `verified` recomputes the chain and compares it with the BatchToken mint and the TraceLog events on chain, with the pinned evidence and with every entry's anchor (the head's hash is the log's own entry, the proof leads to the root, AuditAnchor holds the root at that block): it is true only when every entry checks AND is anchored — a recent entry fails its `anchor` check with \"not yet anchored\" until then, and an entry rewritten after its anchor fails it with \"the log was rewritten after it was anchored\"; `checks` lists what matched. `npm run verify -- BATCH-…` does the same without trusting this service (it checks the anchors the entries claim on chain itself). For an AGENT token the entries of payouts, loans and settlements (and any other entry) come without amounts, phone numbers and transaction ids: those payload fields are left out and the entry carries `payload_redacted: true`; its hash can then not be recomputed from what is shown, and `verified` and `checks` are the service's verification of the full entries, unchanged (an AGENT who must check hashes asks a MANAGER or ADMIN, who read the entries as stored). Beside the entries, `evidence_pins`: `[{sequence_number, stage, evidence_ipfs_cid, evidence_pin_status}]` — each stage's evidence and whether it is pinned on IPFS yet (PENDING, PINNED, FAILED).",
  'create-purchase-order':
    'Roles: ADMIN; COOPERATIVE with EXPORTER or MANAGER duty. 1–40 batches of one cooperative, none already on a purchase order. `buyer_operator` (name, EORI, address, email, EU country) is the EU importer named in the due diligence statement. `buyer_address` (optional, `0x` + 40 hex digits, kept lower-case): the ledger address the buyer pays the vault from; when named, only its payments count toward the order (others stay in escrow as unapplied payments, refundable by an ADMIN). 201 `{purchase_order_id, status: "DRAFT", amount_due_usdc, paid_usdc, buyer_address, …}`: `amount_due_usdc` = Σ over the batches of the green-coffee weight (the MILLED stage\'s `outturn_kg`) × `price_usd_per_kg`, rounded down to the micro-USDC per batch — null until every batch is milled (it is recorded once they are); the order settles only once its buyer has paid it in full (GET /purchase-orders/{id}/settlement). Each batch\'s audit log records the order.',
  'confirm-purchase-order':
    'Confirms the order (idempotent) and moves each of its WAREHOUSED batches to COMMITTED (trace log and audit log); batches reaching WAREHOUSED later move on at that moment. `committed_batch_ids` lists the batches moved now. Unknown id: 404 PO_NOT_FOUND.',
  'chain-events-webhook':
    'For operators who use a chain-event provider: the service\'s own scheduled chain-event watcher reads the same logs from the chain and applies them through the same use case, under the same ids, so an event both report is applied once. An event is applied only once its transaction is as deep as the watcher reads (CHAIN_WATCH_CONFIRMATIONS blocks on top of its block, the block read from the ledger, not from `block_number`): before that the answer is 409 CHAIN_EVENT_NOT_CONFIRMED with `Retry-After` (seconds) and `details` `[{tx_hash, block_number, head_block, confirmations, missing}]`, nothing is read from or written to the service\'s table, and the sender must send the same event (same `webhook-id`) again later. Standard Webhooks (as the payout webhook): `webhook-id` (1–200 characters; use `evt_<tx_hash>_<log_index>`, the watcher\'s id), `webhook-timestamp` (Unix seconds, 5 minutes of tolerance), `webhook-signature` `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>" keyed with the base64-decoded part of the whsec_ secret after the prefix>`. Body `{type: "batch.stage_changed", data: {batch_id, token_id, stage, tx_hash, block_number, log_index}}` — one TraceLog `StageRecorded(tokenId, stage, …)` log: `token_id` the uint256 as a decimal string, `batch_id` `BatchToken.batchIdOf(tokenId)`, `stage` the name of the stage code (0 DELIVERED … 5 EXPORTED, 6 SETTLED) — or `{type: "purchase_order.paid", data: {purchase_order_id, payer, amount_usd_micro (decimal string), tx_hash, block_number, log_index}}` — one LendingVault `PurchaseOrderPaid(poRef, payer, amount)` log: `purchase_order_id` the bytes32 `poRef` as ASCII without its trailing zero bytes; `tx_hash`/`log_index` the log\'s transaction and block-level log index; a buyer payment must match a mined `PurchaseOrderPaid` log of the lending vault (order, payer, amount) or it is 200 MISMATCH; it is kept once and counts toward its confirmed purchase order (from its `buyer_address`, when the order names one), which settles exactly once, when the counted payments reach its amount due (see GET /purchase-orders/{id}/settlement): outcome SETTLEMENT_STARTED, AWAITING_PAYMENT (counted, not paid in full yet), or — the payment staying in escrow as an unapplied payment an ADMIN may refund — OTHER_PAYER, UNKNOWN_PURCHASE_ORDER, ALREADY_SETTLED. Every event is checked before it counts: the batch must have reached the stage with that `tx_hash` in its stage history (or not yet recorded), and the ledger must hold a mined `StageRecorded` log of the TraceLog contract in that transaction at `log_index`, for the batch\'s token and stage; otherwise the answer is 200 with `outcome: MISMATCH` and nothing changes (logged as an alarm). EXPORTED starts the automatic TOP_UP payout of round(weight_kg × export_premium_ugx_per_kg) UGX, exactly once per batch however often the event arrives (none when the premium is 0). A processed `webhook-id` is answered 200 and not applied again; 503 LEDGER_UNAVAILABLE when the ledger cannot be read and 503 PROVIDER_UNAVAILABLE when the payout cannot be started yet (retry with the same id).',
  'create-loan':
    "Roles: ADMIN; COOPERATIVE with the MANAGER duty, of the batch's cooperative. An advance to the batch's farmer against its BatchToken. The batch must be minted, at DELIVERED or later and not SETTLED (422 BATCH_NOT_ELIGIBLE); its farmer needs a mobile-money phone (422 PHONE_NOT_FOUND). Collateral value = weight_kg × the price feed's USD/kg for the batch's grade; the price feed must be at most 1 hour old (503 STALE_PRICE_FEED, loan origination paused). The loan may be at most 60 % of the collateral value (loan-to-value) and at least 50 USDC; otherwise 422 INSUFFICIENT_COLLATERAL with `error.details` {collateral_value_usdc, max_loan_usdc, minimum_loan_usdc, requested_usdc, price_usd_per_kg, price_updated_at}. One PENDING or ACTIVE loan per batch: 409 BATCH_HAS_ACTIVE_LOAN, also between concurrent requests (exactly one is created). Answer 202 with the loan (status PENDING) and `Location: /loans/{loan_id}`: the BatchToken is first locked in the lending vault on the ledger (`lock_tx_hash`), and only then is the principal paid to the farmer as a LOAN_DISBURSEMENT payment (`disbursement_payment_id`, DISB-<yyyy>-<nnnnnn>, GET /payments/{id}) through the same lifecycle and retries as farmer payouts. The loan is ACTIVE once the disbursement settles (or ends in MANUAL_REVIEW: the money then waits at the cooperative office); CANCELLED when the vault refuses the lock (no money moved). Simple interest at `apr` per started day from disbursement to repayment. The loan is due `due_at` = creation + LOAN_TERM_DAYS (default 180); 90 days past due an unpaid loan is DEFAULTED and written off (see GET /loans/{id}); a batch whose loan is DEFAULTED keeps its token in the vault and takes no new loan (409 BATCH_HAS_ACTIVE_LOAN). Loan numbers refused under concurrency are skipped.",
  'get-settlement':
    "Roles: ADMIN; COOPERATIVE of the purchase order (AGENT, MFI, another cooperative: 403 INSUFFICIENT_PERMISSIONS). A purchase order is paid in full before it settles. Its buyer pays into the lending vault, in one or more payments (chain event `purchase_order.paid`); each payment is kept once and counts toward the order when the order is CONFIRMED, not settled yet, and paid from its `buyer_address` (any address when the order names none). Until the counted payments reach `amount_due_usdc` (Σ over the batches of the MILLED `outturn_kg` × `price_usd_per_kg`; null while a batch is not milled) the answer is `status: \"AWAITING_PAYMENT\"` with `paid_usdc` (no repayments, `payment_tx_hash` null, `created_at` the order's). Then the settlement applies the counted sum (`amount_usdc` = `paid_usdc`): each of the order's batches' loans repaid oldest first with principal + simple interest at `apr` per started day from disbursement to the settlement (`repayments`, each REQUESTED → REPAID once its vault transaction is mined, its BatchToken unlocked), loans the sum could not cover (`unpaid_loan_ids`, they stay ACTIVE and their batches unsettled), the batches recorded SETTLED (trace log and audit log), and the remainder released to the cooperative's settlement address; `status` STARTED, then COMPLETED when every vault write is mined; `short_payment` true when an ADMIN settled it below the amount due (POST /purchase-orders/{id}/settle), `settled_by` who started it. `payments`: the counted payments `{tx_hash, log_index, block_number, payer, amount_usdc, status: COUNTED, received_at, …}`; `unapplied_payments`: payments that stay in the vault's escrow — `unapplied_reason` OTHER_PAYER (not from `buyer_address`), AFTER_SETTLEMENT (arrived after the settlement), UNKNOWN_PURCHASE_ORDER (the order was not confirmed yet) — with `status` UNAPPLIED, REFUND_REQUESTED, REFUNDED (`refund_tx_hash`) or REFUND_REFUSED; an ADMIN returns them with POST /purchase-orders/{id}/refunds. Exactly one settlement per purchase order. 404 PO_NOT_FOUND for an unknown order (a payment to an id that names no order is kept all the same and refunded the same way, by its `tx_hash` and `log_index`).",
  'settle-purchase-order':
    'Roles: ADMIN only (any other role: 403 INSUFFICIENT_PERMISSIONS). Settles a CONFIRMED purchase order on the payments counted toward it so far, as a full payment would (see GET /purchase-orders/{id}/settlement). Body `{accept_short_payment: boolean (default false)}`. When the counted payments reach the amount due no flag is needed (a settlement the payments did not start, e.g. the amount due became known only after the last payment); below it — or while the amount due is not known — only with `accept_short_payment: true`, recorded as `short_payment: true` with the ADMIN as `settled_by` and in the SETTLEMENT_STARTED audit entry of every batch; loans the sum cannot cover stay ACTIVE (`unpaid_loan_ids`). 200 with the settlement (STARTED). Errors: 404 PO_NOT_FOUND; 422 PO_NOT_CONFIRMED; 409 PO_ALREADY_SETTLED (settled already, or by a payment meanwhile); 409 NO_PAYMENT_RECEIVED (no payment counts toward the order: nothing to settle); 422 SHORT_PAYMENT_NOT_ACCEPTED (paid below the amount due without `accept_short_payment: true`, `details[0].path` `accept_short_payment`).',
  'refund-buyer-payment':
    "Roles: ADMIN only (any other role: 403 INSUFFICIENT_PERMISSIONS). Returns an unapplied buyer payment — from another address than the order's `buyer_address`, for an unknown or unconfirmed order, or after the settlement — to the address that paid it, from the order's escrow in the lending vault (`refundPayment(poRef, refundRef, payer, amount)`, through the single ledger writer). Body `{tx_hash, log_index}` of the payment (`PurchaseOrderPaid` log), as listed in `unapplied_payments`. 202 with the payment, `status: REFUND_REQUESTED` and its `refund_id` (`RFD-…`, one per payment: the vault accepts it once); REFUNDED with `refund_tx_hash` once mined (audit entries PAYMENT_REFUND_REQUESTED and PAYMENT_REFUNDED on the order's batches). Asking again while REFUND_REQUESTED is a no-op answered 202; a refund the vault refused (REFUND_REFUSED) may be asked again. Errors: 404 BUYER_PAYMENT_NOT_FOUND (no such payment for this order id); 409 PAYMENT_COUNTED (it counts toward the order: not refundable); 409 PAYMENT_ALREADY_REFUNDED.",
  'get-loan':
    'Roles: ADMIN; MFI; COOPERATIVE of the batch. Unknown id: 404 LOAN_NOT_FOUND. `ltv` is a fraction (0.6 = 60 %). `due_at` = creation + LOAN_TERM_DAYS (default 180). A loan still ACTIVE 90 days after `due_at` is written off in the vault on chain and becomes DEFAULTED with `defaulted_at`, `loss_usdc` (its principal) and `write_off_tx_hash`; a repayment that reaches the vault first wins.',
  'get-batch-loan':
    "Roles: ADMIN; MFI; COOPERATIVE of the batch. The batch's PENDING or ACTIVE loan, or its DEFAULTED one (written off: the BatchToken stays with the vault); 404 LOAN_NOT_FOUND when it has none (a repaid or cancelled loan is read at GET /loans/{id}).",
  'get-holding-balance':
    "USDC of the cooperative's payouts that ended in MANUAL_REVIEW, held for the farmers to collect at the cooperative office against their batch receipt.",
  'register-farmer':
    'Phone: a Ugandan mobile number in E.164 (+2567…), optional, shown masked. The farm: WGS84 GeoJSON positions [lng, lat]; more than 4 ha needs a `polygon` (closed ring, at least 4 positions, not self-intersecting), whose geodesic area is recorded as `computed_area_ha`. The farm is forest-checked at registration (`gfw_status` CLEAR or FLAGGED with the dataset used; PENDING when the forest service does not answer — POST /eudr/verify-gfw checks again). The farmer ID is checked with the national farmer registry (MAAIF): unknown there → 400; registry not answering → 202 `MAAIF_API_UNAVAILABLE` with `job_id` and the farmer recorded as pending (not usable for batches or payouts) until the job completes.',
  'verify-gfw':
    'Roles: ADMIN; COOPERATIVE of the farmer. Integrated deforestation alerts after 2020-12-31 inside the farm polygon (a point farm buffered to a circle of its declared area). 503 GFW_API_UNAVAILABLE with Retry-After: 300 after 3 failed attempts. A FLAGGED farm is logged for manual review and its batches are refused (GFW_CHECK_FAILED).',
  'get-dds-evidence':
    'Roles as GET /eudr/dds/{id}: ADMIN; COOPERATIVE of the statement (another cooperative: 403 INSUFFICIENT_PERMISSIONS; unknown id: 404 DDS_NOT_FOUND). The evidence pack an EU importer hands an authority, one JSON document: `{pack_version: 1, dds (as GET /eudr/dds/{id}), batch: {batch_id, token_id, cooperative_id, farmer_id, grade, weight_kg, moisture_pct, stage, mint_tx_hash, purchase_order_id}, forest_checks: [{farmer_id, status, checked_at, dataset: {name, version}}] (one per producer, as last recorded by the forest check), trail: [{stage, at, evidence_ipfs_cid, chain_tx_hash, audit_log_sequence_number}], audit: {head: {sequence_number, hash}, entries: [{sequence_number, type, at, prev_hash, hash, anchor}]}}` — `anchor` as on GET /batch/{id}/audit: `{tx_hash, block_number}` for the mint and stage entries (their own transactions), `{tx_hash, block_number, root, proof, head_sequence_number, head_hash}` for the others (the periodic AuditAnchor transaction, the Merkle root and the head\'s proof), null until the next periodic anchor covers the entry. Audit entries go without their payloads and the batch without its payment fields: no phone number or payout amount. The body is the RFC 8785 canonical JSON (UTF-8) of the pack, built only from stored records and the ledger (no generation time), so the same trail always gives the same bytes. Its CID is in the `X-Evidence-Pack-CID` header and the strong `ETag: "<cid>"`: a CIDv1 with codec raw (0x55) over the multihash sha2-256 of exactly the body bytes, base32 (`bafkrei…`). To recompute it: sha256 of the body bytes as received → CIDv1 raw (with multiformats: `CID.create(1, 0x55, await sha256.digest(bytes)).toString()`; or `ipfs add --cid-version 1 --raw-leaves` of the saved file, up to 256 KiB). The pack changes, and so its CID, when the trail does (a stage, an anchor, the DDS filing state or pin status). 503 LEDGER_UNAVAILABLE when the ledger cannot be read for the anchors.',
  'generate-dds':
    'Roles: ADMIN; COOPERATIVE of the batch. The batch must be GRADED or later (BATCH_NOT_ELIGIBLE) and on a purchase order naming the EU importer (`buyer_operator`, also BATCH_NOT_ELIGIBLE otherwise); its farm must be CLEAR (GFW_CHECK_FAILED). Builds the JSON record and the SubmitDdsRequest XML (EU Information System V3 schema: activity IMPORT, HS 0901, net weight, country of production UG, each producer with its base64 GeoJSON plot), keeps them privately (the statement holds full names and exact plots: it is read with a token through GET /eudr/dds/{id} and GET /eudr/dds/{id}/xml, never served by GET /ipfs nor pinned to IPFS; `ipfs_cid` is the CIDv1 of the UnixFS directory of `dds.json` and `dds.xml`, its content address) and queues the filing. Answer: 202 with `error.code` DDS_TRACES_PENDING and `dds_id`, `status` beside `error`; one statement per batch (a repeat returns the same one; 200 once AVAILABLE). GET /eudr/dds/{id} then shows SUBMITTED, AVAILABLE with `reference_number` and `verification_number`, or REJECTED with `rejection_reason`.',
};

/** The format of each route's `{id}` path parameter (the handlers validate the same schemas). */
const pathIds: Record<string, v.GenericSchema | Record<string, v.GenericSchema>> = {
  // Routes with more than one path parameter: a schema per parameter.
  'get-ipfs': { id: CidParam, name: PathId },
  'update-cooperative': PathId,
  'get-cooperative': PathId,
  'get-holding-balance': PathId,
  'list-flagged-farms': PathId,
  'get-farmer': PathId,
  'get-credit-score': PathId,
  'update-batch-stage': BatchIdParam,
  'create-evidence-upload': BatchIdParam,
  'get-batch-audit': BatchIdParam,
  'get-trace': BatchIdParam,
  'get-batch': BatchIdParam,
  'confirm-purchase-order': PurchaseOrderIdParam,
  'get-job': JobIdParam,
  'get-farmer-payout': PayoutIdParam,
  'resolve-farmer-payout': FarmerPaymentIdParam,
  'update-farmer': PathId,
  'get-payment': PaymentIdParam,
  'get-dds': DdsIdParam,
  'get-dds-xml': DdsIdParam,
  'get-dds-evidence': DdsIdParam,
  'get-loan': LoanIdParam,
  'get-settlement': PurchaseOrderIdParam,
  'settle-purchase-order': PurchaseOrderIdParam,
  'refund-buyer-payment': PurchaseOrderIdParam,
  'get-batch-loan': BatchIdParam,
  'delete-webhook-endpoint': EndpointIdParam,
  'rotate-webhook-secret': EndpointIdParam,
  'list-webhook-deliveries': EndpointIdParam,
  'replay-webhook-delivery': DeliveryIdParam,
};

/**
 * valibot → JSON Schema 2020-12. Custom checks are left out (`errorMode: 'ignore'`), except
 * `maxDecimals(n)`, rendered as the `x-max-decimals: n` extension and a sentence in the description
 * (not `multipleOf: 10^-n`, which binary floating point makes standard validators refuse for valid values).
 */
function jsonSchema(schema: v.GenericSchema) {
  return toJsonSchema(schema, {
    target: 'draft-2020-12',
    errorMode: 'ignore',
    overrideAction: ({ valibotAction, jsonSchema: js }) =>
      valibotAction.type === 'max_decimals'
        ? {
            ...js,
            'x-max-decimals': (valibotAction as MaxDecimalsAction).requirement,
            description: `${js.description ? `${js.description} ` : ''}At most ${(valibotAction as MaxDecimalsAction).requirement} decimal places (x-max-decimals); more is 400 VALIDATION_ERROR.`,
          }
        : undefined,
  });
}

const ErrorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'docs', 'request_id'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CODES) },
        message: { type: 'string' },
        docs: {
          type: 'string',
          format: 'uri',
          description: 'Link to the code in the error reference: <docs base>/errors#CODE (GET /docs/errors).',
        },
        request_id: { type: 'string', description: 'ULID; also in the x-request-id header and the logs.' },
        details: { description: 'VALIDATION_ERROR: [{path, message}]; PAYOUT_FAILED: {payout_id, status}.' },
      },
    },
  },
};

function operation(route: RouteDef) {
  const schema = requestBodies[route.fn];
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: pathSchemaOf(route.fn, m[1]!),
  }));
  const op: Record<string, unknown> = {
    operationId: operationIdOf(route),
    summary: route.summary,
    ...(notes[route.fn] ? { description: notes[route.fn] } : {}),
    tags: [tagOf(route)],
    security: route.auth === 'jwt' ? [{ bearerAuth: [] }] : route.auth === 'webhook' ? [{ standardWebhooks: [] }] : [],
    parameters: [
      ...pathParams,
      ...(QUERY[route.fn] ?? []),
      ...(route.auth === 'webhook' ? STANDARD_WEBHOOK_HEADERS : []),
      ...(IDEMPOTENT.has(route.fn) ? [IDEMPOTENCY_KEY] : []),
    ],
    responses: {
      ...successResponses(route.fn, route.path),
      ...errorResponses(errorCodesFor(route, `${notes[route.fn] ?? ''} ${route.summary}`, Boolean(schema))),
    },
  };
  if (schema) {
    op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(schema) } } };
  }
  // The trace page answers an unknown batch with an HTML page when HTML was asked for.
  const notFound = (op.responses as Record<string, { content?: Record<string, unknown> }>)['404'];
  if (route.path === '/trace/{id}' && notFound?.content) notFound.content['text/html'] = { schema: { type: 'string' } };
  return op;
}

/** The JSON Schema of path parameter `name` of `fn` (its `pathIds` entry; a plain string without one). */
function pathSchemaOf(fn: string, name: string): ReturnType<typeof jsonSchema> | { type: 'string' } {
  const entry = pathIds[fn];
  const schema =
    entry && ('kind' in entry && entry.kind === 'schema' ? (entry as v.GenericSchema) : (entry as Record<string, v.GenericSchema>)[name]);
  return schema ? jsonSchema(schema) : { type: 'string' };
}

/**
 * The function folder (`-v1` for the /v1 alias); a second route of the same function adds its last
 * path segment (GET /docs/errors: `get-docs-errors`).
 */
function operationIdOf(route: RouteDef): string {
  const base = `${route.fn}${route.path.startsWith('/v1/') ? '-v1' : ''}`;
  const first = routes.find((r) => r.fn === route.fn && r.path.startsWith('/v1/') === route.path.startsWith('/v1/'));
  return first === route
    ? base
    : `${base}-${route.path
        .split('/')
        .pop()!
        .replace(/[^A-Za-z0-9]+/g, '-')}`;
}

/** Routes that honour an `Idempotency-Key` header. */
const IDEMPOTENT = new Set(['submit-batch', 'create-mfi-deposit', 'create-evidence-upload']);
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    '1–255 visible ASCII characters, kept 24 hours per token subject: a retry with the same body returns the first answer (`idempotent-replayed: true`).',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** Query parameters by route. */
const QUERY: Record<string, unknown[]> = {
  'list-payments': [
    { name: 'batch_id', in: 'query', required: true, schema: jsonSchema(BatchIdParam) },
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
    { name: 'next_token', in: 'query', required: false, description: 'Opaque, from the previous page.', schema: { type: 'string' } },
  ],
  'list-webhook-deliveries': [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
    { name: 'next_token', in: 'query', required: false, description: 'Opaque, from the previous page.', schema: { type: 'string' } },
  ],
};

/** The reference's sections: by the first path segment. */
function tagOf(route: RouteDef): string {
  if (route.auth === 'webhook') return 'Inbound webhooks';
  if (route.auth === 'public') return 'Reference';
  const seg = route.path.replace(/^\/v1/, '').split('/')[1] ?? '';
  return (
    (
      {
        cooperatives: 'Cooperatives',
        farmers: 'Farmers',
        batch: 'Batches',
        'purchase-orders': 'Purchase orders',
        jobs: 'Jobs',
        payments: 'Payments',
        loans: 'Lending',
        mfi: 'Lending',
        eudr: 'EUDR',
        webhooks: 'Outbound webhooks',
      } as Record<string, string>
    )[seg] ?? 'Other'
  );
}

/** The reference's sections, in order. */
const TAGS = [
  { name: 'Cooperatives', description: 'Cooperatives, their prices and the USDC held for manual reviews.' },
  { name: 'Farmers', description: 'Farmer registration (forest check, national registry), phone corrections, credit score.' },
  { name: 'Batches', description: 'Delivered batches (BatchTokens), custody stages with evidence, the audit log.' },
  { name: 'Purchase orders', description: 'Purchase orders over batches and their settlement.' },
  { name: 'Payments', description: 'Farmer payouts to mobile money, payment records, manual-review resolution.' },
  { name: 'Lending', description: 'Loans against BatchTokens, MFI deposits, the lending vault.' },
  { name: 'EUDR', description: 'Deforestation checks and due diligence statements.' },
  { name: 'Jobs', description: 'Asynchronous operations.' },
  {
    name: 'Outbound webhooks',
    description:
      "Endpoints that receive the service's signed events: registration, rotation, delivery log, replay. The events themselves are under Webhooks.",
  },
  {
    name: 'Inbound webhooks',
    description: 'Signed events from the payout provider, the on-ramp and the chain watcher (Standard Webhooks).',
  },
  { name: 'Reference', description: 'This document, the rendered reference and the error codes.' },
];

/** Builds the document; `serverUrl` is the base URL the caller reached. */
export function openApiDocument(serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    paths[r.path] ??= {};
    paths[r.path]![r.method.toLowerCase()] = operation(r);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Coffee batch traceability and farmer payout API',
      version: '1.0.0',
      description: `Batches become BatchTokens on the ledger; farmers are paid to mobile money in UGX. Errors use one envelope \`{error: {code, message, docs, request_id}}\`. Unknown body fields are rejected (VALIDATION_ERROR). Order of checks: token 401, role 403, body 400, cooperative binding 403, existence 404, business rules 409/422. Timestamps are ISO 8601 UTC with Z; USDC amounts are JSON numbers with at most 6 decimals; UGX amounts are integers. Rate limit: 50 requests/s per token subject, bursts of 100 (429 RATE_LIMITED with Retry-After). Bodies up to 1 MiB (413 PAYLOAD_TOO_LARGE).\n\nThe error codes with their HTTP status: ${serverUrl}/docs/errors. Outbound webhooks are listed under Webhooks: body \`{type, timestamp, data}\`, signed per Standard Webhooks.`,
      contact: { name: 'Coffee trace operations', url: `${serverUrl}/docs` },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl }],
    tags: TAGS,
    paths,
    webhooks: outboundWebhooks(),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT (RS256, ES256 or EdDSA; claims sub, role, cooperative_id, mfi_id, duties; at most 1 hour)',
          description:
            'A JWT from the identity provider: `Authorization: Bearer <token>`. Roles ADMIN, COOPERATIVE (with `cooperative_id` and `duties`), AGENT, MFI (with `mfi_id`).',
        },
        standardWebhooks: {
          type: 'apiKey',
          in: 'header',
          name: 'webhook-signature',
          description:
            'Standard Webhooks (standardwebhooks.com): `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` under the sender\'s `whsec_` secret); 5 minutes tolerance; 401 INVALID_SIGNATURE otherwise.',
        },
      },
      schemas: { Error: ErrorEnvelope, ...namedBranchSchemas() },
      examples: errorExamples(serverUrl),
    },
    'x-error-codes': Object.fromEntries(Object.entries(ERROR_CODES).map(([code, e]) => [code, { status: e.status, meaning: e.title }])),
  };
}
