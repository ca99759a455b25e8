import { createHash } from 'node:crypto';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { contentTypeFor } from '../../domain/evidence-car';
import type { EvidenceArchive } from '../../domain/ports/evidence';
import { S3SignedFetch } from './s3-signed-fetch';

/** Key of the CAR of `root` in the evidence bucket. */
function carKey(root: string): string {
  return `car/${root}.car`;
}

/** Key of file `path` of the directory `root` in the evidence bucket. */
function fileKey(root: string, path: string): string {
  return `files/${root}/${path}`;
}

/** How long a file URL from {@link S3EvidenceArchive.fileUrl} is valid, seconds. */
const FILE_URL_SECONDS = 300;

/** Options of {@link S3EvidenceArchive}. */
export interface S3EvidenceArchiveOptions {
  bucket: string;
  region: string;
  /** An S3-compatible endpoint (path-style, e.g. the local fauxqs); default the regional AWS endpoint (virtual-hosted). */
  endpoint?: string;
  /** Per-request timeout, ms (default 8000). */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

/**
 * The service's own copy of evidence (docs/api/evidence.md#evidence-on-ipfs) in an S3 bucket: the CAR of each root at
 * `car/<cid>.car` (content type application/vnd.ipld.car) and each file of its directory at
 * `files/<cid>/<name>` (content type from the name), handed out by presigned GET URLs valid
 * {@link FILE_URL_SECONDS} s (a photo may be larger than a Lambda answer can carry); PutObject /
 * GetObject signed with the
 * function role's credentials from the environment (./s3-signed-fetch.ts: no S3 client on the
 * stage-update path). PutObject sends Content-MD5, which a bucket with Object Lock requires.
 * Errors: Error naming the operation and the HTTP status.
 */
export class S3EvidenceArchive implements EvidenceArchive {
  private readonly s3: S3SignedFetch;

  constructor(opts: S3EvidenceArchiveOptions) {
    this.s3 = new S3SignedFetch({ ...opts, credentials: fromEnv() });
  }

  /** Stores the CAR and the files, in parallel (idempotent: the keys are the root CID and the names). */
  async putCar(root: string, car: Uint8Array, files: ReadonlyArray<{ path: string; bytes: Uint8Array }> = []): Promise<void> {
    await Promise.all([
      this.put(carKey(root), car, 'application/vnd.ipld.car', root),
      ...files.map((f) => this.put(fileKey(root, f.path), f.bytes, contentTypeFor(f.path), root)),
    ]);
  }

  /** A presigned GET URL of a stored file (exact bytes, its content type). */
  async fileUrl(root: string, path: string): Promise<string> {
    return this.s3.presignGet(fileKey(root, path), FILE_URL_SECONDS);
  }

  private async put(key: string, bytes: Uint8Array, contentType: string, root: string): Promise<void> {
    const res = await this.s3.send('PUT', key, bytes, {
      'content-type': contentType,
      'content-md5': createHash('md5').update(bytes).digest('base64'),
      'x-amz-meta-root-cid': root,
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`S3 PutObject ${this.s3.where(key)} answered ${res.status}`);
  }

  /** The CAR of `root`, null when the bucket has none. */
  async getCar(root: string): Promise<Uint8Array | null> {
    const res = await this.s3.send('GET', carKey(root));
    if (res.status === 404) {
      await res.arrayBuffer().catch(() => undefined);
      return null;
    }
    if (!res.ok) {
      await res.arrayBuffer().catch(() => undefined);
      throw new Error(`S3 GetObject ${this.s3.where(carKey(root))} answered ${res.status}`);
    }
    return new Uint8Array(await res.arrayBuffer());
  }
}
