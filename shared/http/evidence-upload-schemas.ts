import * as v from 'valibot';
import { EVIDENCE_UPLOAD_CONTENT_TYPES, EVIDENCE_UPLOAD_ID_PATTERN, MAX_EVIDENCE_UPLOAD_BYTES } from '../domain/evidence-upload';
import type { EvidenceUploadTicket } from '../use-cases/evidence-uploads';
import type { EvidenceUploadViewSchema, View } from './view-schemas';

/**
 * Evidence photos by upload URL (docs/api/evidence.md#evidence-photos-by-upload-url): the request of POST /batch/{id}/evidence-uploads,
 * the upload id format the stage update accepts, and the answer's shape.
 */

/** `UPL-<ULID>`. */
export const EvidenceUploadIdSchema = v.pipe(
  v.string(),
  v.regex(EVIDENCE_UPLOAD_ID_PATTERN, 'must be an upload id UPL-<ULID> from POST /batch/{id}/evidence-uploads'),
);

/** POST /batch/{id}/evidence-uploads `{content_type, size_bytes}`. */
export const CreateEvidenceUploadSchema = v.strictObject({
  content_type: v.picklist(EVIDENCE_UPLOAD_CONTENT_TYPES, 'must be one of image/jpeg, image/png, image/webp'),
  /** The photo's exact size in bytes, 1 … 10 MiB. */
  size_bytes: v.pipe(
    v.number(),
    v.integer('must be a whole number of bytes'),
    v.minValue(1, 'must be at least 1 byte'),
    v.maxValue(MAX_EVIDENCE_UPLOAD_BYTES, `must be at most ${MAX_EVIDENCE_UPLOAD_BYTES} bytes (10 MiB)`),
  ),
});

/** 201 of POST /batch/{id}/evidence-uploads. */
export function evidenceUploadView(t: EvidenceUploadTicket): View<typeof EvidenceUploadViewSchema> {
  return {
    upload_id: t.upload.upload_id,
    batch_id: t.upload.batch_id,
    content_type: t.upload.content_type,
    size_bytes: t.upload.size_bytes,
    url: t.url,
    method: t.method,
    headers: t.headers,
    expires_at: t.upload.url_expires_at,
    attach_by: t.upload.attach_by,
  };
}
