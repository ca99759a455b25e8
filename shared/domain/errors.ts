/**
 * Domain errors. Each carries the specification's machine-readable `code` and HTTP `status`
 * (docs/api/conventions.md#http-and-errors); the HTTP layer turns them into the error envelope.
 */

/**
 * Every error code the service emits, with its HTTP status (docs/api/conventions.md#http-and-errors). What each
 * code means for an integrator is in ./error-catalogue.ts (the API reference reads it; handlers
 * need only the status).
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_GRADE: 400,
  WEIGHT_OUT_OF_RANGE: 400,
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
  BATCH_NOT_ELIGIBLE: 422,
  STAGE_OUT_OF_ORDER: 422,
  PO_NOT_CONFIRMED: 422,
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
  GFW_API_UNAVAILABLE: 503,
  STALE_PRICE_FEED: 503,
  MAAIF_API_UNAVAILABLE: 202,
  DDS_TRACES_PENDING: 202,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A validation problem at a JSON path (docs/api/conventions.md#http-and-errors `error.details`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** Base class: an error the API reports with its code, status and optional details. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { details?: unknown; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

/** The ledger RPC could not be reached or refused the transaction. */
export class LedgerUnavailableError extends DomainError {
  constructor(message = 'The ledger network is temporarily unavailable.', cause?: unknown) {
    super('LEDGER_UNAVAILABLE', message);
    this.name = 'LedgerUnavailableError';
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/**
 * The chain refused a ledger write deterministically: its simulation or gas estimation reverted
 * (a custom error decoded with the contracts' ABI, a `require` reason, or a bare revert). Sending
 * it again would revert again, so the single ledger writer settles the write as refused with
 * `reason` exactly like a mined revert instead of retrying it. Outside the writer it answers like
 * LedgerUnavailableError (503 LEDGER_UNAVAILABLE), as a refused read or send always did.
 */
export class LedgerRefusedError extends LedgerUnavailableError {
  /** The decoded error name (`AlreadyAnchored`, `AccessControlUnauthorizedAccount`, …), a reason string, or "reverted". */
  readonly reason: string;
  /** The contract function refused (`mint`, `recordStage`, `anchor`, `depositFor`, …). */
  readonly operation: string;
  constructor(operation: string, reason: string, cause?: unknown) {
    super(`The ledger refused ${operation}: ${reason}`, cause);
    this.name = 'LedgerRefusedError';
    this.reason = reason;
    this.operation = operation;
  }
}

/**
 * The ledger's RPC endpoint could not be reached: network error, timeout, HTTP 5xx or 429. Nothing
 * is wrong with the write itself, so the writer retries it without counting the attempt towards
 * parking (an outage would otherwise park every write in turn).
 */
export class LedgerTransportError extends LedgerUnavailableError {
  constructor(message: string, cause?: unknown) {
    super(message, cause);
    this.name = 'LedgerTransportError';
  }
}

/** The payout provider could not be reached after the configured attempts. */
export class ProviderUnavailableError extends DomainError {
  constructor(
    message = 'The payout provider is unreachable after 3 attempts; nothing was created, so the request can be retried.',
    cause?: unknown,
    details?: Record<string, unknown>,
  ) {
    super('PROVIDER_UNAVAILABLE', message, details ? { details } : {});
    this.name = 'ProviderUnavailableError';
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/** Seconds a client is asked to wait (`Retry-After`) when the table behind the audit log is unavailable. */
const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * The DynamoDB table (audit log, batches, payouts) is unavailable or throttling after the SDK's
 * own retries: 503 AUDIT_LOG_UNAVAILABLE with `Retry-After: 5`. Writes are single items or
 * transactions, so nothing is half-written (a timed-out write may have been applied whole);
 * `cause` is the SDK error.
 */
export class StoreUnavailableError extends DomainError {
  constructor(message = 'The audit log is temporarily unavailable; retry shortly.', cause?: unknown) {
    super('AUDIT_LOG_UNAVAILABLE', message, { headers: { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) } });
    this.name = 'StoreUnavailableError';
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/** The payout provider answered that it will not accept the order (a business rejection). */
export class ProviderRejectedError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(`The payout provider rejected the order: ${reason}`);
    this.name = 'ProviderRejectedError';
    this.reason = reason;
  }
}

// ------------------------------------------------------------------ errors the use cases react to
// Thrown by adapters through the ports (shared/domain/ports/), caught by use cases with instanceof.

/** The batch's stage moved under a stage change (a concurrent change); the caller re-reads and reports the sequence rule. */
export class StageConflictError extends Error {
  constructor(readonly current: string | null) {
    super(`stage is now ${current}`);
    this.name = 'StageConflictError';
  }
}

/** A concurrent payout creation took the batch's next payout sequence number; retry. */
export class PayoutSequenceConflict extends Error {
  constructor() {
    super('payout sequence conflict');
    this.name = 'PayoutSequenceConflict';
  }
}

/** The payout's current status does not allow the event (it was applied already, or is final). */
export class PayoutTransitionRejected extends Error {
  constructor(payoutId: string, event: string) {
    super(`payout ${payoutId}: ${event} does not apply to its current status`);
    this.name = 'PayoutTransitionRejected';
  }
}

/** Minting was refused because the token id exists already (`ERC721InvalidSender(address(0))`). */
export class TokenAlreadyMintedError extends Error {
  readonly tokenId: bigint;
  constructor(tokenId: bigint, cause?: unknown) {
    super(`BatchToken ${tokenId} is already minted`);
    this.name = 'TokenAlreadyMintedError';
    this.tokenId = tokenId;
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/** The national farmer registry did not answer (network error, timeout, HTTP 5xx or 429) after all attempts. */
export class NationalRegistryUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NationalRegistryUnavailableError';
  }
}

/** The EU Information System could not be reached: network error, timeout, HTTP 5xx, or an unusable answer. Retry later. */
export class DdsRegistryUnavailableError extends Error {
  /** HTTP status when a response arrived. */
  readonly httpStatus?: number;
  constructor(message: string, opts: { httpStatus?: number; cause?: unknown } = {}) {
    super(`EU Information System unavailable: ${message}`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DdsRegistryUnavailableError';
    if (opts.httpStatus !== undefined) this.httpStatus = opts.httpStatus;
  }
}

/** One `error:Error` entry of a DDS registry fault's detail (`xsd5-error-v01.xsd`). */
export interface DdsRegistryFaultError {
  id: string;
  message: string;
  field?: string;
}

/**
 * The EU Information System refused the request: a SOAP Fault from authentication, schema
 * validation or business rules (or a non-SOAP 4xx). Retrying the same request will not help.
 * `message` carries the fault's message and the detail's errors.
 */
export class DdsRegistryRejectedError extends Error {
  /** The fault's `faultcode` as sent, e.g. `S:Client`, `wsse:FailedAuthentication`, or `HTTP_403`. */
  readonly faultCode: string;
  /** The fault's `faultstring`. */
  readonly faultString: string;
  /** Local name of the detail's exception element, e.g. `BusinessRulesValidationException`. */
  readonly exception?: string;
  readonly errors: DdsRegistryFaultError[];
  readonly httpStatus?: number;
  constructor(fault: {
    faultCode: string;
    faultString: string;
    exception?: string;
    errors?: DdsRegistryFaultError[];
    httpStatus?: number;
  }) {
    const errors = fault.errors ?? [];
    const details = errors.map((e) => `${e.id}: ${e.message}${e.field ? ` (${e.field})` : ''}`);
    super(
      ['EU Information System rejected the request', [fault.exception, fault.faultString].filter(Boolean).join(': '), ...details].join(
        ' — ',
      ),
    );
    this.name = 'DdsRegistryRejectedError';
    this.faultCode = fault.faultCode;
    this.faultString = fault.faultString;
    if (fault.exception !== undefined) this.exception = fault.exception;
    this.errors = errors;
    if (fault.httpStatus !== undefined) this.httpStatus = fault.httpStatus;
  }
}
