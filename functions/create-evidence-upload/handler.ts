import { evidenceUploadDeps } from '../../shared/composition/batches';
import { idempotencyStore } from '../../shared/composition/platform';
import { evidenceUploadView } from '../../shared/http/evidence-upload-schemas';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { createEvidenceUploadRoute } from '../../shared/http/routes/batches';
import { withIdempotency } from '../../shared/http/idempotency';
import { assertMayUploadEvidence, createEvidenceUpload } from '../../shared/use-cases/evidence-uploads';

/**
 * POST /batch/{batch_id}/evidence-uploads `{content_type, size_bytes}` (docs/api/evidence.md#evidence-photos-by-upload-url): 201
 * `{upload_id, batch_id, content_type, size_bytes, url, method: "PUT", headers, expires_at,
 * attach_by}` — a presigned S3 PUT bound to the type and exact size, valid 15 minutes; the client
 * PUTs the photo there and names `upload_id` as `evidence_upload_id` in PATCH /batch/{id}/stage.
 * Roles as the stage update, any stage duty. `Idempotency-Key` supported (a replay answers the
 * same upload; its URL may have expired by then).
 */
export const handler = httpHandler(
  routeOptions(createEvidenceUploadRoute, { authorize: (caller) => assertMayUploadEvidence(caller) }),
  async (req) => {
    const batchId = req.params.id ?? '';
    // Keys are scoped to the batch too: the same key and body for another batch is another upload.
    return withIdempotency(idempotencyStore(), `create-evidence-upload#${batchId}`, req, async () => {
      const ticket = await createEvidenceUpload(evidenceUploadDeps(), req.caller, batchId, req.body);
      return { status: 201, body: evidenceUploadView(ticket) };
    });
  },
);
