import { createHash } from 'node:crypto';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { EvidenceArchive } from '../../domain/ports';
import { S3SignedFetch } from './s3-signed-fetch';

/** Key of the CAR of `root` in the evidence bucket. */
export function carKey(root: string): string {
  return `car/${root}.car`;
}

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
 * The service's own copy of evidence (decisions §14) in an S3 bucket: the CAR of each root at
 * `car/<cid>.car` (content type application/vnd.ipld.car), PutObject / GetObject signed with the
 * function role's credentials from the environment (./s3-signed-fetch.ts: no S3 client on the
 * stage-update path). PutObject sends Content-MD5, which a bucket with Object Lock requires.
 * Errors: Error naming the operation and the HTTP status.
 */
export class S3EvidenceArchive implements EvidenceArchive {
  private readonly s3: S3SignedFetch;

  constructor(opts: S3EvidenceArchiveOptions) {
    this.s3 = new S3SignedFetch({ ...opts, credentials: fromEnv() });
  }

  /** Stores the CAR (idempotent: the key is the root CID). */
  async putCar(root: string, car: Uint8Array): Promise<void> {
    const res = await this.s3.send('PUT', carKey(root), car, {
      'content-type': 'application/vnd.ipld.car',
      'content-md5': createHash('md5').update(car).digest('base64'),
      'x-amz-meta-root-cid': root,
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`S3 PutObject ${this.s3.where(carKey(root))} answered ${res.status}`);
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
