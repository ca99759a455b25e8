/**
 * Every error code the service emits and what it means for an integrator (docs/api/conventions.md#http-and-errors),
 * for the API reference and API Gateway's own error responses. Its keys are the codes (`ErrorCode` in
 * ./errors.ts); the HTTP status of each is transport (shared/http/error-status.ts).
 */
export const ERROR_MEANINGS = {
  VALIDATION_ERROR: 'The request body or parameters are invalid.',
  INVALID_GRADE: 'Grade is not one of screen18, screen15, FAQ, PB.',
  WEIGHT_OUT_OF_RANGE: 'weight_kg is below 1 or above 5000.',
  GEOMETRY_RULE_VIOLATED:
    "A plot breaks one of the EU Information System's geometry rules: `details[].rule` names it (NO_HOLES, NO_REPEATED_POSITION, VALID_AT_6_DECIMALS, INSIDE_UGANDA).",
  UNAUTHORIZED: 'Missing, malformed, expired or untrusted Bearer token.',
  INVALID_SIGNATURE: 'Webhook signature missing, wrong or stale.',
  INSUFFICIENT_PERMISSIONS: 'The token lacks access to this operation or resource.',
  ROUTE_NOT_FOUND: 'No such route.',
  FARMER_NOT_REGISTERED: 'Farmer ID not in the farmer registry.',
  COOPERATIVE_NOT_FOUND: 'Cooperative ID not recognised.',
  BATCH_NOT_FOUND: 'batch_id not recognised.',
  PAYMENT_NOT_FOUND: 'payment_id not recognised.',
  JOB_NOT_FOUND: 'job_id not recognised.',
  PO_NOT_FOUND: 'Purchase order not recognised.',
  DDS_NOT_FOUND: 'Due diligence statement not recognised.',
  LOAN_NOT_FOUND: 'No active loan for the batch.',
  FARMER_ALREADY_REGISTERED: 'Farmer ID already exists.',
  COOPERATIVE_ALREADY_EXISTS: 'Cooperative ID already exists.',
  DUPLICATE_PAYOUT: 'A payout for this batch and reason already exists.',
  DUPLICATE_REQUEST: 'A request with this Idempotency-Key is still being processed.',
  BATCH_HAS_ACTIVE_LOAN: 'BatchToken already locked as collateral.',
  CHAIN_EVENT_NOT_CONFIRMED:
    "The chain event's transaction is not yet at the required confirmation depth; nothing was applied: send it again after the Retry-After header.",
  PAYLOAD_TOO_LARGE: 'Request body too large.',
  UNSUPPORTED_MEDIA_TYPE: 'Content-Type must be application/json.',
  GFW_CHECK_FAILED: 'Farm failed the deforestation check; manual review required.',
  DDS_TOO_LARGE: "The statement would exceed the EU Information System's limits: 10,000 producers or 25 MB of geolocation.",
  DDS_AMENDMENT_WINDOW_CLOSED:
    'The statement was submitted more than 72 hours ago: the EU Information System no longer allows amending or withdrawing it.',
  DDS_LOCKED: 'The EU Information System reports the statement locked (used for customs clearance): it cannot be amended or withdrawn.',
  DDS_NOT_AVAILABLE:
    'The statement is not AVAILABLE in the EU Information System (still being filed, rejected or withdrawn): it cannot be amended or withdrawn.',
  DUPLICATE_PLOT: 'Two farmers of the statement have identical plot geometries (`details` names both).',
  BATCH_NOT_ELIGIBLE: 'Batch stage too low for the operation.',
  STAGE_OUT_OF_ORDER: 'Stage skipped or moved backward.',
  PO_NOT_CONFIRMED: 'Purchase order exists but is not confirmed.',
  PO_NOT_READY:
    'The purchase order is still binding its batches (CREATING) or its creation failed (RELEASING, FAILED): it cannot be confirmed.',
  INSUFFICIENT_COLLATERAL: 'BatchToken value below the minimum loan of 50 USDC.',
  PHONE_NOT_FOUND: 'No phone number on record for the farmer.',
  COOPERATIVE_NOT_ACTIVE: 'Cooperative licence expired or suspended.',
  PAYOUT_EXCEEDS_BATCH_VALUE:
    'The farmer payouts of the batch would exceed its value, weight_kg × (grade price + export premium) in UGX at the quoted rate (`details.batch_value_ugx`).',
  DAILY_PAYOUT_LIMIT_REACHED:
    "The cooperative's manual payouts of this UTC day would exceed MANUAL_PAYOUT_DAILY_LIMIT_USDC (`details.daily_limit_usdc`).",
  EVIDENCE_UPLOAD_INVALID:
    'Evidence upload missing, of another batch, expired, of another size or image type, or already used (`details.reason`).',
  BUYER_PAYMENT_NOT_FOUND: 'No buyer payment into the vault with this tx_hash and log_index for the purchase order.',
  PO_ALREADY_SETTLED: 'The purchase order is settled already.',
  NO_PAYMENT_RECEIVED: 'No buyer payment counts toward the purchase order yet: nothing to settle.',
  PAYMENT_COUNTED: 'The buyer payment counts toward its purchase order; only unapplied payments are refunded.',
  PAYMENT_ALREADY_REFUNDED: 'The buyer payment was refunded to its payer already.',
  SHORT_PAYMENT_NOT_ACCEPTED: 'Paid below the amount due (or the amount due is not known yet): settle only with accept_short_payment true.',
  RATE_LIMITED: 'Rate limit exceeded; retry after the Retry-After header.',
  INTERNAL_ERROR: 'Unexpected server error; contact support with request_id.',
  PAYOUT_FAILED: 'Payout provider returned an error; payout queued for retry.',
  PROVIDER_UNAVAILABLE: 'Payout provider unreachable after 3 attempts; retry: nothing is paid twice.',
  LEDGER_UNAVAILABLE: 'Ledger network temporarily unavailable.',
  AUDIT_LOG_UNAVAILABLE: 'Audit log temporarily unavailable.',
  DDS_DOCUMENT_STORE_UNAVAILABLE:
    "The private store of due diligence statements' documents is temporarily unavailable; nothing was changed: retry after the Retry-After header.",
  GFW_API_UNAVAILABLE: 'Forest-monitoring service unavailable after 3 attempts; retry after 5 minutes.',
  STALE_PRICE_FEED: 'Price feed older than 1 hour; loan origination paused.',
  MAAIF_API_UNAVAILABLE: 'National farmer registry not responding; registration completes later.',
  DDS_TRACES_PENDING: 'DDS generated; filing with the EU Information System is queued.',
} satisfies Record<string, string>;
