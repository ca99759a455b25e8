/**
 * The evidence uploads bucket (docs/api/evidence.md#evidence-photos-by-upload-url): clients PUT stage photos here through presigned
 * URLs (POST /batch/{id}/evidence-uploads), and the stage update reads them back
 * (`evidence-uploads/<batch_id>/<upload_id>`). It only ever holds transient uploads: once a
 * photo is attached, its bytes live on in the evidence package (the evidence bucket and IPFS).
 *
 * - SSE-S3 encryption, TLS only (bucket policy), all public access blocked, ACLs disabled.
 * - Lifecycle: every object expires 1 day after it was written, and incomplete multipart uploads
 *   are aborted after 1 day (an upload may be attached within 24 hours: shared/domain/evidence-upload.ts).
 * - CORS: browsers may PUT from any origin (`corsAllowedOrigins`, default `*`): the presigned URL,
 *   bound to one key, type and size for 15 minutes, is the credential, not the origin.
 *
 * Grants (s3:PutObject for presigning, s3:GetObject for reading, both under `evidence-uploads/`)
 * are made per Need in ./needs.ts.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { EVIDENCE_UPLOAD_KEY_PREFIX } from '../../shared/domain/evidence-upload';

/** The key prefix of uploads (shared/domain/evidence-upload.ts). */
export const EVIDENCE_UPLOADS_PREFIX = EVIDENCE_UPLOAD_KEY_PREFIX;

/** Days after which an uploaded object is deleted, attached or not. */
export const EVIDENCE_UPLOAD_EXPIRY_DAYS = 1;

export interface EvidenceUploadsProps {
  /** Origins allowed to PUT from a browser (CORS); default any. */
  corsAllowedOrigins?: string[];
}

/** The bucket evidence photos are uploaded to. */
export class EvidenceUploads extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: EvidenceUploadsProps = {}) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        {
          id: 'ExpireUploads',
          expiration: Duration.days(EVIDENCE_UPLOAD_EXPIRY_DAYS),
          abortIncompleteMultipartUploadAfter: Duration.days(EVIDENCE_UPLOAD_EXPIRY_DAYS),
        },
      ],
      cors: [
        {
          allowedMethods: [HttpMethods.PUT],
          allowedOrigins: props.corsAllowedOrigins ?? ['*'],
          allowedHeaders: ['content-type', 'content-length'],
          exposedHeaders: ['etag'],
          maxAge: 3600,
        },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Transient uploads only: each object is written once through a presigned URL the service issued (and recorded in the table with its batch, caller and time), read once by the stage update, and deleted by the lifecycle after 1 day. Server access logs would need a log bucket of their own (stack resource budget); CloudTrail S3 data events can be enabled by the operator.',
    });
  }
}
