import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EVIDENCE_OBJECT_LOCK_CONTEXT, EvidenceStore } from '../../infra/stack/evidence-store';

/** The evidence bucket (docs/api/evidence.md#evidence-on-ipfs) in a stack of its own: fast, no full synth. */
function synth(context: Record<string, unknown> = {}) {
  const app = new App({ context });
  const stack = new Stack(app, 'T');
  new EvidenceStore(stack, 'Evidence');
  return Template.fromStack(stack);
}

describe('EvidenceStore', () => {
  it('versioned, SSE-S3, no public access, retained, TLS only; no Object Lock by default', () => {
    const t = synth();
    t.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        VersioningConfiguration: { Status: 'Enabled' },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
      },
    });
    const bucket = Object.values(t.findResources('AWS::S3::Bucket'))[0]!;
    expect(bucket.Properties.ObjectLockEnabled).toBeUndefined();
    const policy = JSON.stringify(Object.values(t.findResources('AWS::S3::BucketPolicy'))[0]);
    expect(policy).toContain('aws:SecureTransport');
  });

  it(`-c ${EVIDENCE_OBJECT_LOCK_CONTEXT}=<days> turns on Object Lock in COMPLIANCE mode with that default retention; a bad value fails the synth`, () => {
    synth({ [EVIDENCE_OBJECT_LOCK_CONTEXT]: '3650' }).hasResourceProperties('AWS::S3::Bucket', {
      ObjectLockEnabled: true,
      ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 3650 } } },
    });
    expect(() => synth({ [EVIDENCE_OBJECT_LOCK_CONTEXT]: 'forever' })).toThrow(/whole number of days/);
    expect(
      Object.values(synth({ [EVIDENCE_OBJECT_LOCK_CONTEXT]: '0' }).findResources('AWS::S3::Bucket'))[0]!.Properties.ObjectLockEnabled,
    ).toBeUndefined();
  });
});
