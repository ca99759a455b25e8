import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { GetObjectCommand, HeadObjectCommand, NotFound, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { InvalidCarError } from '../../shared/domain/evidence-car';
import { readVerifiedCar } from '../../shared/domain/evidence-car-reader';
import { listenOnLoopback } from './loopback';
import { NodeSha256 } from '../../shared/adapters/aws/s3-signed-fetch';

/** Options of {@link startIpfsPinningSandbox}. */
export interface IpfsPinningSandboxOptions {
  /** The one bucket this pinning API serves (path-style `/<bucket>/<key>`). */
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where CARs are stored: an S3 endpoint (fauxqs) and a bucket there that exists. */
  storage: { endpoint: string; bucket: string; region?: string };
  /** Largest accepted CAR, bytes (default 16 MiB). */
  maxBytes?: number;
  log?: (line: string) => void;
}

/**
 * Test control of a running sandbox (local only, no signature): `POST /__sandbox/faults` with
 * `{delay_ms?, report_root?, fail_puts?}` sets {@link IpfsPinningSandbox.faults} for a stack in
 * another process (the integration tests).
 */
export const FAULTS_PATH = '/__sandbox/faults';

/** A running sandbox. `faults`: `reportRoot` answers another root CID (the mismatch check), `failPuts` refuses that many PUTs (503), `delayMs` slows each PUT (a slow pinning service). */
export interface IpfsPinningSandbox {
  url: string;
  faults: { reportRoot?: string; failPuts?: number; delayMs?: number };
  /** Imported CARs by root, as the pinning service would pin them. */
  pinned(): string[];
  stop(): Promise<void>;
}

class S3Failure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A local stand-in for an S3-compatible IPFS pinning API (Filebase-style), speaking the same
 * protocol the service's S3CarPinner uses in AWS:
 * - `PUT /<bucket>/<key>` with `x-amz-meta-import: car`: the body must be a CARv1 whose blocks all
 *   hash to their CIDs, with its root present and the UnixFS DAG under it complete (@ipld/car, as
 *   the real service checks); it is stored on fauxqs's S3 (`storage.bucket`, same key, metadata
 *   `cid`) and the answer names the root in `x-amz-meta-cid`. Without `import: car` the object is
 *   stored as is (no CID). A bad CAR: 400 `InvalidRequest`.
 * - `HEAD` / `GET /<bucket>/<key>`: the stored object, user metadata (`cid`) as `x-amz-meta-*`.
 * Requests must carry a valid AWS Signature V4 for `accessKeyId` (403 `SignatureDoesNotMatch` /
 * `InvalidAccessKeyId` otherwise); another bucket is 404 `NoSuchBucket`.
 */
