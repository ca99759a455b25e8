import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { EvidenceUploadObjects } from '../../domain/ports';
import type { S3BucketLocation } from './s3-object-reader';

/**
 * Presigned S3 PUTs of evidence uploads (`@aws-sdk/s3-request-presigner`). The URL signs
 * `content-type` and `content-length` besides `host` (the presigner leaves Content-Type unsigned
 * unless told otherwise), so S3 refuses a PUT of another type or size (403
 * SignatureDoesNotMatch). The client does not compute a request checksum for the empty body at
 * signing time (`requestChecksumCalculation: WHEN_REQUIRED`): a checksum of nothing in the URL
 * would make S3 refuse every real upload. A custom endpoint (the local fauxqs) is addressed
 * path-style.
 */
export class S3UploadPresigner implements EvidenceUploadObjects {
  private readonly s3: S3Client;

  constructor(private readonly loc: S3BucketLocation) {
    this.s3 = new S3Client({
      region: loc.region,
      ...(loc.endpoint ? { endpoint: loc.endpoint, forcePathStyle: true } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
  }

  async presignPut(input: { key: string; contentType: string; sizeBytes: number; expiresInSeconds: number }): Promise<{ url: string; headers: Record<string, string> }> {
    const command = new PutObjectCommand({ Bucket: this.loc.bucket, Key: input.key, ContentType: input.contentType, ContentLength: input.sizeBytes });
    const url = await getSignedUrl(this.s3, command, { expiresIn: input.expiresInSeconds, signableHeaders: new Set(['content-type', 'content-length']) });
    return { url, headers: { 'Content-Type': input.contentType, 'Content-Length': String(input.sizeBytes) } };
  }
}
