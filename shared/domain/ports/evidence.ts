/**
 * Ports: Evidence (docs/api/evidence.md): the archive of evidence packages, pinning to IPFS, and photos uploaded
 * by URL.
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { EvidenceUpload } from '../evidence-upload';
import type { EvidencePinStatus, Stage } from '../records';

/** One entry of a UnixFS directory: `size` is the file's size in bytes (0 for a subdirectory). */
export interface PinStoreEntry {
  name: string;
  cid: string;
  size: number;
}

/**
 * The service's own copy of evidence packages and DDS documents: one CARv1 file per root CID
 * (in AWS an S3 bucket, `car/<cid>.car`). Written before the stage change commits, so nothing a
 * committed CID names is ever lost; `/ipfs/{cid}` is served from it whatever the pin status.
 */
export interface EvidenceArchive {
  /**
   * Stores the CAR of `root` and, when given, each file of its directory by name (so a large file
   * can be handed out by URL). Idempotent: a root CID always names the same bytes. Rejects when the
   * store fails.
   */
  putCar(root: string, car: Uint8Array, files?: ReadonlyArray<{ path: string; bytes: Uint8Array }>): Promise<void>;
  /** The CAR of `root`, or null when it is not archived. */
  getCar(root: string): Promise<Uint8Array | null>;
  /** A short-lived URL (about 5 minutes) that GETs the exact bytes of file `path` of `root` as stored by `putCar`. */
  fileUrl(root: string, path: string): Promise<string>;
}

/** A pinning service that imports a CAR and pins its root (an S3-compatible IPFS pinning API, Kubo / IPFS Cluster `dag/import`). */
export interface CarPinner {
  /**
   * Uploads `car` and has the service pin its root. Resolves once the service answered the root
   * CID and it equals `root`. Errors: PinRootMismatchError when the service reports another root
   * (naming both CIDs); any other Error when the service refuses or cannot be reached.
   */
  pinCar(input: { root: string; car: Uint8Array; name: string; meta?: Record<string, string> }): Promise<void>;
}

/**
 * One pin job of the evidence pin queue: what to pin and where its status is recorded. `DDS` jobs
 * are only those queued before statements became private: the pinner closes them unpinned.
 */
export type EvidencePinMessage =
  | { kind: 'STAGE'; cid: string; batch_id: string; stage: Stage; history_index: number }
  | { kind: 'DDS'; cid: string; batch_id: string; dds_id: string };

/** Where pin statuses are recorded: a batch's stage-history entry, a DDS. */
export interface EvidencePinStatusStore {
  /**
   * Sets `stage_history[historyIndex].evidence_pin_status` of the batch when that entry still names
   * `cid` and is not PINNED already; false when nothing changed.
   */
  setStagePinStatus(batchId: string, historyIndex: number, cid: string, status: EvidencePinStatus, at: string): Promise<boolean>;
  /**
   * Closes the pin job of `msg` (written with the commit that named its CID): it leaves the
   * reconciliation index. Closing a closed or unknown job is a no-op.
   */
  closePinJob(msg: EvidencePinMessage, at: string): Promise<void>;
  /** Open pin jobs queued (or last re-queued) before `before` (ISO), oldest first, at most `limit`, with their re-queue count. */
  stalePinJobs(before: string, limit: number): Promise<Array<{ message: EvidencePinMessage; requeues: number }>>;
  /**
   * Marks an open job re-queued at `at` (it moves to the end of the index, its count + 1), or
   * closes it with `giveUp`; false when the job was closed meanwhile (nothing to do).
   */
  markPinJobRequeued(msg: EvidencePinMessage, at: string, opts?: { giveUp?: boolean }): Promise<boolean>;
}

/** Upload records of evidence photos (the single table). Errors: StoreUnavailableError. */
export interface EvidenceUploadStore {
  /** Stores a new upload (conditional on its id being new). */
  create(upload: EvidenceUpload): Promise<void>;
  get(uploadId: string): Promise<EvidenceUpload | null>;
  /**
   * Marks the upload attached to `stage` of its batch (a conditional update: unattached, or
   * attached to this same stage already, so a retried stage update may use it again). False when
   * it is attached to another stage (nothing changed).
   */
  consume(uploadId: string, stage: Stage, at: string): Promise<boolean>;
}

/** Object storage of uploads (an S3 bucket): presigned PUTs out, bounded reads in. */
export interface EvidenceUploadObjects {
  /**
   * A presigned PUT of `key` valid `expiresInSeconds`, bound to exactly `contentType` and
   * `sizeBytes` (both signed). Returns the URL and the headers the client must send with it.
   */
  presignPut(input: {
    key: string;
    contentType: string;
    sizeBytes: number;
    expiresInSeconds: number;
  }): Promise<{ url: string; headers: Record<string, string> }>;
}

/** Reads uploaded objects back. */
export interface EvidenceUploadReader {
  /**
   * The object at `key`: null when there is none; `{sizeBytes}` without bytes when it is larger
   * than `maxBytes` (nothing more is read); else its bytes.
   */
  read(key: string, maxBytes: number): Promise<{ sizeBytes: number; bytes?: Uint8Array } | null>;
}
