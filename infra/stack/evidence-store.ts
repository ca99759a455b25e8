/**
 * The service's own copy of evidence (docs/api/evidence.md#evidence-on-ipfs): one S3 bucket holding the CAR of every
 * evidence package and DDS at `car/<cid>.car`, written before the stage change commits and served
 * at GET /ipfs/{cid}. Versioned, encrypted (SSE-S3), TLS only, no public access, retained when the
 * stack is deleted.
 *
 * Object Lock (WORM) in COMPLIANCE mode is the operator's choice, by CDK context at the bucket's
 * creation (S3 cannot add it to an existing bucket through CloudFormation):
 * `-c evidenceObjectLockDays=<days>` (e.g. 3650) — then no one, the root user included, can delete
 * or overwrite an evidence object version before that many days have passed. Off by default
 * (`0`), because compliance-mode retention cannot be shortened or removed once written.
 *
 * GET /ipfs/{cid}/{name} hands photos out by presigned GET URLs of `files/<cid>/<name>` (no binary
 * media types on the API, whose request bodies stay text).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectLockRetention } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/** The context key of the Object Lock retention, in days (0 or absent: no Object Lock). */
export const EVIDENCE_OBJECT_LOCK_CONTEXT = 'evidenceObjectLockDays';

/** The Object Lock retention in days from context; 0 when off. @throws Error on a value that is not a whole number of days (0–36500). */
function readEvidenceObjectLockDays(scope: Construct): number {
  const raw = scope.node.tryGetContext(EVIDENCE_OBJECT_LOCK_CONTEXT) as unknown;
  if (raw === undefined || raw === null || raw === '' || raw === 'off') return 0;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 0 || days > 36_500)
    throw new Error(
      `context ${EVIDENCE_OBJECT_LOCK_CONTEXT} must be a whole number of days (0 = off, at most 36500), not ${JSON.stringify(raw)}`,
    );
  return days;
}

/** The evidence bucket. */
export class EvidenceStore extends Construct {
  readonly bucket: Bucket;
  /** Object Lock retention in days (COMPLIANCE), 0 when off. */
  readonly objectLockDays: number;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.objectLockDays = readEvidenceObjectLockDays(this);
    this.bucket = new Bucket(this, 'Bucket', {
      versioned: true,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      removalPolicy: RemovalPolicy.RETAIN,
      ...(this.objectLockDays > 0
        ? { objectLockEnabled: true, objectLockDefaultRetention: ObjectLockRetention.compliance(Duration.days(this.objectLockDays)) }
        : {}),
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "Only the service's functions read and write this bucket (IAM grants per function); objects are content-addressed CARs, versioned and optionally under Object Lock, so server access logs (a second bucket) would add nothing the CloudTrail trail of the account does not.",
    });
  }
}
