import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { area as turfArea } from '@turf/area';
import { DomainError } from '../../shared/domain/errors';
import type { FarmLocation } from '../../shared/domain/farm-geometry';
import {
  GFW_ALERTS_SQL,
  GfwForestCheck,
  GfwRequestError,
  createGfwForestCheckFromEnv,
  gridCellAreaHa,
} from '../../shared/adapters/forest-check/gfw-forest-check';
import { onTheWire } from './support/errors';

/** A request the fake GFW server received. */
interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}
/** What the fake answers: a status and JSON body, optionally late; or a redirect. */
interface Reply {
  status: number;
  json?: unknown;
  location?: string;
  delayMs?: number;
}
type Script = (req: Seen) => Reply;

const DS = 'gfw_integrated_alerts';
const VERSION = 'v20250301';
const KEY = 'gfw-test-key-123';

/** Answers of a well-behaved GFW: `latest` redirects to VERSION, the query answers `rows`. */
function gfw(rows: unknown[] = []): Script {
  return (req) => {
    if (req.method === 'GET' && req.path === `/dataset/${DS}/latest`) return { status: 307, location: `/dataset/${DS}/${VERSION}` };
    if (req.method === 'GET' && req.path === `/dataset/${DS}/${VERSION}`)
      return { status: 200, json: { status: 'success', data: { dataset: DS, version: VERSION, is_latest: true } } };
    if (req.method === 'POST' && req.path === `/dataset/${DS}/${VERSION}/query/json`)
      return { status: 200, json: { status: 'success', data: rows } };
    return { status: 404, json: { status: 'failed', message: 'Not Found' } };
  };
}

let server: Server;
let baseUrl: string;
let script: Script = gfw();
let seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const entry: Seen = {
        method: req.method ?? '',
        path: (req.url ?? '').split('?')[0]!,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      seen.push(entry);
      const reply = script(entry);
      const send = () => {
        if (res.destroyed) return;
        if (reply.location) {
          res.writeHead(reply.status, { location: reply.location }).end();
          return;
        }
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json ?? {}));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  script = gfw();
  seen = [];
});

const client = (over: Partial<ConstructorParameters<typeof GfwForestCheck>[0]> = {}) =>
  new GfwForestCheck({
    baseUrl,
    apiKey: async () => KEY,
    timeoutMs: 1000,
    backoffMs: 1,
    now: () => new Date('2026-03-01T08:00:00.000Z'),
    ...over,
  });

const polygonFarm: FarmLocation = {
  gps: { lat: 0.43, lng: 32.95 },
  area_ha: 5.2,
  polygon: {
    type: 'Polygon',
    coordinates: [
      [
        [32.949, 0.429],
        [32.951, 0.429],
        [32.951, 0.431],
        [32.949, 0.431],
        [32.949, 0.429],
      ],
    ],
  },
};
const pointFarm: FarmLocation = { gps: { lat: 1.3793, lng: 34.4528 }, area_ha: 2.5 };
const queries = () => seen.filter((r) => r.method === 'POST');

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(DomainError);
  return e as DomainError;
}

