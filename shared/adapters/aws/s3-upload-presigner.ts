import { fromEnv } from '@aws-sdk/credential-provider-env';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import type { EvidenceUploadObjects } from '../../domain/ports/evidence';
import { s3ObjectUrl, type S3BucketLocation } from './s3-signed-fetch';

/**
 * Presigned S3 PUTs of evidence uploads with `@aws-sdk/s3-request-presigner`'s S3RequestPresigner
 * (SigV4 query signing, as `getSignedUrl` does it), given the PutObject request itself rather than
 * an S3 client: the client would add about 160 KB to the bundle and statically imports
 * `@smithy/core/event-streams`, which the Lambda bundles leave out (infra/bundling.ts). The URL
 * signs `content-type` and `content-length` besides `host` (the presigner leaves Content-Type
 * unsigned unless told otherwise), so S3 refuses a PUT of another type or size (403
 * SignatureDoesNotMatch); it carries no checksum (the body is not known when signing).
 * Credentials: the Lambda role's, from the environment (a presigned URL works while they do).
 */
export class S3UploadPresigner implements EvidenceUploadObjects {
  private readonly presigner: S3RequestPresigner;

  constructor(private readonly loc: S3BucketLocation) {
    this.presigner = new S3RequestPresigner({ credentials: fromEnv(), region: loc.region, sha256: Sha256 });
  }

  async presignPut(input: {
    key: string;
    contentType: string;
    sizeBytes: number;
    expiresInSeconds: number;
  }): Promise<{ url: string; headers: Record<string, string> }> {
    const url = s3ObjectUrl(this.loc, input.key);
    const request = new HttpRequest({
      method: 'PUT',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: { 'x-id': 'PutObject' },
      headers: { host: url.host, 'content-type': input.contentType, 'content-length': String(input.sizeBytes) },
    });
    const signed = await this.presigner.presign(request, {
      expiresIn: input.expiresInSeconds,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    const query = Object.entries(signed.query ?? {})
      .flatMap(([k, v]) => (Array.isArray(v) ? v : v === null ? [] : [v]).map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(x)}`))
      .join('&');
    return {
      url: `${url.origin}${url.pathname}?${query}`,
      headers: { 'Content-Type': input.contentType, 'Content-Length': String(input.sizeBytes) },
    };
  }
}
