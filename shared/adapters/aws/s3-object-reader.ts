/**
 * Kept instead of `@aws-sdk/client-s3`, by measurement: update-batch-stage would be 185 KB larger
 * and 25 ms slower to load (docs/bundles.md#hand-written-stand-ins-against-the-library-measured).
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { StoreUnavailableError } from '../../domain/errors';
import type { EvidenceUploadReader } from '../../domain/ports/evidence';
import { S3SignedFetch, type S3BucketLocation } from './s3-signed-fetch';

/**
 * Reads uploaded objects with a plain S3 GetObject ({@link S3SignedFetch}: SigV4-signed, over
 * `fetch`) with the Lambda role's credentials from the environment, instead of the S3 client: the
 * stage-update function then carries no S3 client (see the top of this file). The body is read as a stream and abandoned as soon
 * as it exceeds the allowed size, so a large object costs no more than `maxBytes` + one chunk.
 * Errors: StoreUnavailableError (503, Retry-After) when S3 cannot be reached or answers 5xx (the
 * cause names the object); Error naming the object and the HTTP status for any other refusal (a
 * 403 is a configuration fault); a 404 is null, not an error.
 */
export class S3UploadReader implements EvidenceUploadReader {
  private readonly s3: S3SignedFetch;

  constructor(loc: S3BucketLocation, opts: { timeoutMs?: number; fetchImpl?: typeof fetch } = {}) {
    this.s3 = new S3SignedFetch({ ...loc, credentials: fromEnv(), ...opts });
  }

  async read(key: string, maxBytes: number): Promise<{ sizeBytes: number; bytes?: Uint8Array } | null> {
    let res: Response;
    try {
      res = await this.s3.send('GET', key);
    } catch (err) {
      throw new StoreUnavailableError('The evidence upload store is temporarily unavailable; nothing was changed, retry shortly.', err);
    }
    if (res.status === 404) {
      await res.body?.cancel().catch(() => undefined);
      return null;
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      const failure = new Error(`S3 GetObject ${this.s3.where(key)} answered ${res.status}`);
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