export async function startIpfsPinningSandbox(opts: IpfsPinningSandboxOptions): Promise<IpfsPinningSandbox> {
  const log = opts.log ?? (() => undefined);
  const maxBytes = opts.maxBytes ?? 16 * 1_048_576;
  const storage = new S3Client({
    endpoint: opts.storage.endpoint,
    region: opts.storage.region ?? 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const pinned = new Set<string>();
  const faults: IpfsPinningSandbox['faults'] = {};

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    if (url.pathname === FAULTS_PATH && req.method === 'POST') {
      const set = JSON.parse(Buffer.from(await readBody(req, 4096)).toString('utf8') || '{}') as {
        delay_ms?: number;
        report_root?: string | null;
        fail_puts?: number;
      };
      if (set.delay_ms !== undefined) faults.delayMs = set.delay_ms;
      if (set.report_root !== undefined) faults.reportRoot = set.report_root ?? undefined;
      if (set.fail_puts !== undefined) faults.failPuts = set.fail_puts;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(faults));
      return;
    }
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    const body = await readBody(req, maxBytes);
    await verifySignature(req, url, body, opts);
    if (bucket !== opts.bucket) throw new S3Failure(404, 'NoSuchBucket', `The bucket ${bucket} does not exist.`);
    if (!key) throw new S3Failure(400, 'InvalidRequest', 'This sandbox serves objects only (no bucket listing).');

    if (req.method === 'PUT') {
      if (faults.delayMs) await new Promise((r) => setTimeout(r, faults.delayMs));
      if (faults.failPuts && faults.failPuts > 0) {
        faults.failPuts--;
        throw new S3Failure(503, 'SlowDown', 'Please reduce your request rate (sandbox fault).');
      }
      const metadata: Record<string, string> = {};
      for (const [h, v] of Object.entries(req.headers))
        if (h.startsWith('x-amz-meta-') && typeof v === 'string') metadata[h.slice('x-amz-meta-'.length)] = v;
      if (metadata.import === 'car') {
        let root: string;
        try {
          root = (await readVerifiedCar(body)).root;
        } catch (err) {
          if (err instanceof InvalidCarError) throw new S3Failure(400, 'InvalidRequest', `The CAR could not be imported: ${err.message}`);
          throw err;
        }
        metadata.cid = root;
        pinned.add(root);
        log(`imported CAR ${opts.bucket}/${key}: root ${root} (${body.byteLength} bytes)`);
      }
      await storage.send(
        new PutObjectCommand({
          Bucket: opts.storage.bucket,
          Key: key,
          Body: body,
          ContentType: req.headers['content-type'] ?? 'application/octet-stream',
          Metadata: metadata,
        }),
      );
      const reported = metadata.cid ? (faults.reportRoot ?? metadata.cid) : undefined;
      res.writeHead(200, {
        etag: `"${createHash('md5').update(body).digest('hex')}"`,
        ...(reported ? { 'x-amz-meta-cid': reported } : {}),
        'content-length': 0,
      });
      res.end();
      return;
    }
    if (req.method === 'HEAD' || req.method === 'GET') {
      try {
        const command =
          req.method === 'HEAD'
            ? new HeadObjectCommand({ Bucket: opts.storage.bucket, Key: key })
            : new GetObjectCommand({ Bucket: opts.storage.bucket, Key: key });
        const out = await storage.send(command);
        const meta = { ...(out.Metadata ?? {}) };
        if (meta.cid && faults.reportRoot) meta.cid = faults.reportRoot;
        const headers: Record<string, string | number> = {
          'content-type': out.ContentType ?? 'application/octet-stream',
          'content-length': out.ContentLength ?? 0,
          ...(out.ETag ? { etag: out.ETag } : {}),
        };
        for (const [k, v] of Object.entries(meta)) headers[`x-amz-meta-${k}`] = v;
        res.writeHead(200, headers);
        if (req.method === 'HEAD') return void res.end();
        res.end(Buffer.from(await (out as { Body?: { transformToByteArray(): Promise<Uint8Array> } }).Body!.transformToByteArray()));
        return;
      } catch (err) {
        if (
          err instanceof NotFound ||
          err instanceof NoSuchKey ||
          (err as { name?: string }).name === 'NotFound' ||
          (err as { name?: string }).name === 'NoSuchKey'
        ) {
          throw new S3Failure(404, 'NoSuchKey', `The key ${key} does not exist.`);
        }
        throw err;
      }
    }
    throw new S3Failure(405, 'MethodNotAllowed', `${req.method} is not supported by this sandbox.`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const f = err instanceof S3Failure ? err : new S3Failure(500, 'InternalError', (err as Error).message);
      if (!(err instanceof S3Failure)) log(`error: ${(err as Error).stack ?? String(err)}`);
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${f.code}</Code><Message>${escapeXml(f.message)}</Message></Error>`;
      if (!res.headersSent)
        res.writeHead(f.status, {
          'content-type': 'application/xml',
          'content-length': req.method === 'HEAD' ? 0 : Buffer.byteLength(xml),
        });
      res.end(req.method === 'HEAD' ? undefined : xml);
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    faults,
    pinned: () => [...pinned],
    stop: async () => {
      await listening.close();
      storage.destroy();
    },
  };
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

async function readBody(req: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > maxBytes) throw new S3Failure(400, 'EntityTooLarge', `Objects are limited to ${maxBytes} bytes here.`);
    chunks.push(c as Buffer);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/**
 * Checks the request's AWS Signature V4 (header form) by signing the same canonical request again
 * with the sandbox's secret: the signed headers as sent, the payload hash from
 * `x-amz-content-sha256` (which must match the body unless UNSIGNED-PAYLOAD), the date from
 * `x-amz-date`. Errors: S3Failure 403 InvalidAccessKeyId / SignatureDoesNotMatch / AccessDenied.
 */
async function verifySignature(req: IncomingMessage, url: URL, body: Uint8Array, opts: IpfsPinningSandboxOptions): Promise<void> {
  const auth = req.headers.authorization ?? '';
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) throw new S3Failure(403, 'AccessDenied', 'Requests must be signed with AWS Signature Version 4.');
  const [, accessKeyId, , region, signedHeaders, signature] = m;
  if (accessKeyId !== opts.accessKeyId)
    throw new S3Failure(403, 'InvalidAccessKeyId', 'The access key you provided does not exist in our records.');
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== createHash('sha256').update(body).digest('hex')) {
    throw new S3Failure(400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.');
  }
  const headers: Record<string, string> = {};
  for (const name of signedHeaders!.split(';')) headers[name] = String(req.headers[name] ?? '');
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signer = new SignatureV4({
    service: 's3',
    region: region!,
    credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!date) throw new S3Failure(403, 'AccessDenied', 'x-amz-date is missing or malformed.');
  const signingDate = new Date(Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!));
  const resigned = await signer.sign(
    { method: req.method ?? 'GET', protocol: 'http:', hostname: url.hostname, path: url.pathname, query, headers },
    { signingDate, unsignableHeaders: new Set(), signableHeaders: new Set(Object.keys(headers)) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization ?? resigned.headers.Authorization ?? ''))?.[1];
  if (expected !== signature)
    throw new S3Failure(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
}
