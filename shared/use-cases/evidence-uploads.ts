import { assertActsFor, assertDuty } from '../domain/access';
import type { Caller } from '../domain/caller';
import { STAGE_DUTY } from '../domain/custody';
import { DomainError } from '../domain/errors';
import { checkEvidencePhoto, type EvidencePhoto, type EvidencePhotoMime } from '../domain/evidence-photo';
import {
  EVIDENCE_UPLOAD_ATTACH_SECONDS,
  EVIDENCE_UPLOAD_URL_TTL_SECONDS,
  evidenceUploadInvalid,
  evidenceUploadObjectKey,
  newEvidenceUploadId,
  type EvidenceUpload,
} from '../domain/evidence-upload';
import type { BatchStore } from '../domain/ports/batches';
import type { EvidenceUploadObjects, EvidenceUploadReader, EvidenceUploadStore } from '../domain/ports/evidence';
import type { Stage } from '../domain/records';
import { changeStage, type CustodyDeps, type StageChangeResult, type StageUpdateInput } from './custody';

/** The ports of POST /batch/{id}/evidence-uploads. */
export interface EvidenceUploadDeps {
  batches: Pick<BatchStore, 'get'>;
  uploads: Pick<EvidenceUploadStore, 'create'>;
  objects: EvidenceUploadObjects;
  now: () => Date;
  /** Upload ids (default `newEvidenceUploadId`). */
  newId?: () => string;
}

/** What the client gets to PUT its photo: the upload id to name in the stage update, and the request to make. */
export interface EvidenceUploadTicket {
  upload: EvidenceUpload;
  url: string;
  method: 'PUT';
  /** Send exactly these headers with the PUT (Content-Type and Content-Length are signed). */
  headers: Record<string, string>;
}

/**
 * Who may ask for an upload URL (docs/security.md#tokens-and-roles): as PATCH /batch/{id}/stage, with any of the stage
 * duties (QUALITY_OFFICER, MILL_OPERATOR, WAREHOUSE_MANAGER, EXPORTER); ADMIN always.
 * Errors: INSUFFICIENT_PERMISSIONS (403).
 */
export function assertMayUploadEvidence(caller: Caller): void {
  assertDuty(caller, Object.values(STAGE_DUTY));
}

/**
 * POST /batch/{batch_id}/evidence-uploads `{content_type, size_bytes}` (docs/api/evidence.md#evidence-photos-by-upload-url): the batch
 * must exist (BATCH_NOT_FOUND 404) and be the caller's cooperative's (INSUFFICIENT_PERMISSIONS
 * 403); the upload record `UPL-<ULID>` is stored (conditional put) and a presigned PUT of
 * `evidence-uploads/<batch_id>/<upload_id>` is made, bound to `content_type` and exactly
 * `size_bytes` bytes, valid 15 minutes. The upload may be attached within 24 hours.
 * `content_type` (image/jpeg|png|webp) and `size_bytes` (1 … 10 MiB) are validated by the transport.
 */
export async function createEvidenceUpload(
  deps: EvidenceUploadDeps,
  caller: Caller,
  batchId: string,
  input: { content_type: EvidencePhotoMime; size_bytes: number },
): Promise<EvidenceUploadTicket> {
  assertMayUploadEvidence(caller);
  const batch = await deps.batches.get(batchId);
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  assertActsFor(caller, batch.cooperative_id);
  const now = deps.now();
  const uploadId = (deps.newId ?? newEvidenceUploadId)();
  const upload: EvidenceUpload = {
    upload_id: uploadId,
    batch_id: batchId,
    cooperative_id: batch.cooperative_id,
    content_type: input.content_type,
    size_bytes: input.size_bytes,
    object_key: evidenceUploadObjectKey(batchId, uploadId),
    created_by: caller.sub,
    created_at: now.toISOString(),
    url_expires_at: new Date(now.getTime() + EVIDENCE_UPLOAD_URL_TTL_SECONDS * 1000).toISOString(),
    attach_by: new Date(now.getTime() + EVIDENCE_UPLOAD_ATTACH_SECONDS * 1000).toISOString(),
  };
  const signed = await deps.objects.presignPut({
    key: upload.object_key,
    contentType: upload.content_type,
    sizeBytes: upload.size_bytes,
    expiresInSeconds: EVIDENCE_UPLOAD_URL_TTL_SECONDS,
  });
  await deps.uploads.create(upload);
  return { upload, url: signed.url, method: 'PUT', headers: signed.headers };
}

/** The ports of resolving an upload to photo bytes. */
export interface UploadedPhotoDeps {
  uploads: Pick<EvidenceUploadStore, 'get' | 'consume'>;
  reader: EvidenceUploadReader;
  now: () => Date;
}

