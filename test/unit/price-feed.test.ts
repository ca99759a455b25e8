import { createServer, type IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilePriceFeed } from '../../shared/adapters/price-feed/file-price-feed';
import { HttpPriceFeed, PriceFeedUnreachableError } from '../../shared/adapters/price-feed/http-price-feed';
import { DomainError } from '../../shared/domain/errors';
import type { PriceFeedSnapshot } from '../../shared/domain/lending';
import type { PriceFeed } from '../../shared/domain/ports/lending';
import { currentPrice } from '../../shared/use-cases/prices';
import { listenOnLoopback } from '../../infra/local/loopback';
import { LOCAL_DEFAULT_USD_PER_KG, preparePriceFeedFile } from '../../infra/local/price-feed-file';
import { onTheWire, wire } from './support/errors';

/**
 * The coffee price feed (docs/api/lending.md#price-feed): the local file adapter, the HTTP adapter against a
 * loopback server speaking the same document, the staleness rule of `currentPrice`, and the local
 * stack's file at start.
 */

const dir = mkdtempSync(join(tmpdir(), 'price-feed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fileWith = (content: unknown) => {
  const p = join(dir, `feed-${++n}.json`);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
};
const NOW = new Date('2026-11-22T12:00:00.000Z');
const doc = (over: Record<string, unknown> = {}, prices: Record<string, unknown> = {}) => ({
  updated_at: '2026-11-22T11:30:00Z',
  usd_per_kg: { screen18: 6.2, screen15: 5.8, FAQ: 5.1, PB: 6, ...prices },
  ...over,
});

describe('FilePriceFeed', () => {
  it('reads the document as integer micro-USD per kg, exactly', async () => {
    const p = fileWith(doc({}, { screen18: 6.2, screen15: '5.123456', FAQ: 0.000001, PB: 1234567.999999 }));
    expect(await new FilePriceFeed(p).latest()).toEqual({
      updated_at: '2026-11-22T11:30:00.000Z',
      usd_micro_per_kg: { screen18: 6_200_000, screen15: 5_123_456, FAQ: 1, PB: 1_234_567_999_999 },
      source: p,
    });
  });

  it('converts values that are not exact in binary floating point without drift (0.1+0.2 style)', async () => {
    const p = fileWith(doc({}, { screen18: 0.3, screen15: 1.1, FAQ: 2.675, PB: 4.35 }));
    expect((await new FilePriceFeed(p).latest()).usd_micro_per_kg).toEqual({
      screen18: 300_000,
      screen15: 1_100_000,
      FAQ: 2_675_000,
      PB: 4_350_000,
    });
  });

  it('reads the file at each use (an edit takes effect at once)', async () => {
    const p = fileWith(doc());
    const feed = new FilePriceFeed(p);
    expect((await feed.latest()).usd_micro_per_kg.PB).toBe(6_000_000);
    writeFileSync(p, JSON.stringify(doc({}, { PB: 7.25 })));
    expect((await feed.latest()).usd_micro_per_kg.PB).toBe(7_250_000);
  });

  it.each([
    ['not JSON', '{"updated_at": ', /not JSON/],
    ['a missing grade', { updated_at: '2026-11-22T11:30:00Z', usd_per_kg: { screen18: 6.2, screen15: 5.8, FAQ: 5.1 } }, /usd_per_kg\.PB/],
    ['more than 6 decimals', doc({}, { FAQ: 5.1234567 }), /usd_per_kg\.FAQ: must be a USD amount/],
    ['a negative price', doc({}, { FAQ: -1 }), /usd_per_kg\.FAQ/],
    ['an exponent', doc({}, { FAQ: 1e21 }), /usd_per_kg\.FAQ/],
    ['a price as text that is not a number', doc({}, { FAQ: 'five' }), /usd_per_kg\.FAQ/],
    ['no time zone on updated_at', doc({ updated_at: '2026-11-22T11:30:00' }), /updated_at: must be an ISO 8601/],
    ['an impossible date', doc({ updated_at: '2026-13-45T11:30:00Z' }), /updated_at/],
    ['an array', [], /Malformed price feed/],
  ])('refuses %s with a clear error naming the file', async (_label, content, message) => {
    const p = fileWith(content);
    const err = await new FilePriceFeed(p).latest().then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toMatch(message);
    expect(err!.message).toContain(p);
  });

  it('names the file when it cannot be read', async () => {
    await expect(new FilePriceFeed(join(dir, 'absent.json')).latest()).rejects.toThrow(/absent\.json cannot be read: ENOENT/);
  });
});

describe('HttpPriceFeed (loopback source)', () => {
  let answers: Array<{ status: number; body: string }> = [];
  const seen: IncomingHttpHeaders[] = [];
  let server: { port: number; close(): Promise<void> };
  beforeAll(async () => {
    server = await listenOnLoopback(
      createServer((req, res) => {
        seen.push(req.headers);
        const a = answers.shift() ?? { status: 500, body: 'no answer queued' };
        res.writeHead(a.status, { 'content-type': 'application/json' });
        res.end(a.body);
      }),
    );
  });
  afterAll(() => server.close());
  beforeEach(() => {
    answers = [];
    seen.length = 0;
  });
  const url = () => `http://127.0.0.1:${server.port}/coffee/prices.json?v=1`;
  const ok = (d: unknown = doc()) => ({ status: 200, body: JSON.stringify(d) });

  it('GETs the document with the bearer token and converts it; source is the URL without query', async () => {
    answers.push(ok());
    const snap = await new HttpPriceFeed({ url: url(), token: async () => 'tok-123', backoffMs: 0 }).latest();
    expect(snap).toEqual({
      updated_at: '2026-11-22T11:30:00.000Z',
      usd_micro_per_kg: { screen18: 6_200_000, screen15: 5_800_000, FAQ: 5_100_000, PB: 6_000_000 },
      source: `http://127.0.0.1:${server.port}/coffee/prices.json`,
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ authorization: 'Bearer tok-123', accept: 'application/json' });
  });

  it('sends no Authorization header without a token', async () => {
    answers.push(ok());
    await new HttpPriceFeed({ url: url(), backoffMs: 0 }).latest();
    expect(seen[0]!.authorization).toBeUndefined();
  });

  it('caches a good answer for 60 s per instance, then asks again; concurrent callers share one request', async () => {
    let clock = 1_000_000;
    const feed = new HttpPriceFeed({ url: url(), backoffMs: 0, now: () => clock });
    answers.push(ok(), ok(doc({}, { PB: 7 })));
    const [a, b] = await Promise.all([feed.latest(), feed.latest()]);
    expect(a).toEqual(b);
    clock += 59_999;
    expect((await feed.latest()).usd_micro_per_kg.PB).toBe(6_000_000);
    expect(seen).toHaveLength(1);
    clock += 1;
    expect((await feed.latest()).usd_micro_per_kg.PB).toBe(7_000_000);
    expect(seen).toHaveLength(2);
  });

  it('retries a 5xx and succeeds', async () => {
    answers.push({ status: 503, body: '{}' }, ok());
    const lines: string[] = [];
    await expect(new HttpPriceFeed({ url: url(), backoffMs: 0, log: (l) => lines.push(l) }).latest()).resolves.toMatchObject({
      usd_micro_per_kg: { FAQ: 5_100_000 },
    });
    expect(seen).toHaveLength(2);
    expect(lines[0]).toMatch(/attempt 1\/2 failed \(HTTP 503\)/);
  });

  it('unreachable after its attempts: PriceFeedUnreachableError, and nothing is cached', async () => {
    answers.push({ status: 502, body: '' }, { status: 502, body: '' }, ok());
    const feed = new HttpPriceFeed({ url: url(), backoffMs: 0 });
    await expect(feed.latest()).rejects.toBeInstanceOf(PriceFeedUnreachableError);
    await expect(feed.latest()).resolves.toMatchObject({ usd_micro_per_kg: { screen18: 6_200_000 } });
  });

  it('a closed port is unreachable', async () => {
    const closed = await listenOnLoopback(createServer());
    const port = closed.port;
    await closed.close();
    await expect(new HttpPriceFeed({ url: `http://127.0.0.1:${port}/p.json`, attempts: 1 }).latest()).rejects.toThrow(
      /unreachable after 1 attempt \(ECONNREFUSED\)/,
    );
  });

  it('any other status or a malformed document fails at once, without retrying', async () => {
    answers.push({ status: 401, body: '{}' });
    await expect(new HttpPriceFeed({ url: url(), backoffMs: 0 }).latest()).rejects.toThrow(/answered HTTP 401/);
    answers.push(ok({ updated_at: 'yesterday', usd_per_kg: {} }));
    await expect(new HttpPriceFeed({ url: url(), backoffMs: 0 }).latest()).rejects.toThrow(
      /Malformed price feed at http:\/\/127\.0\.0\.1:\d+\/coffee\/prices\.json: updated_at/,
    );
    expect(seen).toHaveLength(2);
  });
});

describe('currentPrice (staleness, docs/api/lending.md#price-feed: 1 hour)', () => {
  const snap = (updatedAt: string): PriceFeedSnapshot => ({
    updated_at: updatedAt,
    usd_micro_per_kg: { screen18: 6_200_000, screen15: 5_800_000, FAQ: 5_100_000, PB: 6_000_000 },
    source: 'test',
  });
  const feed = (s: PriceFeedSnapshot): PriceFeed => ({ latest: async () => s });
  const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();

  it("59 minutes old: the grade's price with its updated_at and source", async () => {
    await expect(currentPrice(feed(snap(minutesAgo(59))), 'screen15', NOW)).resolves.toEqual({
      usd_micro_per_kg: 5_800_000,
      updated_at: minutesAgo(59),
      source: 'test',
    });
  });

  it('exactly 60 minutes old is still current', async () => {
    await expect(currentPrice(feed(snap(minutesAgo(60))), 'FAQ', NOW)).resolves.toMatchObject({ usd_micro_per_kg: 5_100_000 });
  });

  it('61 minutes old: 503 STALE_PRICE_FEED naming the update time', async () => {
    const err = await currentPrice(feed(snap(minutesAgo(61))), 'PB', NOW).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(onTheWire(err)).toMatchObject({
      code: 'STALE_PRICE_FEED',
      status: 503,
      details: { updated_at: minutesAgo(61), max_age_seconds: 3600 },
    });
    expect((err as Error).message).toMatch(/loan origination is paused/);
  });

  it('a feed that cannot be read: 503 STALE_PRICE_FEED, loan origination paused', async () => {
    const broken: PriceFeed = {
      latest: async () => {
        throw new Error('ECONNREFUSED');
      },
    };
    await expect(wire(currentPrice(broken, 'PB', NOW))).rejects.toMatchObject({
      code: 'STALE_PRICE_FEED',
      status: 503,
      message: expect.stringMatching(/cannot be read \(ECONNREFUSED\).*paused/),
    });
  });

  it('end to end with the file adapter: 61 minutes → 503, after the operator edits the file → the price', async () => {
    const p = fileWith(doc({ updated_at: minutesAgo(61) }));
    const f = new FilePriceFeed(p);
    await expect(currentPrice(f, 'screen18', NOW)).rejects.toMatchObject({ code: 'STALE_PRICE_FEED' });
    writeFileSync(p, JSON.stringify(doc({ updated_at: minutesAgo(1) })));
    await expect(currentPrice(f, 'screen18', NOW)).resolves.toMatchObject({ usd_micro_per_kg: 6_200_000, source: p });
  });
});

describe('local stack price-feed file at start', () => {
  it('writes the default prices when the file is missing', async () => {
    const p = join(dir, 'sub', 'price-feed.json');
    expect(preparePriceFeedFile(p, NOW)).toBe('written');
    expect(JSON.parse(readFileSync(p, 'utf8'))).toEqual({ updated_at: NOW.toISOString(), usd_per_kg: LOCAL_DEFAULT_USD_PER_KG });
    await expect(currentPrice(new FilePriceFeed(p), 'screen18', NOW)).resolves.toMatchObject({ usd_micro_per_kg: 6_200_000 });
  });

  it('keeps a fresh operator file as it is', () => {
    const p = fileWith(doc({}, { PB: 9.99 }));
    const before = readFileSync(p, 'utf8');
    expect(preparePriceFeedFile(p, NOW)).toBe('kept');
    expect(readFileSync(p, 'utf8')).toBe(before);
  });

  it('republishes a stale operator file: its prices, updated_at now', () => {
    const p = fileWith(doc({ updated_at: '2026-11-01T00:00:00Z' }, { PB: 9.99 }));
    expect(preparePriceFeedFile(p, NOW)).toBe('refreshed');
    expect(JSON.parse(readFileSync(p, 'utf8'))).toEqual(doc({ updated_at: NOW.toISOString() }, { PB: 9.99 }));
  });

  it('replaces a malformed file with the defaults and says so', () => {
    const p = fileWith('not json');
    const lines: string[] = [];
    expect(preparePriceFeedFile(p, NOW, (l) => lines.push(l))).toBe('written');
    expect(lines[0]).toMatch(/not usable/);
    expect(JSON.parse(readFileSync(p, 'utf8')).usd_per_kg).toEqual(LOCAL_DEFAULT_USD_PER_KG);
  });
});
