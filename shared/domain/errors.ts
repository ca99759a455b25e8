/**
 * Domain errors. Each carries the specification's machine-readable `code` and HTTP `status`
 * (interface-spec "Errors", decisions §5); the HTTP layer turns them into the error envelope.
 */

/** Every error code the service emits, with its HTTP status (spec table + decisions §5). */
export const ERROR_CODES = {
  VALIDATION_ERROR: { status: 400, title: 'The request body or parameters are invalid.' },
  INVALID_GRADE: { status: 400, title: 'Grade is not one of screen18, screen15, FAQ, PB.' },
  WEIGHT_OUT_OF_RANGE: { status: 400, title: 'weight_kg is below 1 or above 5000.' },
  UNAUTHORIZED: { status: 401, title: 'Missing, malformed, expired or untrusted Bearer token.' },
  INVALID_SIGNATURE: { status: 401, title: 'Webhook signature missing, wrong or stale.' },
  INSUFFICIENT_PERMISSIONS: { status: 403, title: 'The token lacks access to this operation or resource.' },
  ROUTE_NOT_FOUND: { status: 404, title: 'No such route.' },
  FARMER_NOT_REGISTERED: { status: 404, title: 'Farmer ID not in the farmer registry.' },
  COOPERATIVE_NOT_FOUND: { status: 404, title: 'Cooperative ID not recognised.' },
  BATCH_NOT_FOUND: { status: 404, title: 'batch_id not recognised.' },
  PAYMENT_NOT_FOUND: { status: 404, title: 'payment_id not recognised.' },
  JOB_NOT_FOUND: { status: 404, title: 'job_id not recognised.' },
  PO_NOT_FOUND: { status: 404, title: 'Purchase order not recognised.' },
  DDS_NOT_FOUND: { status: 404, title: 'Due diligence statement not recognised.' },
  LOAN_NOT_FOUND: { status: 404, title: 'No active loan for the batch.' },
  FARMER_ALREADY_REGISTERED: { status: 409, title: 'Farmer ID already exists.' },
  COOPERATIVE_ALREADY_EXISTS: { status: 409, title: 'Cooperative ID already exists.' },
  DUPLICATE_PAYOUT: { status: 409, title: 'A payout for this batch and reason already exists.' },
  DUPLICATE_REQUEST: { status: 409, title: 'A request with this Idempotency-Key is still being processed.' },
  BATCH_HAS_ACTIVE_LOAN: { status: 409, title: 'BatchToken already locked as collateral.' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Content-Type must be application/json.' },
  GFW_CHECK_FAILED: { status: 422, title: 'Farm failed the deforestation check; manual review required.' },
  BATCH_NOT_ELIGIBLE: { status: 422, title: 'Batch stage too low for the operation.' },
  STAGE_OUT_OF_ORDER: { status: 422, title: 'Stage skipped or moved backward.' },
  PO_NOT_CONFIRMED: { status: 422, title: 'Purchase order exists but is not confirmed.' },
  INSUFFICIENT_COLLATERAL: { status: 422, title: 'BatchToken value below the minimum loan of 50 USDC.' },
  PHONE_NOT_FOUND: { status: 422, title: 'No phone number on record for the farmer.' },
  COOPERATIVE_NOT_ACTIVE: { status: 422, title: 'Cooperative licence expired or suspended.' },
  RATE_LIMITED: { status: 429, title: 'Rate limit exceeded; retry after the Retry-After header.' },
  INTERNAL_ERROR: { status: 500, title: 'Unexpected server error; contact support with request_id.' },
  PAYOUT_FAILED: { status: 500, title: 'Payout provider returned an error; payout queued for retry.' },
  PROVIDER_UNAVAILABLE: { status: 503, title: 'Payout provider unreachable after 3 attempts; nothing was created, retry.' },
  LEDGER_UNAVAILABLE: { status: 503, title: 'Ledger network temporarily unavailable.' },
  AUDIT_LOG_UNAVAILABLE: { status: 503, title: 'Audit log temporarily unavailable.' },
  GFW_API_UNAVAILABLE: { status: 503, title: 'Forest-monitoring service unavailable after 3 attempts; retry after 5 minutes.' },
  STALE_PRICE_FEED: { status: 503, title: 'Price feed older than 1 hour; loan origination paused.' },
  MAAIF_API_UNAVAILABLE: { status: 202, title: 'National farmer registry not responding; registration completes later.' },
  DDS_TRACES_PENDING: { status: 202, title: 'DDS generated; filing with the EU Information System is queued.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A validation problem at a JSON path (decisions §5 `error.details`). */
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
    this.status = ERROR_CODES[code].status;
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

/** The payout provider could not be reached after the configured attempts. */
export class ProviderUnavailableError extends DomainError {
  constructor(message = 'The payout provider is unreachable after 3 attempts; nothing was created, so the request can be retried.', cause?: unknown) {
    super('PROVIDER_UNAVAILABLE', message);
    this.name = 'ProviderUnavailableError';
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/** Seconds a client is asked to wait (`Retry-After`) when the table behind the audit log is unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 5;

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
// Thrown by adapters through the ports (shared/domain/ports.ts), caught by use cases with instanceof.

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
  constructor(fault: { faultCode: string; faultString: string; exception?: string; errors?: DdsRegistryFaultError[]; httpStatus?: number }) {
    const errors = fault.errors ?? [];
    const details = errors.map((e) => `${e.id}: ${e.message}${e.field ? ` (${e.field})` : ''}`);
    super(['EU Information System rejected the request', [fault.exception, fault.faultString].filter(Boolean).join(': '), ...details].join(' — '));
    this.name = 'DdsRegistryRejectedError';
    this.faultCode = fault.faultCode;
    this.faultString = fault.faultString;
    if (fault.exception !== undefined) this.exception = fault.exception;
    this.errors = errors;
    if (fault.httpStatus !== undefined) this.httpStatus = fault.httpStatus;
  }
}
