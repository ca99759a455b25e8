import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PinRootMismatchError } from '../../domain/evidence-car';
import type { CarPinner } from '../../domain/ports';

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
  /** Per-request timeout, ms (default 20 000). */
  timeoutMs?: number;
}

/**
 * CarPinner over an S3-compatible IPFS pinning API (Filebase-style): `PutObject` of the CAR to
 * `<bucket>/<root>.car` with the user metadata `import: car` (the service imports the CAR and pins
 * its root) through `@aws-sdk/client-s3`, path-style. The service names the root it pinned in the
 * `x-amz-meta-cid` header of the PutObject answer, and as the object's metadata `cid`
 * (HeadObject) — read from the answer, else from HeadObject. That root must equal `root`:
 * otherwise PinRootMismatchError naming both. Checksums only when the operation requires them
 * (`requestChecksumCalculation: WHEN_REQUIRED`): such services do not all take the SDK's default
 * CRC32 trailers. Errors: the SDK's (S3ServiceException with the service's code, network errors).
 */
export class S3CarPinner implements CarPinner {
  private readonly s3: S3Client;

  constructor(private readonly opts: S3CarPinnerOptions) {
    this.s3 = new S3Client({
      endpoint: opts.endpoint,
      region: opts.region,
      forcePathStyle: true,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { requestTimeout: opts.timeoutMs ?? 20_000 },
      maxAttempts: 2,
    });
  }

  /** Uploads the CAR; resolves once the service's root equals `root`. */
  async pinCar(input: { root: string; car: Uint8Array; name: string; meta?: Record<string, string> }): Promise<void> {
    const key = `${input.root}.car`;
    const put = new PutObjectCommand({
      Bucket: this.opts.bucket,
      Key: key,
      Body: input.car,
      ContentType: 'application/vnd.ipld.car',
      Metadata: { import: 'car', name: input.name.slice(0, 255), ...(input.meta ?? {}) },
    });
    let answered: string | undefined;
    put.middlewareStack.add((next) => async (args) => {
      const out = await next(args);
      const headers = (out.response as { headers?: Record<string, string> }).headers ?? {};
      answered = headers['x-amz-meta-cid'];
      return out;
    }, { step: 'deserialize', name: 'readPinnedRootCid' });
    await this.s3.send(put);
    const reported = answered ?? (await this.s3.send(new HeadObjectCommand({ Bucket: this.opts.bucket, Key: key }))).Metadata?.cid;
    if (!reported) throw new Error(`The pinning service at ${this.opts.endpoint} stored ${this.opts.bucket}/${key} but named no root CID (x-amz-meta-cid); is the bucket an IPFS bucket?`);
    if (reported !== input.root) throw new PinRootMismatchError(input.root, reported, `The S3 pinning API at ${this.opts.endpoint}`);
  }
}
