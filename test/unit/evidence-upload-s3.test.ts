import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { startFauxqs } from 'fauxqs';
import { S3UploadReader } from '../../shared/adapters/aws/s3-object-reader';
import type { S3BucketLocation } from '../../shared/adapters/aws/s3-signed-fetch';
import { S3UploadPresigner } from '../../shared/adapters/aws/s3-upload-presigner';
import { StoreUnavailableError } from '../../shared/domain/errors';
import { onTheWire } from './support/errors';

/**
 * The S3 side of evidence uploads (docs/api/evidence.md#evidence-photos-by-upload-url): the presigned PUT is exactly what the SDK's own
 * `getSignedUrl(S3Client, PutObjectCommand)` makes (same signed headers, same signature), in AWS
 * (virtual-hosted) and on a custom endpoint (path-style); and against fauxqs's S3 (in process),
 * a PUT to that URL with the headers given stores the bytes the reader's signed GET reads back,
 * bounded by the declared size.
 */

const CREDENTIALS = {
  accessKeyId: 'AKIAEXAMPLEUPLOADS01',
  secretAccessKey: 'uploads/secret/key+example',
  sessionToken: 'IQoJb3JpZ2luX2VjE//session+token=',
};
const ENV = {
  AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
  AWS_SESSION_TOKEN: CREDENTIALS.sessionToken,
};
const saved = Object.fromEntries(Object.keys(ENV).map((k) => [k, process.env[k]]));
beforeAll(() => Object.assign(process.env, ENV));
afterAll(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

describe('S3UploadPresigner', () => {
  afterEach(() => jest.useRealTimers());

  it.each<[string, S3BucketLocation]>([
    ['AWS (virtual-hosted)', { bucket: 'coffeetrace-dev-evidenceuploads-1a2b3c', region: 'eu-west-1' }],
    [
      'a custom endpoint (path-style)',
      { bucket: 'coffee-trace-evidence-uploads-local', region: 'us-east-1', endpoint: 'http://127.0.0.1:4566' },
    ],
  ])("signs the same PUT as the SDK's getSignedUrl on %s, Content-Type and Content-Length included", async (_where, loc) => {
    jest.useFakeTimers({
      now: new Date('2026-11-22T18:54:12.000Z'),
      doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'clearTimeout', 'queueMicrotask'],
    });
    const key = 'evidence-uploads/BATCH-2026-000001/UPL-01M82A3B5K7Q9S1V3X5Z7B9D1F';
    const ours = await new S3UploadPresigner(loc).presignPut({
      key,
      contentType: 'image/jpeg',
      sizeBytes: 4_718_592,
      expiresInSeconds: 900,
    });
    const client = new S3Client({
      region: loc.region,
      credentials: CREDENTIALS,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      ...(loc.endpoint ? { endpoint: loc.endpoint, forcePathStyle: true } : {}),
    });
    const sdk = await getSignedUrl(
      client,
      new PutObjectCommand({ Bucket: loc.bucket, Key: key, ContentType: 'image/jpeg', ContentLength: 4_718_592 }),
      { expiresIn: 900, signableHeaders: new Set(['content-type', 'content-length']) },
    );
    const a = new URL(ours.url);
    const b = new URL(sdk);
    expect(a.origin + a.pathname).toBe(b.origin + b.pathname);
    expect(Object.fromEntries(a.searchParams)).toEqual(Object.fromEntries(b.searchParams));
    expect(a.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host');
    expect(a.searchParams.get('X-Amz-Security-Token')).toBe(CREDENTIALS.sessionToken);
    expect(ours.headers).toEqual({ 'Content-Type': 'image/jpeg', 'Content-Length': '4718592' });
  });
});

describe('an upload round trip on fauxqs S3', () => {
  let server: Awaited<ReturnType<typeof startFauxqs>>;
  let loc: S3BucketLocation;
  beforeAll(async () => {
    server = await startFauxqs({ port: 0, logger: false });
    server.createBucket('uploads-test');
    loc = { bucket: 'uploads-test', region: 'us-east-1', endpoint: server.address };
  });
  afterAll(async () => server.stop());

  it('stores what is PUT with the presigned request and reads it back within the declared size', async () => {
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 31) % 251);
    const key = 'evidence-uploads/BATCH-2026-000001/UPL-01M82A3B5K7Q9S1V3X5Z7B9D1F';
    const { url, headers } = await new S3UploadPresigner(loc).presignPut({
      key,
      contentType: 'image/png',
      sizeBytes: bytes.byteLength,
      expiresInSeconds: 900,
    });
    const put = await fetch(url, { method: 'PUT', headers, body: bytes });
    expect(put.status).toBe(200);

    const reader = new S3UploadReader(loc);
    const read = await reader.read(key, bytes.byteLength);
    expect(read?.sizeBytes).toBe(bytes.byteLength);
    expect(Buffer.from(read!.bytes!).equals(Buffer.from(bytes))).toBe(true);
    // Larger than allowed: the size, no bytes (the body is abandoned).
    expect(await reader.read(key, 1000)).toEqual({ sizeBytes: bytes.byteLength });
    // Nothing there: null.
    expect(await reader.read('evidence-uploads/BATCH-2026-000001/UPL-NOTHING', 1000)).toBeNull();
  });

  it('answers 503 with Retry-After (not a missing upload) when S3 cannot be reached or fails; a refusal stays an error', async () => {
    const unreachable = new S3UploadReader({ ...loc, endpoint: 'http://127.0.0.1:1' }, { timeoutMs: 2000 });
    const down = await unreachable.read('evidence-uploads/x/y', 10).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(StoreUnavailableError);
    expect(onTheWire(down)).toMatchObject({
      status: 503,
      headers: { 'Retry-After': expect.any(String) },
      cause: { message: expect.stringMatching(/S3 GetObject uploads-test\/evidence-uploads\/x\/y failed/) },
    });
    const answering = (status: number) => new S3UploadReader(loc, { fetchImpl: async () => new Response('<Error/>', { status }) });
    await expect(answering(503).read('evidence-uploads/x/y', 10)).rejects.toBeInstanceOf(StoreUnavailableError);
    const refused = await answering(403)
      .read('evidence-uploads/x/y', 10)
      .catch((e: unknown) => e);
    expect(refused).not.toBeInstanceOf(StoreUnavailableError);
    expect(refused).toMatchObject({ message: 'S3 GetObject uploads-test/evidence-uploads/x/y answered 403' });
  });
});
