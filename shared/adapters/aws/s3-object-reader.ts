/**
 * Kept instead of `@aws-sdk/client-s3`, by measurement: update-batch-stage would be 185 KB larger
 * and 25 ms slower to load (docs/bundles.md#hand-written-stand-ins-against-the-library-measured).
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { StoreUnavailableError } from '../../domain/errors';
import type { EvidenceUploadReader } from '../../domain/ports/evidence';

/** Where a bucket is reached. */
export interface S3BucketLocation {
  bucket: string;
  region: string;
  /**
   * An S3-compatible endpoint (`AWS_ENDPOINT_URL_S3`, e.g. the local stack's fauxqs), addressed
   * path-style (`<endpoint>/<bucket>/<key>`); default the regional AWS endpoint, virtual-hosted.
   */
  endpoint?: string;
}

/** The URL of `key` in the bucket at `loc` (path-style on a custom endpoint). */
export function s3ObjectUrl(loc: S3BucketLocation, key: string): URL {
  const path = key.split('/').map(encodeURIComponent).join('/');
  return loc.endpoint
    ? new URL(`${loc.endpoint.replace(/\/+$/, '')}/${loc.bucket}/${path}`)
    : new URL(`https://${loc.bucket}.s3.${loc.region}.amazonaws.com/${path}`);
}

/**
 * Reads uploaded objects with a plain S3 GetObject over HTTPS, signed with SigV4 by
 * `@smithy/signature-v4` (the signer inside every AWS SDK client) with the Lambda role's
 * credentials from the environment, instead of the S3 client: the stage-update function then
 * carries no S3 client (see the top of this file). The body is read as a stream and abandoned as soon
 * as it exceeds the allowed size, so a large object costs no more than `maxBytes` + one chunk.
 * Errors: StoreUnavailableError (503, Retry-After) when S3 cannot be reached or answers 5xx (the
 * cause names the object); Error naming the object and the HTTP status for any other refusal (a
 * 403 is a configuration fault); a 404 is null, not an error.
 */
export class S3UploadReader implements EvidenceUploadReader {
  private readonly signer: SignatureV4;

  constructor(
    private readonly loc: S3BucketLocation,
    private readonly opts: { timeoutMs?: number; fetchImpl?: typeof fetch } = {},
  ) {
    this.signer = new SignatureV4({
      service: 's3',
      region: loc.region,
      credentials: fromEnv(),
      sha256: Sha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
  }

  async read(key: string, maxBytes: number): Promise<{ sizeBytes: number; bytes?: Uint8Array } | null> {
    const url = s3ObjectUrl(this.loc, key);
    const signed = await this.signer.sign({
      method: 'GET',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: {},
      // An empty payload's SHA-256: GetObject sends no body.
      headers: { host: url.host, 'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
    });
    const headers = Object.fromEntries(Object.entries(signed.headers).filter(([k]) => k.toLowerCase() !== 'host'));
    let res: Response;
    try {
      res = await (this.opts.fetchImpl ?? fetch)(url, {
        method: 'GET',
        headers,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 8_000),
      });
    } catch (err) {
      throw new StoreUnavailableError(
        'The evidence upload store is temporarily unavailable; nothing was changed, retry shortly.',
        new Error(`S3 GetObject ${this.loc.bucket}/${key} failed: ${(err as Error).message}`, { cause: err }),
      );
    }
    if (res.status === 404) {
      await res.body?.cancel().catch(() => undefined);
      return null;
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      const failure = new Error(`S3 GetObject ${this.loc.bucket}/${key} answered ${res.status}`);
      if (res.status >= 500)
        throw new StoreUnavailableError(
          'The evidence upload store is temporarily unavailable; nothing was changed, retry shortly.',
          failure,
        );
      throw failure;
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body.cancel().catch(() => undefined);
      return { sizeBytes: declared };
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return { sizeBytes: Number.isFinite(declared) ? declared : total };
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(total);
    let offset = 0;
    for (const c of chunks) {
      bytes.set(c, offset);
      offset += c.byteLength;
    }
    return { sizeBytes: total, bytes };
  }
}
