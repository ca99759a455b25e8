/**
 * Ports: Due diligence statements: their store, the EU Information System and its document format, the filing
 * queue (docs/api/eudr.md).
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { DdsRecord, DueDiligenceStatement } from '../dds';

/** Due diligence statements: one per batch, filed once (docs/api/eudr.md#due-diligence-statements). */
export interface DdsStore {
  /** Stores a new DDS; returns the batch's existing DDS id instead when it has one (else null). */
  create(dds: DdsRecord): Promise<string | null>;
  get(id: string): Promise<DdsRecord | null>;
  markSubmitted(id: string, uuid: string, at: string): Promise<void>;
  /** SUBMITTED → AVAILABLE; false when it was not SUBMITTED. */
  markAvailable(id: string, reference: string, verification: string, at: string): Promise<boolean>;
  markRejected(id: string, reason: string, at: string): Promise<boolean>;
}

/** DDS filing queue: file this statement with the EU Information System. */
export interface DdsFilingMessage {
  dds_id: string;
}

/** Lifecycle status of a filed DDS, as this service tracks it. */
type DdsRegistryStatus = 'SUBMITTED' | 'AVAILABLE' | 'REJECTED';

/** What the EU Information System reports about one filed DDS. */
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

/**
 * Filing due diligence statements with the EU Information System (docs/api/eudr.md#due-diligence-statements). Filing returns
 * only the DDS identifier (a UUID); reference and verification numbers come later via `status`.
 * Implementation: `SoapDdsRegistry` (shared/adapters/eudr), which also talks to the local sandbox.
 */
export interface DdsRegistry {
  /**
   * Files one `dds:SubmitDdsRequest` document (as `DdsDocuments.submitRequestXml` gives it).
   * Never retried here: the registry creates a new DDS on every accepted call.
   * Errors: DdsRegistryRejectedError (a SOAP Fault), DdsRegistryUnavailableError.
   */
  submit(xmlBody: string, opts: { internalReference: string }): Promise<{ uuid: string }>;
  /** Current status of a filed DDS by its UUID; read-only. Errors as for `submit`. */
  status(uuid: string): Promise<DdsRegistryStatusInfo>;
}

/** The EU Information System's document format for a DDS (SubmitDdsRequest XML, V3). */
export interface DdsDocuments {
  /** The `dds:SubmitDdsRequest` XML of a statement (the SOAP body content). */
  submitRequestXml(statement: DueDiligenceStatement): string;
}

/** The due diligence statement of a batch, if it has one (the public trace page, docs/api/trace-page.md#public-trace-page). */
export interface DdsOfBatchReader {
  /** The batch's statement (one per batch), else null. */
  ofBatch(batchId: string): Promise<DdsRecord | null>;
}