/**
 * The photo of upload `uploadId` for stage `stage` of batch `batchId`, checked in this order
 * (each failure is 422 EVIDENCE_UPLOAD_INVALID with `details.reason`): the upload exists
 * (MISSING), is of this batch (OTHER_BATCH), is not attached to another stage (ALREADY_USED), is
 * at most 24 hours old (EXPIRED); its object exists (MISSING: never uploaded), has the declared
 * size (SIZE_MISMATCH; read up to that size and no further) and is an image of the declared type
 * (TYPE_MISMATCH, the same check as a base64 photo). Then it is marked attached to `stage` with a
 * conditional update (ALREADY_USED when another stage change took it meanwhile), so one upload
 * never serves two stages; a retry of the same stage update may name it again.
 */
export async function resolveUploadedPhoto(
  deps: UploadedPhotoDeps,
  batchId: string,
  uploadId: string,
  stage: Stage,
): Promise<EvidencePhoto> {
  const upload = await deps.uploads.get(uploadId);
  if (!upload) throw evidenceUploadInvalid(uploadId, 'MISSING', 'no such upload (create one with POST /batch/{id}/evidence-uploads).');
  if (upload.batch_id !== batchId)
    throw evidenceUploadInvalid(uploadId, 'OTHER_BATCH', `the upload was made for another batch, not ${batchId}.`);
  if (upload.consumed_stage && upload.consumed_stage !== stage) {
    throw evidenceUploadInvalid(uploadId, 'ALREADY_USED', `the upload is the evidence of stage ${upload.consumed_stage} already.`);
  }
  const now = deps.now();
  if (now.toISOString() > upload.attach_by)
    throw evidenceUploadInvalid(
      uploadId,
      'EXPIRED',
      `the upload expired at ${upload.attach_by} (uploads may be attached within 24 hours).`,
      { expired_at: upload.attach_by },
    );
  const object = await deps.reader.read(upload.object_key, upload.size_bytes);
  if (!object)
    throw evidenceUploadInvalid(
      uploadId,
      'MISSING',
      `nothing was uploaded: PUT the photo to the upload URL (valid until ${upload.url_expires_at}) first.`,
    );
  if (object.sizeBytes !== upload.size_bytes || !object.bytes || object.bytes.byteLength !== upload.size_bytes) {
    throw evidenceUploadInvalid(
      uploadId,
      'SIZE_MISMATCH',
      `the uploaded object is ${object.sizeBytes} bytes; ${upload.size_bytes} were declared.`,
      { size_bytes: upload.size_bytes, uploaded_bytes: object.sizeBytes },
    );
  }
  const checked = await checkEvidencePhoto(object.bytes, upload.content_type);
  if (!checked.ok)
    throw evidenceUploadInvalid(uploadId, 'TYPE_MISMATCH', checked.problem, {
      content_type: upload.content_type,
      detected: checked.detected ?? null,
    });
  if (!(await deps.uploads.consume(uploadId, stage, now.toISOString()))) {
    throw evidenceUploadInvalid(uploadId, 'ALREADY_USED', 'the upload was attached to another stage change meanwhile.');
  }
  return checked.photo;
}

/** PATCH /batch/{id}/stage input with the photo by upload (docs/api/evidence.md#evidence-photos-by-upload-url). */
export type StageUpdateWithUploadInput = StageUpdateInput & { evidence_upload_id?: string };

/**
 * PATCH /batch/{batch_id}/stage with the photo given either inline (`evidence_photo_base64`) or by
 * upload (`evidence_upload_id`), not both (400 VALIDATION_ERROR). An upload is resolved to its
 * bytes (`resolveUploadedPhoto`) at the point where a base64 photo is decoded, after the duty,
 * cooperative, batch and stage-order checks, so a refused stage change never uses the upload up;
 * the bytes then take the base64 photo's path (changeStage in ./custody.ts).
 */
export async function changeStageWithEvidence(
  deps: CustodyDeps & { uploaded: UploadedPhotoDeps },
  caller: Caller,
  batchId: string,
  input: StageUpdateWithUploadInput,
  opts: { waitMs: number },
): Promise<StageChangeResult> {
  const { evidence_upload_id: uploadId, ...stageInput } = input;
  if (uploadId === undefined) return changeStage(deps, caller, batchId, stageInput, opts);
  if (stageInput.evidence_photo_base64 !== undefined) {
    throw new DomainError('VALIDATION_ERROR', 'Give the photo either as evidence_photo_base64 or as evidence_upload_id, not both.', {
      details: [{ path: 'evidence_upload_id', message: 'not allowed together with evidence_photo_base64' }],
    });
  }
  return changeStage(deps, caller, batchId, stageInput, {
    ...opts,
    photo: () => resolveUploadedPhoto(deps.uploaded, batchId, uploadId, stageInput.new_stage),
  });
}
