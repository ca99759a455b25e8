import { DomainError } from './errors';
import { newUlid } from './ids';
import { EVIDENCE_PHOTO_MIMES, type EvidencePhotoMime } from './evidence-photo';
import type { Stage } from './records';

/**
 * Evidence photos by upload URL (docs/api/evidence.md#evidence-photos-by-upload-url): a client asks for an upload, PUTs the photo's
 * bytes straight to object storage with the presigned request it gets, then names the upload in
 * the stage update (`evidence_upload_id`) instead of sending the photo inside the JSON body, which
 * a Lambda's 6 MB payload cannot carry for a large photo.
 */

/** Largest photo accepted by upload URL, in bytes: 10 MiB (the signed Content-Length). */
export const MAX_EVIDENCE_UPLOAD_BYTES = 10 * 1024 * 1024;

/** How long the presigned PUT is valid: 15 minutes. */
export const EVIDENCE_UPLOAD_URL_TTL_SECONDS = 15 * 60;

/**
 * How long after its creation an upload may be attached to a stage change: 24 hours. The uploads
 * bucket's lifecycle deletes objects a day after they were written, so an upload older than this
 * is EXPIRED whether or not its object still exists.
 */
export const EVIDENCE_UPLOAD_ATTACH_SECONDS = 24 * 3600;

/** The image types a photo may be uploaded as (the same as a base64 photo's). */
export const EVIDENCE_UPLOAD_CONTENT_TYPES: readonly EvidencePhotoMime[] = EVIDENCE_PHOTO_MIMES;

/** Upload ids: `UPL-` and a ULID (26 Crockford base32 characters: time-ordered, 80 random bits). */
export const EVIDENCE_UPLOAD_ID_PATTERN = /^UPL-[0-9A-HJKMNP-TV-Z]{26}$/;

/** A new upload id, `UPL-<ULID>`. */
export function newEvidenceUploadId(): string {
  return `UPL-${newUlid()}`;
}

/** The key prefix of every upload in the uploads bucket (the IAM grants are scoped to it). */
export const EVIDENCE_UPLOAD_KEY_PREFIX = 'evidence-uploads/';

/** The object key of an upload in the uploads bucket: `evidence-uploads/<batch_id>/<upload_id>`. */
export function evidenceUploadObjectKey(batchId: string, uploadId: string): string {
  return `${EVIDENCE_UPLOAD_KEY_PREFIX}${batchId}/${uploadId}`;
}

/** An upload record (kept in the table until attached or expired). */
export interface EvidenceUpload {
  upload_id: string;
  batch_id: string;
  cooperative_id: string;
  content_type: EvidencePhotoMime;
  /** The exact size the PUT must have (signed Content-Length), in bytes. */
  size_bytes: number;
  object_key: string;
  /** Token subject that asked for the upload. */
  created_by: string;
  created_at: string;
  /** When the presigned PUT stops working (created_at + 15 minutes). */
  url_expires_at: string;
  /** Until when the upload may be attached to a stage change (created_at + 24 hours). */
  attach_by: string;
  /** The stage change it was attached to (set once: an upload serves one stage of its batch). */
  consumed_stage?: Stage;
  consumed_at?: string;
}

/**
 * Why an upload cannot be attached, in `error.details.reason` of EVIDENCE_UPLOAD_INVALID:
 * - MISSING: no upload with that id, or nothing was PUT to its URL (or the object is gone);
 * - OTHER_BATCH: the upload was made for another batch;
 * - EXPIRED: older than 24 hours;
 * - SIZE_MISMATCH: the stored object is not the declared size;
 * - TYPE_MISMATCH: the bytes are not an image of the declared type;
 * - ALREADY_USED: attached to another stage change already.
 */
export type EvidenceUploadProblem = 'MISSING' | 'OTHER_BATCH' | 'EXPIRED' | 'SIZE_MISMATCH' | 'TYPE_MISMATCH' | 'ALREADY_USED';

/** 422 EVIDENCE_UPLOAD_INVALID naming the reason; details `{upload_id, reason, ...extra}`. */
export function evidenceUploadInvalid(
  uploadId: string,
  reason: EvidenceUploadProblem,
  message: string,
  extra: Record<string, unknown> = {},
): DomainError {
  return new DomainError('EVIDENCE_UPLOAD_INVALID', `evidence_upload_id ${uploadId}: ${message}`, {
    details: { upload_id: uploadId, reason, ...extra },
  });
}
