import { S3UploadReader, type S3BucketLocation } from '../adapters/aws/s3-object-reader';
import { EvidenceUploadRepository } from '../adapters/dynamodb/evidence-upload-repo';
import { envOr, requireEnv } from '../config';
import type { EvidenceUploadStore } from '../domain/ports/evidence';
import type { UploadedPhotoDeps } from '../use-cases/evidence-uploads';
import { now } from './repos';

/**
 * Evidence photos by upload URL (docs/api/evidence.md#evidence-photos-by-upload-url): the uploads bucket EVIDENCE_UPLOADS_BUCKET in
 * AWS_REGION, reached through AWS_ENDPOINT_URL_S3 when set (the local stack's fauxqs, path-style;
 * the SDK's own variable, so every S3 path of the service agrees), else the regional S3 endpoint.
 * This file wires the stage update's side (the upload records and the signed GET that reads an
 * upload); ./evidence-uploads.ts adds the presigner for POST /batch/{id}/evidence-uploads.
 */
export function uploadsBucket(): S3BucketLocation {
  const endpoint = envOr('AWS_ENDPOINT_URL_S3', '');
  return { bucket: requireEnv('EVIDENCE_UPLOADS_BUCKET'), region: envOr('AWS_REGION', 'us-east-1'), ...(endpoint ? { endpoint } : {}) };
}

let store: EvidenceUploadStore | undefined;
let reader: S3UploadReader | undefined;

/** The upload records (the single table). */
export const evidenceUploadStore = (): EvidenceUploadStore => (store ??= new EvidenceUploadRepository());

/** Ports that turn an upload into photo bytes (PATCH /batch/{id}/stage with evidence_upload_id). */
export function uploadedPhotoDeps(): UploadedPhotoDeps {
  return { uploads: evidenceUploadStore(), reader: (reader ??= new S3UploadReader(uploadsBucket())), now };
}
