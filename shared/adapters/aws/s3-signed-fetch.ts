/**
 * Kept instead of `@aws-sdk/client-s3`, by measurement: the client made every one of the 11
 * functions carrying this file about 190 KB larger and 20 to 50 ms slower to load, and put 8 of
 * them over 600 KB (docs/bundles.md#hand-written-stand-ins-against-the-library-measured, with what
 * the SDK does that this does not: retries, response checksums).
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

/** node:crypto SHA-256 / HMAC-SHA-256 in the shape @smithy/signature-v4 expects (a Checksum). */
export class NodeSha256 {
  private readonly h: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.h =
      secret === undefined
        ? createHash('sha256')
        : createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(secret as ArrayBuffer));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.h.update(
      typeof data === 'string'
        ? data
        : Buffer.from(ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data)),
    );
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
  reset(): void {
    throw new Error('NodeSha256 cannot be reset');
  }
}

/** Where a bucket is reached. */
export interface S3BucketLocation {
  bucket: string;
  /** Signing region. */
  region: string;
  /**
   * An S3-compatible endpoint (`AWS_ENDPOINT_URL_S3`, e.g. the local stack's fauxqs; an IPFS
   * pinning API), addressed path-style (`<endpoint>/<bucket>/<key>`); default the regional AWS
   * endpoint, virtual-hosted.
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

/** The S3 operation of each method, for messages. */
const OPERATION = { GET: 'GetObject', PUT: 'PutObject', HEAD: 'HeadObject' } as const;

/** AWS credentials, or a provider of them (e.g. `fromEnv()`). */
type S3Credentials =
  | { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  | (() => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>);

/** Options of {@link S3SignedFetch}. */
export interface S3SignedFetchOptions extends S3BucketLocation {
  credentials: S3Credentials;
  /** Per-request timeout, ms (default 8000). */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

/**
 * Plain S3 object requests (PutObject, GetObject, HeadObject, presigned GET URLs) over `fetch`, signed with AWS
 * Signature V4 by `@smithy/signature-v4` — the signer inside every AWS SDK client — with the
 * payload's SHA-256 in `x-amz-content-sha256`, instead of the S3 client (see the top of this file). Works against AWS S3 and S3-compatible
 * services (fauxqs locally, IPFS pinning APIs). Errors: Error naming the method, key and cause.
 */
export class S3SignedFetch {
  private readonly signer: SignatureV4;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: S3SignedFetchOptions) {
    this.signer = new SignatureV4({
      service: 's3',
      region: opts.region,
      credentials: opts.credentials,
      sha256: NodeSha256,
      uriEscapePath: false,
      applyChecksum: true,
    });
    this.fetchImpl = opts.fetchImpl ?? fetch;
  }

  /** `<bucket>/<key>` for messages. */
  where(key: string): string {
    return `${this.opts.bucket}/${key}`;
  }

  /**
   * A presigned GET URL of `key` (SigV4 query signature), valid `expiresInSeconds` from
   * `signingDate` (default now): the URL @aws-sdk/s3-request-presigner makes for the same request.
   * `query`: further signed query parameters, e.g. S3's `response-content-disposition`.
   */
  async presignGet(key: string, expiresInSeconds: number, signingDate?: Date, query: Record<string, string> = {}): Promise<string> {
    const url = s3ObjectUrl(this.opts, key);
    const signed = await this.signer.presign(
      // As @aws-sdk/s3-request-presigner prepares it: the payload UNSIGNED-PAYLOAD (S3 query-string auth), the host signed.
      {
        method: 'GET',
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port ? Number(url.port) : undefined,
        path: url.pathname,
        query: { ...query },
        headers: { host: url.host, 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' },
      },
      { expiresIn: expiresInSeconds, unsignableHeaders: new Set(['content-type']), ...(signingDate ? { signingDate } : {}) },
    );
    const out = new URL(url);
    // RFC 3986 encoding, as SigV4 canonicalises the query (URLSearchParams would write a space as `+`).
    out.search = Object.entries(signed.query ?? {})
      .filter((e): e is [string, string] => typeof e[1] === 'string')
      .map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`)
      .join('&');
    return out.toString();
  }

  /** One signed request; `headers` are signed too (e.g. `x-amz-meta-*`, `content-md5`). */
  async send(method: 'GET' | 'PUT' | 'HEAD', key: string, body?: Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
    const url = s3ObjectUrl(this.opts, key);
    const payloadHash = createHash('sha256')
      .update(body ?? new Uint8Array())
      .digest('hex');
    const signed = await this.signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'x-amz-content-sha256': payloadHash, ...headers },
      ...(body ? { body } : {}),
    });
    const sendHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(signed.headers)) if (k.toLowerCase() !== 'host') sendHeaders[k] = v;
    try {
      return await this.fetchImpl(url, {
        method,
        headers: sendHeaders,
        ...(body ? { body } : {}),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 8_000),
      });
    } catch (err) {
      throw new Error(`S3 ${OPERATION[method]} ${this.where(key)} failed: ${(err as Error).message}`, { cause: err });
    }
  }
}

/** `encodeURIComponent` plus the characters RFC 3986 reserves that it leaves alone (`!'()*`). */
function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `<Code>: <Message>` of an S3 XML error body, else the start of the body. */
export function s3ErrorText(text: string): string {
  const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
  return code ? `${code}${message ? `: ${message}` : ''}` : text.slice(0, 200);
}
