/**
 * Domain errors. Each carries a machine-readable `code` (what each code means: ./error-catalogue.ts), a
 * message, optional `details`, and — when the condition is expected to pass with time —
 * `retryAfterSeconds`. How the API answers a code (HTTP status, the `Retry-After` header, the error
 * envelope) is transport: shared/http/error-status.ts and shared/http/envelope.ts.
 */

import type { ERROR_MEANINGS } from './error-catalogue';
import type { FailureReason } from './payout-failures';

/** Every error code the service emits (docs/api/conventions.md#http-and-errors): the keys of the catalogue. */
export type ErrorCode = keyof typeof ERROR_MEANINGS;

/**
 * Codes of a dependency that is temporarily unavailable (the payout provider, the ledger, the table,
 * the statements' document store, the forest-monitoring service, a fresh price): the same request may succeed later, so a worker
 * retries instead of parking the work. The API answers them 503 (shared/http/error-status.ts).
 */
const UNAVAILABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'PROVIDER_UNAVAILABLE',
  'LEDGER_UNAVAILABLE',
  'AUDIT_LOG_UNAVAILABLE',
  'DDS_DOCUMENT_STORE_UNAVAILABLE',
  'GFW_API_UNAVAILABLE',
  'STALE_PRICE_FEED',
]);

/** True for a code of a temporarily unavailable dependency (see UNAVAILABLE_CODES). */
export function isUnavailableCode(code: ErrorCode): boolean {
  return UNAVAILABLE_CODES.has(code);
}

/** A validation problem at a JSON path (docs/api/conventions.md#http-and-errors `error.details`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * Base class: an error the API reports with its code and optional details. `retryAfterSeconds` is a
 * fact of the domain, not of HTTP: how long until asking again may succeed (the table's recovery
 * wait, the forest service's back-off window, the blocks a chain event still needs). Whoever reports
 * the error uses it; the API sends it as `Retry-After`.
 */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  /** Seconds after which the same request may succeed; unset when waiting does not help. */
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, message: string, opts: { details?: unknown; retryAfterSeconds?: number } = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.details = opts.details;
    if (opts.retryAfterSeconds !== undefined) this.retryAfterSeconds = opts.retryAfterSeconds;
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

/** Seconds to wait before asking again when the table behind the audit log is unavailable. */
const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * The DynamoDB table (audit log, batches, payouts) is unavailable or throttling after the SDK's
 * own retries: AUDIT_LOG_UNAVAILABLE, retry after 5 seconds (503 with `Retry-After: 5` on the API). Writes are single items or
 * transactions, so nothing is half-written (a timed-out write may have been applied whole);
 * `cause` is the SDK error.
 */
export class StoreUnavailableError extends DomainError {
  constructor(message = 'The audit log is temporarily unavailable; retry shortly.', cause?: unknown) {
    super('AUDIT_LOG_UNAVAILABLE', message, { retryAfterSeconds: STORE_RETRY_AFTER_SECONDS });
    this.name = 'StoreUnavailableError';
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/**
 * The private object storage of due diligence statements' documents (`dds.json`, `dds.xml`;
 * docs/api/eudr.md#where-statements-are-kept) cannot be reached or answers a server error:
 * DDS_DOCUMENT_STORE_UNAVAILABLE, retry after 5 seconds (503 with `Retry-After: 5` on the API).
 * Nothing was changed: documents are kept before the record that names them is stored. `cause` is
 * the transport's error.
 */
export class DdsDocumentStoreUnavailableError extends DomainError {
  constructor(
    message = "The due diligence statements' document store is temporarily unavailable; nothing was changed, retry shortly.",
    cause?: unknown,
  ) {
    super('DDS_DOCUMENT_STORE_UNAVAILABLE', message, { retryAfterSeconds: STORE_RETRY_AFTER_SECONDS });
    this.name = 'DdsDocumentStoreUnavailableError';
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/** The payout provider answered that it will not accept the order (a business rejection). */
export class ProviderRejectedError extends Error {
  /** The provider's own words, `CODE: message`. */
  readonly reason: string;
  /** The normalised reason the adapter mapped the provider's code to (docs/api/payouts.md#failure-reasons). */
  readonly failure: FailureReason;
  constructor(reason: string, failure: FailureReason = 'PROVIDER_ERROR') {
    super(`The payout provider rejected the order: ${reason}`);
    this.name = 'ProviderRejectedError';
    this.reason = reason;
    this.failure = failure;
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
