/**
 * The evidence uploads bucket construct (docs/api/evidence.md#evidence-photos-by-upload-url; infra/stack/evidence-uploads.ts), alone in
 * a stack: encrypted, TLS only, no public access, uploads expire after a day, browsers may PUT, and
 * cdk-nag's AwsSolutions checks find nothing unacknowledged.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EVIDENCE_UPLOAD_EXPIRY_DAYS, EvidenceUploads } from '../../infra/stack/evidence-uploads';
import { EVIDENCE_UPLOAD_ATTACH_SECONDS } from '../../shared/domain/evidence-upload';

function synth(props?: ConstructorParameters<typeof EvidenceUploads>[2]) {
  const app = new App();
  const stack = new Stack(app, 'UploadsOnly');
  new EvidenceUploads(stack, 'EvidenceUploads', props);
  return { app, template: Template.fromStack(stack) };
}

describe('EvidenceUploads', () => {
  test('one bucket: SSE-S3, all public access blocked, ACLs off, objects and incomplete multipart uploads expire after 1 day, CORS PUT', () => {
    const { template } = synth();
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LifecycleConfiguration: {
        Rules: [{ Status: 'Enabled', ExpirationInDays: 1, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }],
      },
      CorsConfiguration: {
        CorsRules: [{ AllowedMethods: ['PUT'], AllowedOrigins: ['*'], AllowedHeaders: ['content-type', 'content-length'] }],
      },
    });
  });

  test('the lifecycle never deletes an upload that may still be attached (24 hours)', () => {
    expect(EVIDENCE_UPLOAD_EXPIRY_DAYS * 24 * 3600).toBeGreaterThanOrEqual(EVIDENCE_UPLOAD_ATTACH_SECONDS);
  });

  test('the bucket policy denies every request without TLS', () => {
    const { template } = synth();
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  test('CORS origins can be restricted', () => {
    const { template } = synth({ corsAllowedOrigins: ['https://field.example.com'] });
    template.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedOrigins: ['https://field.example.com'] })] },
    });
  });

  test('cdk-nag AwsSolutions: no unacknowledged findings (server access logs acknowledged with the reason)', () => {
    const { app } = synth();
    const report = new AwsSolutionsChecks(app, { verbose: true }).validateScope(app);
    expect(report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});
