import { S3UploadReader, type S3BucketLocation } from '../adapters/aws/s3-object-reader';
import { S3UploadPresigner } from '../adapters/aws/s3-upload-presigner';
import { EvidenceUploadRepository } from '../adapters/dynamodb/evidence-upload-repo';
import { envOr, requireEnv } from '../config';
import type { EvidenceUploadStore } from '../domain/ports';
import type { EvidenceUploadDeps, UploadedPhotoDeps } from '../use-cases/evidence-uploads';
import { batchRepo, now } from './repos';

/**
 * Evidence photos by upload URL (decisions §14): the uploads bucket EVIDENCE_UPLOADS_BUCKET in
 * AWS_REGION, reached through AWS_ENDPOINT_URL_S3 when set (the local stack's fauxqs, path-style;
 * the SDK's own variable, so the presigner's S3 client and the lean reader agree), else the
 * regional S3 endpoint. The presigner (S3 client) is wired only by POST /batch/{id}/evidence-uploads;
 * the stage update reads uploads with the lean signed GET (shared/adapters/aws/s3-object-reader.ts).
 */
function uploadsBucket(): S3BucketLocation {
  const endpoint = envOr('AWS_ENDPOINT_URL_S3', '');
  return { bucket: requireEnv('EVIDENCE_UPLOADS_BUCKET'), region: envOr('AWS_REGION', 'us-east-1'), ...(endpoint ? { endpoint } : {}) };
}

let store: EvidenceUploadStore | undefined;
let presigner: S3UploadPresigner | undefined;
let reader: S3UploadReader | undefined;

const uploadStore = (): EvidenceUploadStore => (store ??= new EvidenceUploadRepository());

/** Ports of POST /batch/{id}/evidence-uploads. */
export function evidenceUploadDeps(): EvidenceUploadDeps {
  return { batches: batchRepo(), uploads: uploadStore(), objects: (presigner ??= new S3UploadPresigner(uploadsBucket())), now };
}

/** Ports that turn an upload into photo bytes (PATCH /batch/{id}/stage with evidence_upload_id). */
export function uploadedPhotoDeps(): UploadedPhotoDeps {
  return { uploads: uploadStore(), reader: (reader ??= new S3UploadReader(uploadsBucket())), now };
}