describe('GfwForestCheck against a fake GFW Data API', () => {
  it('resolves `latest` to the concrete version through the redirect and queries that version', async () => {
    const result = await client().check(polygonFarm);
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /dataset/${DS}/latest`,
      `GET /dataset/${DS}/${VERSION}`,
      `POST /dataset/${DS}/${VERSION}/query/json`,
    ]);
    expect(result.dataset).toEqual({ name: DS, version: VERSION });
  });

  it('falls back to the dataset listing when no version is tagged latest, taking the highest version', async () => {
    script = (req) => {
      if (req.path === `/dataset/${DS}/latest`) return { status: 404, json: { status: 'failed', message: 'no latest' } };
      if (req.path === `/dataset/${DS}`)
        return { status: 200, json: { status: 'success', data: { dataset: DS, versions: ['v20241231', 'v20250301', 'v20240105'] } } };
      return gfw()(req);
    };
    const result = await client().check(polygonFarm);
    expect(result.dataset.version).toBe('v20250301');
  });

  it('flags a polygon farm with alerts after the cut-off, sending the SQL, the polygon and the API key', async () => {
    script = gfw([
      { [`${DS}__date`]: '2023-03-14', [`${DS}__confidence`]: 'high', count: 40 },
      { [`${DS}__date`]: '2022-11-02', [`${DS}__confidence`]: 'nominal', count: 3 },
    ]);
    const result = await client().check(polygonFarm);
    const cell = gridCellAreaHa(0.43);
    expect(result).toEqual({
      status: 'FLAGGED',
      checked_at: '2026-03-01T08:00:00.000Z',
      cutoff_date: '2020-12-31',
      dataset: { name: DS, version: VERSION },
      alerts: [
        { date: '2022-11-02', confidence: 'nominal', area_ha: Math.round(3 * cell * 1e4) / 1e4 },
        { date: '2023-03-14', confidence: 'high', area_ha: Math.round(40 * cell * 1e4) / 1e4 },
      ],
    });
    expect(cell).toBeCloseTo(0.01236, 4);
    const [q] = queries();
    expect(q!.body).toEqual({ sql: GFW_ALERTS_SQL, geometry: polygonFarm.polygon });
    expect(q!.body.sql).toMatch(
      /^SELECT gfw_integrated_alerts__date, gfw_integrated_alerts__confidence, COUNT\(\*\) FROM \w+ WHERE gfw_integrated_alerts__date > '2020-12-31' GROUP BY /,
    );
    expect(q!.headers['content-type']).toBe('application/json');
    expect(seen.every((r) => r.headers['x-api-key'] === KEY)).toBe(true);
  });

  it('is CLEAR when the query returns no rows', async () => {
    const result = await client().check(polygonFarm);
    expect(result.status).toBe('CLEAR');
    expect(result.alerts).toEqual([]);
    expect(result.dataset.version).toBe(VERSION);
  });

  it('queries a point farm with a circle polygon of its declared area (within 1 %)', async () => {
    await client().check(pointFarm);
    const geometry = queries()[0]!.body.geometry;
    expect(geometry.type).toBe('Polygon');
    expect(geometry.coordinates[0]).toHaveLength(65);
    const ha = turfArea(geometry) / 10_000;
    expect(Math.abs(ha - pointFarm.area_ha) / pointFarm.area_ha).toBeLessThan(0.01);
    const lngs = geometry.coordinates[0].map((p: number[]) => p[0]);
    expect((Math.min(...lngs) + Math.max(...lngs)) / 2).toBeCloseTo(pointFarm.gps.lng, 6);
  });

  it('succeeds on the third attempt after 500, 500', async () => {
    let n = 0;
    script = (req) =>
      req.method === 'POST' && ++n <= 2
        ? { status: 500, json: { status: 'error' } }
        : gfw([{ [`${DS}__date`]: '2024-01-09', [`${DS}__confidence`]: 'highest', count: 1 }])(req);
    const result = await client().check(polygonFarm);
    expect(queries()).toHaveLength(3);
    expect(result.status).toBe('FLAGGED');
  });

  it('throws GFW_API_UNAVAILABLE (503, Retry-After: 300) after 3 × 503', async () => {
    script = (req) => (req.method === 'POST' ? { status: 503, json: { status: 'error' } } : gfw()(req));
    const err = await rejection(client().check(polygonFarm));
    expect(err.code).toBe('GFW_API_UNAVAILABLE');
    expect(onTheWire(err).status).toBe(503);
    expect(onTheWire(err).headers).toEqual({ 'Retry-After': '300' });
    expect(err.message).toMatch(/after 3 attempts \(last: HTTP 503\)/);
    expect(queries()).toHaveLength(3);
  });

  it('retries 429 like 5xx, and an unreachable host too', async () => {
    script = (req) => (req.method === 'POST' ? { status: 429, json: {} } : gfw()(req));
    expect((await rejection(client().check(polygonFarm))).code).toBe('GFW_API_UNAVAILABLE');
    expect(queries()).toHaveLength(3);
    const down = await rejection(client({ baseUrl: 'http://127.0.0.1:1' }).check(polygonFarm));
    expect(down.code).toBe('GFW_API_UNAVAILABLE');
    expect(onTheWire(down).headers).toEqual({ 'Retry-After': '300' });
  });

  it('counts a timeout as a failed attempt', async () => {
    let n = 0;
    script = (req) => (req.method === 'POST' && ++n === 1 ? { ...gfw()(req), delayMs: 400 } : gfw()(req));
    const result = await client({ timeoutMs: 150 }).check(polygonFarm);
    expect(result.status).toBe('CLEAR');
    expect(queries()).toHaveLength(2);

    seen = [];
    script = (req) => (req.method === 'POST' ? { ...gfw()(req), delayMs: 400 } : gfw()(req));
    const err = await rejection(client({ timeoutMs: 100 }).check(polygonFarm));
    expect(err.code).toBe('GFW_API_UNAVAILABLE');
    expect(err.message).toMatch(/last: timeout/);
    expect(queries()).toHaveLength(3);
  });

  it('does not retry a refusal such as 403 (bad API key)', async () => {
    script = (req) =>
      req.method === 'POST' ? { status: 403, json: { status: 'failed', message: 'Request is missing valid API key' } } : gfw()(req);
    const e = await client()
      .check(polygonFarm)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(e).toBeInstanceOf(GfwRequestError);
    expect((e as GfwRequestError).status).toBe(403);
    expect(queries()).toHaveLength(1);
  });

  it('reuses the resolved version for later checks', async () => {
    const c = client();
    await c.check(polygonFarm);
    await c.check(pointFarm);
    expect(seen.filter((r) => r.method === 'GET')).toHaveLength(2);
    expect(queries()).toHaveLength(2);
  });

  it('is configured from GFW_API_URL and GFW_API_KEY', async () => {
    const saved = { url: process.env.GFW_API_URL, key: process.env.GFW_API_KEY };
    process.env.GFW_API_URL = baseUrl;
    process.env.GFW_API_KEY = 'env-key';
    try {
      const result = await createGfwForestCheckFromEnv({ backoffMs: 1 }).check(polygonFarm);
      expect(result.dataset.version).toBe(VERSION);
      expect(seen.every((r) => r.headers['x-api-key'] === 'env-key')).toBe(true);
    } finally {
      for (const [k, v] of [
        ['GFW_API_URL', saved.url],
        ['GFW_API_KEY', saved.key],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
