import { PinRootMismatchError } from '../../domain/evidence-car';
import type { CarPinner } from '../../domain/ports/evidence';
import { S3SignedFetch, s3ErrorText } from '../aws/s3-signed-fetch';

/** Options of {@link S3CarPinner}. */
export interface S3CarPinnerOptions {
  /** The service's S3 endpoint, e.g. `https://s3.filebase.com` (path-style requests). */
  endpoint: string;
  /** The bucket the service pins from (an IPFS bucket). */
  bucket: string;
  /** Signing region the service expects (Filebase: `us-east-1`). */
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Per-request timeout, ms (default 30 000). */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

/**
 * CarPinner over an S3-compatible IPFS pinning API (Filebase-style): `PutObject` of the CAR to
 * `<bucket>/<root>.car`, path-style, with the user metadata `import: car` (the service imports the
 * CAR and pins its root; `name` and `meta` go along as metadata too). The service names the root it
 * pinned in the `x-amz-meta-cid` header of the PutObject answer and as the object's metadata `cid`
 * (HeadObject): read from the answer, else from HeadObject. That root must equal `root`, otherwise
 * PinRootMismatchError naming both. Requests are SigV4-signed S3 calls over fetch
 * (../aws/s3-signed-fetch.ts; the S3 protocol the SDK speaks — the tests drive the local sandbox
 * with @aws-sdk/client-s3 too). Errors: Error with the service's S3 error code and HTTP status.
 */
export class S3CarPinner implements CarPinner {
  private readonly s3: S3SignedFetch;

  constructor(private readonly opts: S3CarPinnerOptions) {
    this.s3 = new S3SignedFetch({
      bucket: opts.bucket,
      region: opts.region,
      endpoint: opts.endpoint,
      timeoutMs: opts.timeoutMs ?? 30_000,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
      ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
    });
  }

  /** Uploads the CAR; resolves once the service's root equals `root`. */
  async pinCar(input: { root: string; car: Uint8Array; name: string; meta?: Record<string, string> }): Promise<void> {
    const key = `${input.root}.car`;
    const metadata: Record<string, string> = { import: 'car', name: input.name.slice(0, 255), ...(input.meta ?? {}) };
    const headers: Record<string, string> = { 'content-type': 'application/vnd.ipld.car' };
    for (const [k, v] of Object.entries(metadata)) headers[`x-amz-meta-${k.toLowerCase()}`] = v;
    const put = await this.s3.send('PUT', key, input.car, headers);
    const text = await put.text();
    if (!put.ok)
      throw new Error(
        `The pinning service at ${this.opts.endpoint} refused PutObject ${this.s3.where(key)}: ${put.status} ${s3ErrorText(text)}`,
      );
    let reported = put.headers.get('x-amz-meta-cid') ?? undefined;
    if (!reported) {
      const head = await this.s3.send('HEAD', key);
      await head.arrayBuffer().catch(() => undefined);
      if (!head.ok)
        throw new Error(`The pinning service at ${this.opts.endpoint} answered HeadObject ${this.s3.where(key)} with ${head.status}`);
      reported = head.headers.get('x-amz-meta-cid') ?? undefined;
    }
    if (!reported)
      throw new Error(
        `The pinning service at ${this.opts.endpoint} stored ${this.s3.where(key)} but named no root CID (x-amz-meta-cid); is the bucket an IPFS bucket?`,
      );
    if (reported !== input.root) throw new PinRootMismatchError(input.root, reported, `The S3 pinning API at ${this.opts.endpoint}`);
  }
}
