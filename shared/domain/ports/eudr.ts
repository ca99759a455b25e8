/**
 * Ports: Due diligence statements: their store, the EU Information System and its document format, the filing
 * queue (docs/api/eudr.md).
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { DdsDocumentRef, DueDiligenceStatement, StoredDdsRecord } from '../dds';

/** Due diligence statements: one per batch, filed once (docs/api/eudr.md#due-diligence-statements). */
export interface DdsStore {
  /** Stores a new DDS (its documents already kept: `documents`); returns the batch's (or order's) existing DDS id instead when it has one (else null). */
  create(dds: StoredDdsRecord): Promise<string | null>;
  /** The statement as stored: its documents by reference, or inline for a statement made before they moved to object storage. */
  get(id: string): Promise<StoredDdsRecord | null>;
  markSubmitted(id: string, uuid: string, at: string): Promise<void>;
  /** SUBMITTED → AVAILABLE; false when it was not SUBMITTED. */
  markAvailable(id: string, reference: string, verification: string, at: string): Promise<boolean>;
  markRejected(id: string, reason: string, at: string): Promise<boolean>;
  /**
   * AVAILABLE → SUBMITTED with the amended statement (`changes`: the rebuilt statement's fields, its
   * CID and its new `documents`; any inline large parts of an older statement are removed), counting
   * the amendment; false when it was no longer AVAILABLE.
   */
  markAmended(id: string, changes: Partial<StoredDdsRecord>, at: string): Promise<boolean>;
  /**
   * Records an AVAILABLE statement's numbers on a batch it covers (the batch's `dds`) with a
   * DDS_AVAILABLE entry appended to the batch's audit log (anchored like any entry), in one
   * transaction; false (nothing written) when the batch already carries these numbers of this statement.
   */
  recordOnBatch(
    batchId: string,
    dds: { dds_id: string; reference_number: string; verification_number: string },
    at: string,
  ): Promise<boolean>;
  /**
   * Records a WITHDRAWN statement on a batch whose `dds` names it (docs/api/eudr.md#a-withdrawal-reaches-the-batches):
   * the batch's `dds` gets `status: WITHDRAWN` and `withdrawn_at`, and a DDS_WITHDRAWN entry (payload:
   * the statement's id, numbers and `withdrawn_at`) is appended to its audit log (anchored like any
   * entry), in one transaction; false (nothing written) when the batch's `dds` names another
   * statement or none, or already records this withdrawal.
   */
  recordWithdrawalOnBatch(
    batchId: string,
    dds: { dds_id: string; reference_number: string; verification_number: string },
    withdrawnAt: string,
  ): Promise<boolean>;
  /** AVAILABLE → WITHDRAWN; false when it was no longer AVAILABLE. */
  markWithdrawn(id: string, at: string): Promise<boolean>;
  /** Records a later V3 status the registry reports (GROUPED, ARCHIVED, WITHDRAWN…) of a SUBMITTED or AVAILABLE statement; false otherwise. */
  markRegistryStatus(id: string, status: DdsV3Status, at: string): Promise<boolean>;
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
  /**
   * V3 `amendDds`: replaces the statement of the DDS `uuid` with the `statement` of `xmlBody` (a
   * `dds:SubmitDdsRequest` document, as `DdsDocuments.submitRequestXml` gives it); the registry
   * keeps the reference number. Returns the registry's status word after the call (e.g. SUBMITTED).
   * Errors: DomainError DDS_LOCKED (the registry reports it locked, e.g. used for customs clearance),
   * DDS_AMENDMENT_WINDOW_CLOSED (72 hours after submission), DDS_NOT_AVAILABLE (not AVAILABLE there);
   * otherwise as for `submit`.
   */
  amend(uuid: string, xmlBody: string): Promise<{ status: DdsV3Status }>;
  /** V3 `withdrawDds` of the DDS `uuid`; returns the registry's status word (WITHDRAWN). Errors as for `amend`. */
  withdraw(uuid: string): Promise<{ status: DdsV3Status }>;
}

/** The Information System's lifecycle statuses (V3 `eudrCommon:EudrStatusType`). */
export const DDS_V3_STATUSES = [
  'SUBMITTED',
  'AVAILABLE',
  'REJECTED',
  'WITHDRAWN',
  'ARCHIVED',
  'SUSPENDED',
  'UPDATED',
  'GROUPED',
  'OBSOLETE',
] as const;
export type DdsV3Status = (typeof DDS_V3_STATUSES)[number];

/** The EU Information System's document format for a DDS (SubmitDdsRequest XML, V3). */
export interface DdsDocuments {
  /** The `dds:SubmitDdsRequest` XML of a statement (the SOAP body content). */
  submitRequestXml(statement: DueDiligenceStatement): string;
}

/** The due diligence statement of a batch, if it has one (the public trace page, docs/api/trace-page.md#public-trace-page). */
export interface DdsOfBatchReader {
  /** The batch's statement (one per batch), as stored, else null. */
  ofBatch(batchId: string): Promise<StoredDdsRecord | null>;
}

/**
 * The documents of statements (`dds.json`, `dds.xml`) in private object storage
 * (docs/api/eudr.md#where-statements-are-kept): they carry full names and exact plots, and a
 * shipment's can be far larger than a table item. Implementation: `S3DdsDocumentStore`
 * (shared/adapters/aws) in the evidence bucket under `dds/`, which neither GET /ipfs nor the pinner can read.
 */
export interface DdsDocumentStore {
  /**
   * Keeps `text` (UTF-8) as the document `name` of statement `ddsId`, under a key that names its
   * SHA-256 (so a repeat writes the same object, and an amendment a new one); returns the key, the
   * size in bytes and the SHA-256 (hex). Errors: DdsDocumentStoreUnavailableError (503
   * DDS_DOCUMENT_STORE_UNAVAILABLE, retryable) when the store cannot be reached.
   */
  put(ddsId: string, name: 'dds.json' | 'dds.xml', text: string): Promise<DdsDocumentRef>;
  /** The bytes of the document at `key`, else null when there is none. Errors: DdsDocumentStoreUnavailableError as for `put`. */
  get(key: string): Promise<Uint8Array | null>;
  /**
   * A URL at which the document at `key` can be read without a token for `expiresInSeconds` (a
   * presigned GET), answering its exact bytes with its stored content type and, when given,
   * `Content-Disposition: attachment; filename="<downloadName>"`. Made without calling the store.
   */
  url(key: string, expiresInSeconds: number, downloadName?: string): Promise<string>;
}
