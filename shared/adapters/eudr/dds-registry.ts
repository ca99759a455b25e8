/**
 * Port for filing due diligence statements with the EU Information System (decisions §9).
 * Filing returns only the DDS identifier (a UUID); the reference and verification numbers are
 * assigned later and read through `status`.
 *
 * Implementations: `SoapDdsRegistry` (./soap-dds-registry.ts, the DDS service V3 over SOAP 1.1 with
 * a WS-Security username token), which also talks to the local sandbox
 * (`infra/local/dds-registry-sandbox.ts`).
 */

/** Lifecycle status of a filed DDS, as this service tracks it. */
export type DdsRegistryStatus = 'SUBMITTED' | 'AVAILABLE' | 'REJECTED';

/** What the registry reports about one filed DDS. */
export interface DdsRegistryStatusInfo {
  /** AVAILABLE always carries both `reference_number` and `verification_number`. */
  status: DdsRegistryStatus;
  /** E.g. `26DEPDGY8NTUH2` (year, member state, 10 characters); at most 14 characters. */
  reference_number?: string;
  /** 5–35 characters (the sandbox gives 8). */
  verification_number?: string;
  /** The registry's reason when REJECTED. */
  rejection_reason?: string;
  /** The registry's own status word (`eudrCommon:EudrStatusType`, e.g. `GROUPED`) when it says more than `status`. */
  registry_status?: string;
}

export interface DdsRegistry {
  /**
   * Files one `dds:SubmitDdsRequest` document (the SOAP body content, as `submitDdsRequestXml`
   * gives it). `internalReference` must equal the document's `internalReferenceNumber`.
   * Never retried here: the real registry creates a new DDS on every accepted call.
   * @returns the UUID the registry assigned
   * @throws DdsRegistryRejectedError when the registry refuses it (SOAP Fault: authentication, schema, business rules)
   * @throws DdsRegistryUnavailableError when it cannot be reached or answers 5xx / not at all usefully
   */
  submit(xmlBody: string, opts: { internalReference: string }): Promise<{ uuid: string }>;
  /**
   * Current status of a filed DDS by its UUID; read-only, so safe to poll and retry.
   * @throws DdsRegistryRejectedError for a fault (e.g. an unknown UUID: `NotFoundException`)
   * @throws DdsRegistryUnavailableError as for `submit`
   */
  status(uuid: string): Promise<DdsRegistryStatusInfo>;
}

/** The registry could not be reached: network error, timeout, HTTP 5xx, or an unusable answer. Retry later. */
export class DdsRegistryUnavailableError extends Error {
  /** HTTP status when a response arrived. */
  readonly httpStatus?: number;
  constructor(message: string, opts: { httpStatus?: number; cause?: unknown } = {}) {
    super(`EU Information System unavailable: ${message}`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DdsRegistryUnavailableError';
    if (opts.httpStatus !== undefined) this.httpStatus = opts.httpStatus;
  }
}

/** One `error:Error` entry of a fault's detail (`xsd5-error-v01.xsd`). */
export interface DdsRegistryFaultError {
  id: string;
  message: string;
  field?: string;
}

/**
 * The registry refused the request: a SOAP Fault from authentication, schema validation or business
 * rules (or a non-SOAP 4xx). Retrying the same request will not help. `message` carries the fault's
 * message and the detail's errors.
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
