import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { SignatureV4 } from '@smithy/signature-v4';
import type { EvidenceArchive } from '../../domain/ports';

/** Key of the CAR of `root` in the evidence bucket. */
export function carKey(root: string): string {
  return `car/${root}.car`;
}

/** node:crypto SHA-256 / HMAC-SHA-256 in the shape @smithy/signature-v4 expects (a Checksum). */
class NodeSha256 {
  private readonly h: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(secret as ArrayBuffer));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.h.update(typeof data === 'string' ? data : Buffer.from(ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data)));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
  reset(): void {
    throw new Error('NodeSha256 cannot be reset');
  }
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
 * `car/<cid>.car` (content type application/vnd.ipld.car). Plain S3 PutObject / GetObject over
 * HTTPS, signed with SigV4 by `@smithy/signature-v4` (the signer inside every AWS SDK client)
 * with the Lambda role's credentials from the environment: the stage-update path then carries no
 * S3 client (about 160 KB of bundle). PutObject sends Content-MD5, which a bucket with Object
 * Lock requires. Errors: Error naming the operation and the HTTP status.
 */
export class S3EvidenceArchive implements EvidenceArchive {
  private readonly signer: SignatureV4;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: S3EvidenceArchiveOptions) {
    this.signer = new SignatureV4({ service: 's3', region: opts.region, credentials: fromEnv(), sha256: NodeSha256, uriEscapePath: false, applyChecksum: true });
    this.fetchImpl = opts.fetchImpl ?? fetch;
  }

  /** Stores the CAR (idempotent: the key is the root CID). */
  async putCar(root: string, car: Uint8Array): Promise<void> {
    const res = await this.send('PUT', carKey(root), car, {
      'content-type': 'application/vnd.ipld.car',
      'content-md5': createHash('md5').update(car).digest('base64'),
      'x-amz-meta-root-cid': root,
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`S3 PutObject ${this.opts.bucket}/${carKey(root)} answered ${res.status}`);
  }

  /** The CAR of `root`, null when the bucket has none. */
  async getCar(root: string): Promise<Uint8Array | null> {
    const res = await this.send('GET', carKey(root));
    if (res.status === 404) {
      await res.arrayBuffer().catch(() => undefined);
      return null;
    }
    if (!res.ok) {
      await res.arrayBuffer().catch(() => undefined);
      throw new Error(`S3 GetObject ${this.opts.bucket}/${carKey(root)} answered ${res.status}`);
    }
    return new Uint8Array(await res.arrayBuffer());
  }

  private async send(method: 'GET' | 'PUT', key: string, body?: Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
    const url = this.opts.endpoint
      ? new URL(`${this.opts.endpoint.replace(/\/+$/, '')}/${this.opts.bucket}/${key}`)
      : new URL(`https://${this.opts.bucket}.s3.${this.opts.region}.amazonaws.com/${key}`);
    const payloadHash = createHash('sha256').update(body ?? new Uint8Array()).digest('hex');
    const signed = await this.signer.sign({
      method, protocol: url.protocol, hostname: url.hostname, port: url.port ? Number(url.port) : undefined, path: url.pathname, query: {},
      headers: { host: url.host, 'x-amz-content-sha256': payloadHash, ...headers },
      ...(body ? { body } : {}),
    });
    const sendHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(signed.headers)) if (k.toLowerCase() !== 'host') sendHeaders[k] = v;
    try {
      return await this.fetchImpl(url, { method, headers: sendHeaders, ...(body ? { body } : {}), signal: AbortSignal.timeout(this.opts.timeoutMs ?? 8_000) });
    } catch (err) {
      throw new Error(`S3 ${method} ${this.opts.bucket}/${key} failed: ${(err as Error).message}`, { cause: err });
    }
  }
}
