import type { DomainError, ErrorCode } from '../domain/errors';

/**
 * How the API answers each domain error code (docs/api/conventions.md#http-and-errors): its HTTP status.
 * The domain names the codes and what they mean (shared/domain/error-catalogue.ts); the status is
 * transport, kept here. Every code has exactly one status (the type requires every code).
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_GRADE: 400,
  WEIGHT_OUT_OF_RANGE: 400,
  /** docs/api/eudr.md#geometry-rules: details `[{path, rule, message}]`. */
  GEOMETRY_RULE_VIOLATED: 400,
  UNAUTHORIZED: 401,
  INVALID_SIGNATURE: 401,
  INSUFFICIENT_PERMISSIONS: 403,
  ROUTE_NOT_FOUND: 404,
  FARMER_NOT_REGISTERED: 404,
  COOPERATIVE_NOT_FOUND: 404,
  BATCH_NOT_FOUND: 404,
  PAYMENT_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  PO_NOT_FOUND: 404,
  DDS_NOT_FOUND: 404,
  LOAN_NOT_FOUND: 404,
  FARMER_ALREADY_REGISTERED: 409,
  COOPERATIVE_ALREADY_EXISTS: 409,
  DUPLICATE_PAYOUT: 409,
  DUPLICATE_REQUEST: 409,
  BATCH_HAS_ACTIVE_LOAN: 409,
  CHAIN_EVENT_NOT_CONFIRMED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  GFW_CHECK_FAILED: 422,
  /** Statements per purchase order (docs/api/eudr.md#statement-per-purchase-order). */
  DDS_TOO_LARGE: 422,
  DUPLICATE_PLOT: 422,
  /** Amending and withdrawing a statement (docs/api/eudr.md#amend-and-withdraw). */
  DDS_AMENDMENT_WINDOW_CLOSED: 422,
  DDS_LOCKED: 422,
  DDS_NOT_AVAILABLE: 422,
  BATCH_NOT_ELIGIBLE: 422,
  STAGE_OUT_OF_ORDER: 422,
  PO_NOT_CONFIRMED: 422,
  PO_NOT_READY: 409,
  INSUFFICIENT_COLLATERAL: 422,
  PHONE_NOT_FOUND: 422,
  COOPERATIVE_NOT_ACTIVE: 422,
  /** A farmer payout that would take its batch's FARMER_PAYOUTs above the batch's value (docs/api/settlement.md#money-controls). */
  PAYOUT_EXCEEDS_BATCH_VALUE: 422,
  /** A manual payout above its cooperative's cap for the UTC day (MANUAL_PAYOUT_DAILY_LIMIT_USDC). */
  DAILY_PAYOUT_LIMIT_REACHED: 422,
  /** docs/api/evidence.md#evidence-photos-by-upload-url: an evidence upload that cannot be attached (details.reason). */
  EVIDENCE_UPLOAD_INVALID: 422,
  /** Purchase orders paid in full (docs/api/settlement.md#settlement): settling and refunding buyer payments. */
  BUYER_PAYMENT_NOT_FOUND: 404,
  PO_ALREADY_SETTLED: 409,
  NO_PAYMENT_RECEIVED: 409,
  PAYMENT_COUNTED: 409,
  PAYMENT_ALREADY_REFUNDED: 409,
  SHORT_PAYMENT_NOT_ACCEPTED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  PAYOUT_FAILED: 500,
  PROVIDER_UNAVAILABLE: 503,
  LEDGER_UNAVAILABLE: 503,
  AUDIT_LOG_UNAVAILABLE: 503,
  /** docs/api/eudr.md#where-statements-are-kept: with `Retry-After`. */
  DDS_DOCUMENT_STORE_UNAVAILABLE: 503,
  GFW_API_UNAVAILABLE: 503,
  STALE_PRICE_FEED: 503,
  MAAIF_API_UNAVAILABLE: 202,
  DDS_TRACES_PENDING: 202,
} as const satisfies Record<ErrorCode, number>;

/**
 * The headers a domain error adds to its response: `Retry-After` (whole seconds, at least 1) when the
 * error says how long until the same request may succeed (`retryAfterSeconds`), else none.
 */
export function errorHeaders(err: DomainError): Record<string, string> {
  if (err.retryAfterSeconds === undefined) return {};
  return { 'Retry-After': String(Math.max(1, Math.ceil(err.retryAfterSeconds))) };
}
