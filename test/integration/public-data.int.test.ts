import { request } from 'node:http';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import QRCode from 'qrcode';
import { exportCar } from '../../shared/domain/evidence-car';
import { buildUnixfsDirectory } from '../../shared/domain/evidence-package';
import { QR_OPTIONS } from '../../shared/http/trace-page';
import { LOCAL_EVIDENCE_BUCKET } from '../../infra/local/stack';
import { api, stackUrl, uid, waitFor, localStack } from '../support/api';
import { holdsMetadata, JPEG, JPEG_WITH_METADATA, PNG, PNG_WITH_METADATA } from '../unit/support/images';
import { batchBody, registerFarmer, setUpCooperative, purchaseOrderBody } from './fixtures';

/**
 * "Public means public only" and "links come from configuration", through the API of the local
 * stack: forged Host / X-Forwarded-* headers change no link of the trace page, its JSON or its QR
 * code; HTML pages carry a CSP without inline script, nosniff and no-referrer; the public plot is
 * rounded to 3 decimals; a DDS is not served by /ipfs (neither a new one nor one archived before
 * statements became private) while its owner still reads it; photo metadata is gone from what
 * /ipfs serves, and the CID is computed over the stripped bytes.
 */

const FORGED = {
  'x-forwarded-proto': 'javascript:alert(document.domain)//',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-port': '666',
  forwarded: 'for=1.2.3.4;host=evil.example;proto=javascript',
};
const HOSTILE = /javascript:|evil\.example|alert\(/;

/** A GET with any headers, Host included (fetch will not send a forged Host). */
function rawGet(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(`${stackUrl()}${path}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every absolute link (href, src, url fields) in a text. */
const links = (text: string) => [...text.matchAll(/(?:href|src)="([^"]+)"|"(?:page_url|qr_url)":"([^"]+)"/g)].map((m) => (m[1] ?? m[2])!);

let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
let batchId: string;
let photoCid: string;

beforeAll(async () => {
  ctx = await setUpCooperative();
  const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000741');
  const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
  expect(submit.status).toBe(201);
  batchId = submit.body.data.batch_id;
  const graded = await api('PATCH', `/batch/${batchId}/stage`, {
    token: ctx.coop,
    body: {
      cooperative_id: ctx.id,
      new_stage: 'GRADED',
      evidence: { grade: 'screen18', moisture_pct: 11 },
      evidence_photo_base64: `data:image/jpeg;base64,${Buffer.from(JPEG_WITH_METADATA).toString('base64')}`,
    },
  });
  expect([200, 202]).toContain(graded.status);
  photoCid = graded.body.evidence_ipfs_cid;
}, 60_000);

describe('links come from PUBLIC_BASE_URL, never from Host or X-Forwarded-*', () => {
  it('the trace page HTML: every link starts with the configured base, whatever the forwarded headers say', async () => {
    const plain = await rawGet(`/trace/${batchId}`, { accept: 'text/html' });
    const forged = await rawGet(`/trace/${batchId}`, { accept: 'text/html', host: 'evil.example', ...FORGED });
    expect([plain.status, forged.status]).toEqual([200, 200]);
    expect(forged.body).not.toMatch(HOSTILE);
    expect(links(forged.body).length).toBeGreaterThanOrEqual(3);
    for (const l of links(forged.body)) expect(l.startsWith(`${stackUrl()}/`)).toBe(true);
    expect(links(forged.body)).toEqual(links(plain.body));
  });

  it('the trace JSON (page_url, qr_url) and the QR code encode the configured base', async () => {
    const forged = await rawGet(`/trace/${batchId}`, { accept: 'application/json', host: 'evil.example', ...FORGED });
    const view = JSON.parse(forged.body) as { page_url: string; qr_url: string };
    expect(view.page_url).toBe(`${stackUrl()}/trace/${batchId}`);
    expect(view.qr_url).toBe(`${stackUrl()}/trace/${batchId}/qr.svg`);
    const qr = await rawGet(`/trace/${batchId}/qr.svg`, { host: 'evil.example', ...FORGED });
    expect(qr.status).toBe(200);
    expect(qr.body).toBe(await QRCode.toString(`${stackUrl()}/trace/${batchId}`, QR_OPTIONS));
  });

  it('the docs page and the OpenAPI document name the configured base', async () => {
    const docs = await rawGet('/docs', { host: 'evil.example', ...FORGED });
    expect(docs.body).not.toMatch(HOSTILE);
    expect(docs.body).toContain(`src="${stackUrl()}/docs/scalar.js"`);
    const errors = await rawGet('/docs/errors', { host: 'evil.example', ...FORGED });
    expect(errors.body).not.toMatch(HOSTILE);
    const doc = JSON.parse((await rawGet('/openapi.json', { host: 'evil.example', ...FORGED })).body) as {
      servers: Array<{ url: string }>;
    };
    expect(doc.servers.map((s) => s.url)).toEqual([stackUrl()]);
  });
});

describe('security headers', () => {
  const strictScript = (csp: string) => {
    const script = csp
      .split(';')
      .map((d) => d.trim())
      .find((d) => d.startsWith('script-src'));
    expect(script).toBe("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
  };

  it.each([
    ['/trace/{id}', 'text/html'],
    ['/docs', 'text/html'],
    ['/docs/errors', 'text/html'],
  ])('%s: a CSP without inline script, nosniff, no-referrer, and no inline script in the page', async (path, accept) => {
    const res = await fetch(`${stackUrl()}${path.replace('{id}', batchId)}`, { headers: { accept } });
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    strictScript(csp);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('strict-transport-security')).toBeNull(); // HSTS only in AWS
    const html = await res.text();
    // Every <script> either loads a file or is a JSON data block: nothing inline to execute.
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/\ssrc="|type="application\/json"/);
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handlers
    if (path !== '/docs') expect(csp).not.toContain("'unsafe-inline'"); // its one <style> is allowed by hash
  });

  it('nosniff and no-referrer on every other answer: JSON, SVG, errors of the gateway and of the handlers', async () => {
    for (const [path, tok] of [
      [`/trace/${batchId}/qr.svg`, undefined],
      [`/batch/${batchId}`, ctx.coop],
      ['/batch/BATCH-2026-999999', undefined],
      ['/no/such/route', undefined],
      ['/ipfs/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku', undefined],
    ] as const) {
      const res = await fetch(`${stackUrl()}${path}`, { headers: tok ? { authorization: `Bearer ${tok}` } : {}, redirect: 'manual' });
      expect([path, res.headers.get('x-content-type-options'), res.headers.get('referrer-policy')]).toEqual([
        path,
        'nosniff',
        'no-referrer',
      ]);
    }
  });
});

describe('the public plot is rounded to 3 decimals (about 110 m)', () => {
  const decimals = (x: number) => (String(x).split('.')[1] ?? '').length;

  it('a point farm (1.080123, 34.175045): every coordinate of the JSON and the drawing has at most 3 decimals', async () => {
    const res = await api('GET', `/trace/${batchId}`, { headers: { accept: 'application/json' } });
    const coords = (res.body.plot.geometry.coordinates as number[][][]).flat(2);
    expect(coords.length).toBeGreaterThan(100);
    expect(Math.max(...coords.map(decimals))).toBeLessThanOrEqual(3);
    const json = JSON.stringify(res.body);
    expect(json).not.toContain('1.080123');
    expect(json).not.toContain('34.175045');
    const html = await (await fetch(`${stackUrl()}/trace/${batchId}`, { headers: { accept: 'text/html' } })).text();
    expect(html).not.toMatch(/1\.0801|34\.1750/);
  });

  it('a polygon farm: its positions rounded, none exact', async () => {
    const ring = [
      [34.449123, 1.395317],
      [34.451358, 1.395317],
      [34.451358, 1.397389],
      [34.449123, 1.397389],
      [34.449123, 1.395317],
    ];
    const farmerId = uid('UG-KAP');
    const reg = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: {
        farmer_id: farmerId,
        full_name: 'Chebet Rose',
        cooperative_id: ctx.id,
        district: 'Kapchorwa',
        farm: { gps: { lat: 1.396245, lng: 34.450118 }, area_ha: 5.2, polygon: { type: 'Polygon', coordinates: [ring] } },
      },
    });
    expect(reg.status).toBe(201);
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmerId, ctx.id) });
    expect(submit.status).toBe(201);
    const res = await api('GET', `/trace/${submit.body.data.batch_id}`, { headers: { accept: 'application/json' } });
    expect(res.body.plot.source).toBe('POLYGON');
    expect(res.body.plot.geometry.coordinates).toEqual([
      [
        [34.449, 1.395],
        [34.451, 1.395],
        [34.451, 1.397],
        [34.449, 1.397],
        [34.449, 1.395],
      ],
    ]);
  });
});

describe('a due diligence statement is private', () => {
  const endpoints = () => localStack().endpoints;
  const s3 = (endpoint: string, creds = { accessKeyId: 'local', secretAccessKey: 'local' }) =>
    new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: creds });
  const exists = async (client: S3Client, bucket: string, key: string) =>
    client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
      () => true,
      () => false,
    );
  /** What /ipfs answers for a CID it does not hold, with the CID in the message swapped for a placeholder. */
  const unknownAnswer = async (cid: string, path = '') => {
    const res = await fetch(`${stackUrl()}/ipfs/${cid}${path}`);
    const body = (await res.json()) as { error: { code: string; message: string } };
    return {
      status: res.status,
      code: body.error.code,
      message: body.error.message.replace(cid, '<cid>'),
      cache: res.headers.get('cache-control'),
    };
  };

  it('GET /eudr/dds/{id} and /xml answer its owner; /ipfs/{cid} answers 404 exactly as for an unknown CID; it is neither archived in the public copy nor pinned', async () => {
    await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: purchaseOrderBody([batchId]),
    });
    const gen = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { batch_id: batchId } });
    expect(gen.status).toBe(202);
    expect(gen.body.ipfs_url).toBeUndefined();
    const dds = await waitFor(
      () => api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'AVAILABLE',
      20_000,
      200,
    );
    expect(dds.status).toBe(200);
    expect(dds.body.producers[0].name).toBe('Joseph Wamala');
    expect(dds.body).not.toHaveProperty('ipfs_url');
    const cid: string = dds.body.ipfs_cid;
    expect(cid).toMatch(/^bafy/);
    const xml = await api('GET', `/eudr/dds/${gen.body.dds_id}/xml`, { token: ctx.coop });
    expect(xml.status).toBe(200);
    expect(xml.body).toContain('Joseph Wamala');

    const never = (await buildUnixfsDirectory([{ path: 'never.json', bytes: new TextEncoder().encode(`{"n":"${uid('x')}"}`) }])).cid;
    const unknown = await unknownAnswer(never);
    expect(unknown).toMatchObject({ status: 404, code: 'ROUTE_NOT_FOUND' });
    expect(await unknownAnswer(cid)).toEqual(unknown);
    expect(await unknownAnswer(cid, '/dds.xml')).toEqual({ ...unknown, message: unknown.message.replace('<cid>', '<cid>/dds.xml') });
    expect(await unknownAnswer(cid, '/dds.json')).toEqual({ ...unknown, message: unknown.message.replace('<cid>', '<cid>/dds.json') });

    // Not in the public evidence copy, and never sent to the pinning service (give the pinner time to act on any job).
    const stageCid = photoCid;
    expect(await exists(s3(endpoints().sqs_sns!), LOCAL_EVIDENCE_BUCKET, `car/${stageCid}.car`)).toBe(true);
    expect(await exists(s3(endpoints().sqs_sns!), LOCAL_EVIDENCE_BUCKET, `car/${cid}.car`)).toBe(false);
    await new Promise((r) => setTimeout(r, 2_000));
    const pins = s3(endpoints().ipfs_pinning_sandbox!, { accessKeyId: 'DEVPINNINGKEY', secretAccessKey: 'dev-pinning-secret' });
    expect(await exists(pins, 'coffee-trace-evidence-pins', `${cid}.car`)).toBe(false);
    expect((await api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: (await setUpCooperative()).coop })).status).toBe(403);
  });

  it('a DDS archived in the evidence copy before statements became private is refused by /ipfs too', async () => {
    const files = [
      {
        path: 'dds.json',
        bytes: new TextEncoder().encode(`{"producers":[{"name":"Nabulo Mirembe","geolocation":[34.331245,1.011812]}],"n":"${uid('old')}"}`),
      },
      { path: 'dds.xml', bytes: new TextEncoder().encode('<dds><name>Nabulo Mirembe</name></dds>') },
    ];
    const { cid, blocks } = await buildUnixfsDirectory(files);
    const client = s3(endpoints().sqs_sns!);
    await client.send(new PutObjectCommand({ Bucket: LOCAL_EVIDENCE_BUCKET, Key: `car/${cid}.car`, Body: await exportCar(cid, blocks) }));
    for (const f of files)
      await client.send(new PutObjectCommand({ Bucket: LOCAL_EVIDENCE_BUCKET, Key: `files/${cid}/${f.path}`, Body: f.bytes }));
    expect(await exists(client, LOCAL_EVIDENCE_BUCKET, `car/${cid}.car`)).toBe(true);
    for (const path of ['', '/dds.json', '/dds.xml']) {
      const res = await fetch(`${stackUrl()}/ipfs/${cid}${path}`, { redirect: 'manual' });
      expect([path, res.status]).toEqual([path, 404]);
      expect(await res.text()).not.toContain('Nabulo');
    }
    // A stage's evidence package is still served.
    expect((await fetch(`${stackUrl()}/ipfs/${photoCid}`)).status).toBe(200);
  });
});

describe('photo metadata is removed before the photo is hashed and pinned', () => {
  /** The files of an evidence directory as /ipfs serves them (a photo through its redirect). */
  async function filesOf(cid: string) {
    const listing = (await (await fetch(`${stackUrl()}/ipfs/${cid}`)).json()) as { entries: Array<{ name: string }> };
    return Promise.all(
      listing.entries.map(async (e) => ({
        path: e.name,
        bytes: new Uint8Array(await (await fetch(`${stackUrl()}/ipfs/${cid}/${e.name}`)).arrayBuffer()),
      })),
    );
  }

  it('a JPEG with EXIF GPS, XMP and IPTC sent as base64 comes back from /ipfs without any of it, and the CID is over those bytes', async () => {
    const files = await filesOf(photoCid);
    const photo = files.find((f) => f.path === 'photo.jpg')!;
    expect(holdsMetadata(photo.bytes)).toBe(false);
    expect(Buffer.from(photo.bytes).equals(Buffer.from(JPEG))).toBe(true);
    expect((await buildUnixfsDirectory(files)).cid).toBe(photoCid);
  });

  it('a PNG with eXIf / text chunks sent by upload URL comes back without them', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000742');
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    const id: string = submit.body.data.batch_id;
    const created = await api('POST', `/batch/${id}/evidence-uploads`, {
      token: ctx.coop,
      body: { content_type: 'image/png', size_bytes: PNG_WITH_METADATA.byteLength },
    });
    expect(created.status).toBe(201);
    const put = await fetch(created.body.url as string, {
      method: 'PUT',
      headers: created.body.headers as Record<string, string>,
      body: PNG_WITH_METADATA,
    });
    expect(put.status).toBe(200);
    const graded = await api('PATCH', `/batch/${id}/stage`, {
      token: ctx.coop,
      body: {
        cooperative_id: ctx.id,
        new_stage: 'GRADED',
        evidence: { grade: 'screen18', moisture_pct: 11 },
        evidence_upload_id: created.body.upload_id,
      },
    });
    expect([200, 202]).toContain(graded.status);
    const files = await filesOf(graded.body.evidence_ipfs_cid);
    const photo = files.find((f) => f.path === 'photo.png')!;
    expect(holdsMetadata(photo.bytes)).toBe(false);
    expect(Buffer.from(photo.bytes).equals(Buffer.from(PNG))).toBe(true);
    expect((await buildUnixfsDirectory(files)).cid).toBe(graded.body.evidence_ipfs_cid);
  });
});
