/**
 * HttpPayoutProvider against the local payout sandbox, with a local webhook receiver that verifies
 * the Standard Webhooks signatures. Self-contained: does not rely on the int project's globalSetup.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { HttpPayoutProvider } from '../../shared/adapters/payout-provider/http-payout-provider';
import { signProviderRequest } from '../../shared/adapters/payout-provider/signing';
import { ProviderRejectedError, ProviderUnavailableError } from '../../shared/domain/errors';
import type { ProviderOrder } from '../../shared/domain/ports/payouts';
import { startPayoutSandbox, type PayoutSandbox, type PayoutSandboxOptions } from '../../infra/local/payout-sandbox';

const API_KEY = 'pk_test_sandbox';
const API_SECRET = 'sk_test_sandbox_secret';
const WEBHOOK_SECRET = `whsec_${Buffer.from('sandbox-webhook-secret-32-bytes!').toString('base64')}`;
const SETTLE_MS = 50;

interface ReceivedWebhook {
  id: string;
  type: 'order.settled' | 'order.failed';
  data: {
    order_id: string;
    reference: string;
    amount_ugx: number;
    exchange_rate: string;
    mobile_money_transaction_id: string | null;
    settled_at: string | null;
    failure_reason: string | null;
  };
}

/** A webhook receiver that verifies every delivery; `failNext(ref, n)` answers 500 n times for a reference. */
class Receiver {
  readonly events: ReceivedWebhook[] = [];
  readonly deliveries: Array<{ id: string; reference: string; status: number }> = [];
  invalid = 0;
  private failures = new Map<string, number>();
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    const verifier = new Webhook(WEBHOOK_SECRET);
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let event: ReceivedWebhook;
        try {
          const payload = verifier.verify(raw, req.headers as Record<string, string>) as Omit<ReceivedWebhook, 'id'>;
          event = { id: String(req.headers['webhook-id']), ...payload };
        } catch {
          this.invalid++;
          res.writeHead(401).end();
          return;
        }
        const left = this.failures.get(event.data.reference) ?? 0;
        const status = left > 0 ? 500 : 204;
        if (left > 0) this.failures.set(event.data.reference, left - 1);
        this.deliveries.push({ id: event.id, reference: event.data.reference, status });
        if (status === 204) this.events.push(event);
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/webhooks/payout-provider`;
  }

  failNext(reference: string, times: number): void {
    this.failures.set(reference, times);
  }

  forReference(reference: string): ReceivedWebhook[] {
    return this.events.filter((e) => e.data.reference === reference);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 3000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stub HTTP server for transport-level behaviours the sandbox does not fake (5xx, 429, hangs). */
async function stubServer(
  handler: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server = createServer((req, res) => {
    n++;
    req.resume();
    req.on('end', () => handler(req, res, n));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => n,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let seq = 0;
const ref = (tag: string) => `PAY-2025-${String(++seq).padStart(6, '0')}-01-A1-${tag}`;
const order = (reference: string, phone = '+256772123456', amount_usd_micro = 12_500_000) => ({
  reference,
  amount_usd_micro,
  recipient: { phone, name: 'Nakato Sarah' },
});

describe('payout sandbox + HttpPayoutProvider', () => {
  const receiver = new Receiver();
  const extraSandboxes: PayoutSandbox[] = [];
  let sandbox: PayoutSandbox;
  let provider: HttpPayoutProvider;

  const startExtra = async (over: Partial<PayoutSandboxOptions> = {}) => {
    const s = await startPayoutSandbox({
      apiKey: API_KEY,
      apiSecret: API_SECRET,
      webhookUrl: () => receiver.url,
      webhookSecret: WEBHOOK_SECRET,
      settleMs: SETTLE_MS,
      ...over,
    });
    extraSandboxes.push(s);
    return s;
  };

  beforeAll(async () => {
    await receiver.start();
    sandbox = await startPayoutSandbox({
      port: 0,
      apiKey: API_KEY,
      apiSecret: API_SECRET,
      webhookUrl: () => receiver.url,
      webhookSecret: WEBHOOK_SECRET,
      settleMs: SETTLE_MS,
    });
    provider = new HttpPayoutProvider({ baseUrl: sandbox.url, apiKey: API_KEY, apiSecret: API_SECRET, backoffMs: 20 });
  });

  afterAll(async () => {
    await sandbox?.stop();
    for (const s of extraSandboxes) await s.stop();
    await receiver.stop();
  });

  describe('quotes', () => {
    it('quotes the USD side at the sandbox rate', async () => {
      const q = await provider.quote({ amount_usd_micro: 12_500_000 });
      expect(q.rate).toBe('3700.25');
      expect(q.quote_id).toMatch(/^qt_/);
      expect(q.amount_usd_micro).toBe(12_500_000);
      expect(q.amount_ugx).toBe(46_253); // floor(12.5 × 3700.25 = 46253.125)
      const ttl = Date.parse(q.expires_at) - Date.now();
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    });

    it('quotes the UGX side: the USD (rounded up to micro-USD) buys at least the target', async () => {
      const q = await provider.quote({ amount_ugx: 100_000 });
      expect(q.amount_ugx).toBe(100_000);
      expect(q.amount_usd_micro).toBe(27_025_201); // ceil6(100000 / 3700.25 = 27.02520099…); × rate = 100000.00000025
    });

    it('gives the bare rate without amounts; refuses both amounts locally', async () => {
      const q = await provider.quote({});
      expect(q.rate).toBe('3700.25');
      expect(q.amount_ugx).toBeUndefined();
      await expect(provider.quote({ amount_ugx: 1, amount_usd_micro: 1 })).rejects.toThrow(RangeError);
    });
  });

  describe('orders', () => {
    it('creates an order: micro-USD ↔ decimal, floor UGX, PENDING', async () => {
      const reference = ref('create');
      const o = await provider.createOrder({ ...order(reference, '+256772123456', 1_000_001) });
      expect(o).toMatchObject({
        reference,
        status: 'PENDING',
        amount_usd_micro: 1_000_001,
        amount_ugx: 3700,
        exchange_rate: '3700.25',
        recipient: { phone: '+256772123456', name: 'Nakato Sarah' },
      });
      expect(o.order_id).toMatch(/^ord_/);
      expect(Number.isNaN(Date.parse(o.created_at))).toBe(false);
    });

    it('uses the rate of a given quote; rejects an unknown quote', async () => {
      const q = await provider.quote({ amount_usd_micro: 2_000_000 });
      const o = await provider.createOrder({ ...order(ref('quoted')), amount_usd_micro: 2_000_000, quote_id: q.quote_id });
      expect(o.amount_ugx).toBe(q.amount_ugx);
      const err = await provider.createOrder({ ...order(ref('noquote')), quote_id: 'qt_nope' }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderRejectedError);
      expect((err as ProviderRejectedError).reason).toMatch(/^QUOTE_NOT_FOUND/);
    });

    it('is idempotent by reference: the same reference twice gives the same order', async () => {
      const reference = ref('idem');
      const before = sandbox.stats().ordersCreated;
      const a = await provider.createOrder(order(reference));
      const b = await provider.createOrder(order(reference));
      expect(b.order_id).toBe(a.order_id);
      expect(sandbox.stats().ordersCreated - before).toBe(1);
    });

    it('20 concurrent identical creates make exactly one order', async () => {
      const reference = ref('concurrent');
      const before = sandbox.stats().ordersCreated;
      const all = await Promise.all(Array.from({ length: 20 }, () => provider.createOrder(order(reference))));
      expect(new Set(all.map((o) => o.order_id)).size).toBe(1);
      expect(sandbox.stats().ordersCreated - before).toBe(1);
      await waitFor('settlement', () => sandbox.stats().settledPerReference[reference]);
      expect(sandbox.stats().settledPerReference[reference]).toBe(1);
    });

    it('settles: verified order.settled webhook, GET shows SETTLED', async () => {
      const reference = ref('settle');
      const created = await provider.createOrder(order(reference));
      const [event] = await waitFor('order.settled', () =>
        receiver.forReference(reference).length ? receiver.forReference(reference) : undefined,
      );
      expect(event).toMatchObject({
        type: 'order.settled',
        data: { order_id: created.order_id, reference, amount_ugx: 46_253, exchange_rate: '3700.25', failure_reason: null },
      });
      expect(event!.id).toMatch(/^msg_/);
      expect(event!.data.mobile_money_transaction_id).toMatch(/^MP\d{10}$/);
      const got = (await provider.getOrder(created.order_id)) as ProviderOrder;
      expect(got).toMatchObject({
        status: 'SETTLED',
        mobile_money_transaction_id: event!.data.mobile_money_transaction_id,
        settled_at: event!.data.settled_at,
      });
      expect(got.failure).toBeUndefined();
      expect(await provider.findOrderByReference(reference)).toEqual(got);
      expect(receiver.invalid).toBe(0);
    });

    it('retries a webhook the receiver did not acknowledge, with the same webhook-id', async () => {
      const reference = ref('whretry');
      receiver.failNext(reference, 2);
      await provider.createOrder(order(reference));
      await waitFor('delivery', () => (receiver.forReference(reference).length ? true : undefined));
      const tries = receiver.deliveries.filter((d) => d.reference === reference);
      expect(tries.map((d) => d.status)).toEqual([500, 500, 204]);
      expect(new Set(tries.map((d) => d.id)).size).toBe(1);
    });

    it('answers an invalid body 400 VALIDATION_ERROR with every problem as {path, message}', async () => {
      const post = async (path: string, body: unknown, extra: Record<string, string> = {}) => {
        const text = JSON.stringify(body);
        const res = await fetch(sandbox.url + path, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${API_KEY}`,
            'Content-Type': 'application/json',
            ...extra,
            ...signProviderRequest({ secret: API_SECRET, method: 'POST', path, body: text }),
          },
          body: text,
        });
        return {
          status: res.status,
          error: ((await res.json()) as { error: { code: string; message: string; details?: Array<{ path: string; message: string }> } })
            .error,
        };
      };
      const before = sandbox.stats().ordersCreated;
      const bad = await post(
        '/v1/orders',
        {
          reference: 'PAY-BAD-1',
          extra: 1,
          deposit: { channel: 'CARD', amount: '1.1234567' },
          payout: [],
          recipient: { phone: '+254712345678' },
        },
        { 'Idempotency-Key': 'PAY-OTHER' },
      );
      expect(bad.status).toBe(400);
      expect(bad.error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'The request body is invalid.' });
      expect(bad.error.details).toEqual(
        expect.arrayContaining([
          { path: 'extra', message: 'unknown field' },
          { path: 'deposit.channel', message: 'must be "MERCHANT_BALANCE"' },
          { path: 'deposit.currency', message: 'required' },
          { path: 'deposit.amount', message: 'must be a positive decimal string with at most 6 decimals' },
          { path: 'payout', message: 'must be an object' },
          { path: 'recipient.phone', message: 'must be a Ugandan mobile number in E.164 (+256XXXXXXXXX)' },
          { path: 'recipient.name', message: 'required: 1-140 characters' },
          { path: 'headers.idempotency-key', message: 'must equal reference' },
        ]),
      );
      expect(bad.error.details).toHaveLength(8);
      expect(sandbox.stats().ordersCreated).toBe(before);

      const both = await post('/v1/quotes', { source_currency: 'USD', target_currency: 'EUR', source_amount: '1', target_amount: '3700' });
      expect(both.status).toBe(400);
      expect(both.error.details).toEqual(
        expect.arrayContaining([
          { path: 'target_currency', message: 'must be "UGX"' },
          { path: 'target_amount', message: 'give source_amount or target_amount, not both' },
        ]),
      );
      expect(both.error.details).toHaveLength(2);
      const notObject = await post('/v1/quotes', [1]);
      expect([notObject.status, notObject.error.code, notObject.error.message]).toEqual([
        400,
        'VALIDATION_ERROR',
        'The body must be a JSON object.',
      ]);
    });

    it('unknown order id or reference → null', async () => {
      expect(await provider.getOrder('ord_does_not_exist')).toBeNull();
      expect(await provider.findOrderByReference('PAY-NOPE')).toBeNull();
    });

    it('rejects an invalid recipient phone (400 VALIDATION_ERROR) without retrying', async () => {
      const before = sandbox.stats().requests;
      const err = await provider.createOrder(order(ref('badphone'), '+254712345678')).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderRejectedError);
      expect((err as ProviderRejectedError).reason).toMatch(/^VALIDATION_ERROR/);
      expect(sandbox.stats().requests - before).toBe(1);
    });
  });

  describe('merchant balance (docs/operations.md#merchant-balance-alarm)', () => {
    it('GET /v1/balances: USD in micro-USD; falls by each settled deposit, not by a failed one; PUT /v1/sandbox/balance sets it', async () => {
      const own = await startExtra({ balanceUsd: '100.5' });
      const p = new HttpPayoutProvider({ baseUrl: own.url, apiKey: API_KEY, apiSecret: API_SECRET });
      expect(await p.merchantBalance()).toEqual([{ currency: 'USD', amount_minor: 100_500_000 }]);
      const settled = ref('bal1');
      const failed = ref('bal2');
      await p.createOrder(order(settled, '+256772123456', 12_500_000));
      await p.createOrder(order(failed, '+256700000001', 7_000_000));
      await waitFor('both final', async () => {
        const a = await p.findOrderByReference(settled);
        const b = await p.findOrderByReference(failed);
        return a?.status === 'SETTLED' && b?.status === 'FAILED' ? true : undefined;
      });
      expect(await p.merchantBalance()).toEqual([{ currency: 'USD', amount_minor: 88_000_000 }]);
      expect(own.balance()).toBe('88');
      const put = await fetch(`${own.url}/v1/sandbox/balance`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '3.25' }),
      });
      expect(put.status).toBe(200);
      expect(await p.merchantBalance()).toEqual([{ currency: 'USD', amount_minor: 3_250_000 }]);
      const bad = await fetch(`${own.url}/v1/sandbox/balance`, { method: 'PUT', body: JSON.stringify({ amount: 'lots' }) });
      expect(bad.status).toBe(400);
      // the balance is behind the API key like every provider call
      expect((await fetch(`${own.url}/v1/balances`)).status).toBe(401);
    });
  });

  describe('test phones', () => {
    it('+256700000001: every order fails (order.failed, GET FAILED)', async () => {
      for (const tag of ['f1', 'f2']) {
        const reference = ref(tag);
        const created = await provider.createOrder(order(reference, '+256700000001'));
        const [event] = await waitFor('order.failed', () =>
          receiver.forReference(reference).length ? receiver.forReference(reference) : undefined,
        );
        expect(event).toMatchObject({
          type: 'order.failed',
          data: { order_id: created.order_id, mobile_money_transaction_id: null, settled_at: null },
        });
        expect(event!.data.failure_reason).toEqual(expect.any(String));
        const got = await provider.getOrder(created.order_id);
        expect(got).toMatchObject({ status: 'FAILED', failure: { reason: 'PROVIDER_ERROR', detail: event!.data.failure_reason } });
      }
    });

    it('+256700000008: not a wallet (lookup found: false; an order fails with INVALID_MSISDN); +256700000005: another holder', async () => {
      expect(await provider.lookupAccountHolder('+256700000008')).toEqual({ found: false });
      expect(await provider.lookupAccountHolder('+256700000005')).toEqual({ found: true, name: 'Grace Nakato Ssemwogerere' });
      expect(await provider.lookupAccountHolder('+256772000123')).toEqual({ found: true, name: null });
      const reference = ref('msisdn');
      const created = await provider.createOrder(order(reference, '+256700000008'));
      await waitFor('order.failed', () => (receiver.forReference(reference).length ? receiver.forReference(reference) : undefined));
      const got = await provider.getOrder(created.order_id);
      expect(got).toMatchObject({ status: 'FAILED', failure: { reason: 'INVALID_MSISDN' } });
    });

    it('+256700000002: the first order fails, the next settles', async () => {
      const first = ref('p2a');
      const second = ref('p2b');
      await provider.createOrder(order(first, '+256700000002'));
      const [e1] = await waitFor('first', () => (receiver.forReference(first).length ? receiver.forReference(first) : undefined));
      expect(e1!.type).toBe('order.failed');
      await provider.createOrder(order(second, '+256700000002'));
      const [e2] = await waitFor('second', () => (receiver.forReference(second).length ? receiver.forReference(second) : undefined));
      expect(e2!.type).toBe('order.settled');
    });

    it('+256700000003: settles but no webhook; GET shows SETTLED', async () => {
      const reference = ref('p3');
      const created = await provider.createOrder(order(reference, '+256700000003'));
      const settled = await waitFor('SETTLED', async () => {
        const o = await provider.getOrder(created.order_id);
        return o?.status === 'SETTLED' ? o : undefined;
      });
      expect(settled.mobile_money_transaction_id).toMatch(/^MP\d+$/);
      await sleep(SETTLE_MS * 4);
      expect(receiver.forReference(reference)).toHaveLength(0);
      expect(receiver.deliveries.filter((d) => d.reference === reference)).toHaveLength(0);
    });

    it('+256700000004: unreachable → ProviderUnavailableError after exactly 3 attempts', async () => {
      const s = await startExtra();
      const p = new HttpPayoutProvider({ baseUrl: s.url, apiKey: API_KEY, apiSecret: API_SECRET });
      const t0 = Date.now();
      const err = await p.createOrder(order(ref('p4'), '+256700000004')).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderUnavailableError);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(200 + 400); // default backoff 200 ms, doubling
      expect(s.stats()).toMatchObject({ connections: 3, requests: 3, unreachableDrops: 3, ordersCreated: 0 });
    });
  });

  describe('auth and transport', () => {
    it('wrong api secret → ProviderRejectedError (401), not retried', async () => {
      const before = sandbox.stats().requests;
      const p = new HttpPayoutProvider({ baseUrl: sandbox.url, apiKey: API_KEY, apiSecret: 'sk_wrong', backoffMs: 1 });
      const err = await p.createOrder(order(ref('badsecret'))).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderRejectedError);
      expect((err as ProviderRejectedError).reason).toMatch(/^INVALID_SIGNATURE/);
      expect(sandbox.stats().requests - before).toBe(1);
      const err2 = await new HttpPayoutProvider({ baseUrl: sandbox.url, apiKey: 'pk_wrong', apiSecret: API_SECRET })
        .getOrder('x')
        .catch((e) => e);
      expect((err2 as ProviderRejectedError).reason).toMatch(/^UNAUTHORIZED/);
    });

    it('the sandbox refuses stale or unsigned requests', async () => {
      const path = '/v1/orders?reference=x';
      const stale = signProviderRequest({ secret: API_SECRET, method: 'GET', path, timestamp: Math.floor(Date.now() / 1000) - 301 });
      const res = await fetch(sandbox.url + path, { headers: { Authorization: `Bearer ${API_KEY}`, ...stale } });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_SIGNATURE');
      const unsigned = await fetch(sandbox.url + path, { headers: { Authorization: `Bearer ${API_KEY}` } });
      expect(unsigned.status).toBe(401);
      await unsigned.arrayBuffer();
    });

    it('a closed port → ProviderUnavailableError', async () => {
      const probe = await stubServer(() => {});
      const url = probe.url;
      await probe.close();
      const p = new HttpPayoutProvider({ baseUrl: url, apiKey: API_KEY, apiSecret: API_SECRET, backoffMs: 5 });
      const err = await p.quote({}).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderUnavailableError);
      expect((err as Error).message).toMatch(/ECONNREFUSED/);
    });

    it('timeouts: a provider that never answers → ProviderUnavailableError after 3 timed-out attempts', async () => {
      const hang = await stubServer(() => {
        /* never answers */
      });
      try {
        const p = new HttpPayoutProvider({ baseUrl: hang.url, apiKey: API_KEY, apiSecret: API_SECRET, timeoutMs: 100, backoffMs: 10 });
        const t0 = Date.now();
        const err = await p.getOrder('ord_1').catch((e) => e);
        expect(err).toBeInstanceOf(ProviderUnavailableError);
        expect((err as Error).message).toMatch(/timeout/);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
        expect(hang.requests()).toBe(3);
      } finally {
        await hang.close();
      }
    });

    it('retries 5xx and 429, then succeeds; gives up after `attempts` 5xx', async () => {
      const okOrder = {
        order_id: 'ord_x',
        reference: 'R',
        status: 'SETTLED',
        deposit: { channel: 'MERCHANT_BALANCE', currency: 'USD', amount: '1.5' },
        payout: { channel: 'MOBILE_MONEY', currency: 'UGX', amount: 5550 },
        exchange_rate: '3700.25',
        recipient: { phone: '+256772123456', name: 'N' },
        mobile_money_transaction_id: 'MP1',
        settled_at: '2025-01-01T00:00:00.000Z',
        failure_reason: null,
        created_at: '2025-01-01T00:00:00.000Z',
      };
      const flaky = await stubServer((_req, res, n) => {
        if (n === 1) res.writeHead(503).end();
        else if (n === 2) res.writeHead(429, { 'retry-after': '0' }).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(okOrder));
      });
      const down = await stubServer((_req, res) => res.writeHead(500).end('oops'));
      try {
        const got = await new HttpPayoutProvider({
          baseUrl: flaky.url,
          apiKey: API_KEY,
          apiSecret: API_SECRET,
          backoffMs: 5,
        }).findOrderByReference('R');
        expect(got).toMatchObject({ order_id: 'ord_x', amount_usd_micro: 1_500_000, amount_ugx: 5550, status: 'SETTLED' });
        expect(got!.failure).toBeUndefined();
        expect(flaky.requests()).toBe(3);
        const err = await new HttpPayoutProvider({ baseUrl: down.url, apiKey: API_KEY, apiSecret: API_SECRET, backoffMs: 5, attempts: 4 })
          .getOrder('x')
          .catch((e) => e);
        expect(err).toBeInstanceOf(ProviderUnavailableError);
        expect(down.requests()).toBe(4);
      } finally {
        await flaky.close();
        await down.close();
      }
    });
  });

  describe('faults', () => {
    it('rejectRate → 422 ORDER_REJECTED at once; dropWebhookRate → no webhook but GET SETTLED', async () => {
      let r = 0;
      const s = await startExtra({ faults: { rejectRate: 0.5, dropWebhookRate: 0.5, random: () => r } });
      const p = new HttpPayoutProvider({ baseUrl: s.url, apiKey: API_KEY, apiSecret: API_SECRET, backoffMs: 1 });
      r = 0.1; // < 0.5: reject the order
      const err = await p.createOrder(order(ref('reject'))).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderRejectedError);
      expect((err as ProviderRejectedError).reason).toMatch(/^ORDER_REJECTED/);
      expect(s.stats()).toMatchObject({ requests: 1, ordersRejected: 1, ordersCreated: 0 });
      r = 0.9; // accepted, webhook sent
      const sent = ref('sent');
      await p.createOrder(order(sent));
      await waitFor('webhook', () => (receiver.forReference(sent).length ? true : undefined));
      r = 0.9; // accepted; then the settlement's draw drops the webhook
      const dropped = ref('dropped');
      const o = await p.createOrder(order(dropped));
      r = 0.1;
      await waitFor('SETTLED', async () => ((await p.getOrder(o.order_id))?.status === 'SETTLED' ? true : undefined));
      await sleep(SETTLE_MS * 2);
      expect(receiver.forReference(dropped)).toHaveLength(0);
      expect(s.stats()).toMatchObject({ ordersCreated: 2, ordersSettled: 2, webhooksSent: 1, webhooksDropped: 1 });
    });

    it('stop() cancels pending settlements', async () => {
      const s = await startExtra({ settleMs: 10_000 });
      const p = new HttpPayoutProvider({ baseUrl: s.url, apiKey: API_KEY, apiSecret: API_SECRET });
      await p.createOrder(order(ref('pending')));
      await s.stop();
      expect(s.stats().ordersSettled).toBe(0);
      await expect(p.getOrder('x')).rejects.toBeInstanceOf(ProviderUnavailableError);
    });
  });
});
