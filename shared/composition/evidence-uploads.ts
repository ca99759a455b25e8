import { S3UploadPresigner } from '../adapters/aws/s3-upload-presigner';
import type { EvidenceUploadDeps } from '../use-cases/evidence-uploads';
import { batchRepo, now } from './repos';
import { evidenceUploadStore, uploadsBucket } from './uploaded-photos';

let presigner: S3UploadPresigner | undefined;

/** Ports of POST /batch/{id}/evidence-uploads: the batch, the upload records and the presigner of the uploads bucket (./uploaded-photos.ts). */
export function evidenceUploadDeps(): EvidenceUploadDeps {
  return { batches: batchRepo(), uploads: evidenceUploadStore(), objects: (presigner ??= new S3UploadPresigner(uploadsBucket())), now };
}
