import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPayoutSandbox, type PayoutSandbox } from '../../infra/local/payout-sandbox';
import { HttpPayoutProvider } from '../../shared/adapters/payout-provider/http-payout-provider';
import { ProviderUnavailableError } from '../../shared/domain/errors';

/**
 * Payout provider 5xx answers and timeouts, through the real HTTP adapter (retry policy of
 * shared/runtime/retry.ts: 3 attempts, doubling backoff, per-attempt timeout) against the real
 * payout sandbox behind a fault proxy on loopback. The proxy answers each request by a script:
 * `503` (never forwarded), `hang` (forwarded, the answer withheld: the provider did the work, the
 * client times out), `lost503` (forwarded, the answer replaced by a 503), `pass`.
 * What is counted is the sandbox's own `ordersCreated`: whatever the faults, one reference makes
 * at most one order.
 */

type Fault = '503' | 'hang' | 'lost503' | 'pass';

let sandbox: PayoutSandbox;
let proxy: Server;
let proxyUrl: string;
let script: Fault[] = [];
const seen: Array<{ method: string; url: string; key?: string; fault: Fault }> = [];
const hung = new Set<ServerResponse>();

function forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const target = new URL(sandbox.url);
  return new Promise((resolve, reject) => {
    const out = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 500,
            headers: { 'content-type': String(res.headers['content-type'] ?? 'application/json') },
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

beforeAll(async () => {
  sandbox = await startPayoutSandbox({
    apiKey: 'k',
    apiSecret: 's',
    webhookUrl: 'http://127.0.0.1:9/unused',
    webhookSecret: `whsec_${randomBytes(24).toString('base64')}`,
    settleMs: 600_000, // nothing settles (and no webhook is sent) while the test runs
  });
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const fault = script.shift() ?? 'pass';
      const key = req.headers['idempotency-key'];
      seen.push({ method: req.method!, url: req.url!, fault, ...(typeof key === 'string' ? { key } : {}) });
      if (fault === '503') {
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'try later' } }));
        return;
      }
      forward(req, Buffer.concat(chunks)).then(
        (answer) => {
          if (fault === 'hang') {
            hung.add(res);
            return;
          }
          if (fault === 'lost503') {
            res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"BAD_GATEWAY","message":"upstream"}}');
            return;
          }
          res.writeHead(answer.status, answer.headers).end(answer.body);
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterEach(() => {
  for (const res of hung) res.destroy();
  hung.clear();
  script = [];
  seen.length = 0;
});

afterAll(async () => {
  await new Promise<void>((r) => {
    proxy.closeAllConnections();
    proxy.close(() => r());
  });
  await sandbox.stop();
});

const provider = () =>
  new HttpPayoutProvider({ baseUrl: proxyUrl, apiKey: 'k', apiSecret: 's', attempts: 3, backoffMs: 10, timeoutMs: 300 });
const recipient = { phone: '+256772000123', name: 'Joseph Wamala' };
let n = 0;
const freshReference = () => `PAY-2026-0009${String(++n).padStart(2, '0')}-01-A1`;

describe('payout provider 5xx and timeouts (real adapter, real sandbox, fault proxy)', () => {
  it('two 503s then an answer: the order is created once, on the third attempt', async () => {
    script = ['503', '503', 'pass'];
    const before = sandbox.stats().ordersCreated;
    const reference = freshReference();

    const order = await provider().createOrder({ reference, amount_usd_micro: 10_000_000, recipient });

    expect(order).toMatchObject({ reference, status: 'PENDING', amount_usd_micro: 10_000_000 });
    expect(seen.map((s) => s.fault)).toEqual(['503', '503', 'pass']);
    expect(sandbox.stats().ordersCreated - before).toBe(1);
  });

  it('a timeout after the provider created the order: the retry (same Idempotency-Key) gets that order, not a second one', async () => {
    script = ['hang', 'pass'];
    const before = sandbox.stats().ordersCreated;
    const reference = freshReference();

    const order = await provider().createOrder({ reference, amount_usd_micro: 10_000_000, recipient });

    expect(seen).toHaveLength(2);
    expect(seen.map((s) => s.key)).toEqual([reference, reference]);
    expect(sandbox.stats().ordersCreated - before).toBe(1);
    expect(await provider().findOrderByReference(reference)).toMatchObject({ order_id: order.order_id });
  });

  it('answers lost three times (timeout, 503, 503): ProviderUnavailableError after 3 attempts, and still only one order at the provider', async () => {
    script = ['hang', 'lost503', 'lost503'];
    const before = sandbox.stats().ordersCreated;
    const reference = freshReference();

    await expect(provider().createOrder({ reference, amount_usd_micro: 10_000_000, recipient })).rejects.toBeInstanceOf(
      ProviderUnavailableError,
    );

    expect(seen).toHaveLength(3);
    expect(sandbox.stats().ordersCreated - before).toBe(1);
    // The order exists although the client was told "unavailable": it is found by its reference.
    expect(await provider().findOrderByReference(reference)).toMatchObject({ reference, status: 'PENDING' });
  });

  it('a look-up that times out once is retried and answers', async () => {
    const reference = freshReference();
    await provider().createOrder({ reference, amount_usd_micro: 10_000_000, recipient });
    script = ['hang', 'pass'];
    expect(await provider().findOrderByReference(reference)).toMatchObject({ reference });
    expect(await provider().findOrderByReference(`${reference}-none`)).toBeNull();
  });

  it('503 on every attempt: ProviderUnavailableError, nothing created', async () => {
    script = ['503', '503', '503'];
    const before = sandbox.stats().ordersCreated;
    await expect(provider().createOrder({ reference: freshReference(), amount_usd_micro: 10_000_000, recipient })).rejects.toBeInstanceOf(
      ProviderUnavailableError,
    );
    expect(sandbox.stats().ordersCreated - before).toBe(0);
  });
});
