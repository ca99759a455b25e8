import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { HttpOnRamp } from '../../shared/adapters/onramp/http-onramp';
import { ProviderRejectedError, ProviderUnavailableError } from '../../shared/domain/errors';
import {
  DEV_ONRAMP_CREDENTIALS,
  DEV_ONRAMP_WEBHOOK_SECRET,
  sandboxUsdcMicro,
  startOnRampSandbox,
  type OnRampSandbox,
} from '../../infra/local/onramp-sandbox';

const DEST = '0x2222222222222222222222222222222222222222' as const;

/** A receiver that verifies each webhook's Standard Webhooks signature and keeps the events. */
async function receiver() {
  const events: Array<{ type: string; data: Record<string, unknown> }> = [];
  const wh = new Webhook(DEV_ONRAMP_WEBHOOK_SECRET);
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      try {
        events.push(wh.verify(body, req.headers as Record<string, string>) as never);
        res.writeHead(200).end('{}');
      } catch {
        res.writeHead(401).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    events,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const waitFor = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('HttpOnRamp against the local on-ramp sandbox', () => {
  let sandbox: OnRampSandbox;
  let hook: Awaited<ReturnType<typeof receiver>>;
  const deliveries: Array<[string, bigint]> = [];
  let ramp: HttpOnRamp;

  beforeAll(async () => {
    hook = await receiver();
    sandbox = await startOnRampSandbox({
      apiKey: DEV_ONRAMP_CREDENTIALS.api_key,
      apiSecret: DEV_ONRAMP_CREDENTIALS.api_secret,
      webhookUrl: hook.url,
      webhookSecret: DEV_ONRAMP_WEBHOOK_SECRET,
      settleMs: 100,
      reverseMs: 100,
      deliverUsdc: async (to, amount) => {
        deliveries.push([to, amount]);
        return `0x${String(deliveries.length).padStart(64, '0')}`;
      },
    });
    ramp = new HttpOnRamp({
      baseUrl: sandbox.url,
      apiKey: DEV_ONRAMP_CREDENTIALS.api_key,
      apiSecret: DEV_ONRAMP_CREDENTIALS.api_secret,
      attempts: 2,
      backoffMs: 10,
      timeoutMs: 2000,
    });
  });
  afterAll(async () => {
    await sandbox.stop();
    await hook.close();
  });

  it('creates one order per reference, delivers USDC at the sandbox rate and sends a signed completion', async () => {
    const input = { reference: 'DEP-2026-000001', source_currency: 'UGX', source_amount: 370_000, destination_address: DEST };
    const first = await ramp.createOrder(input);
    expect(first).toMatchObject({
      reference: 'DEP-2026-000001',
      status: 'PENDING',
      source_currency: 'UGX',
      source_amount: 370_000,
      usdc_amount_usd_micro: 0,
      destination_address: DEST,
    });
    const again = await ramp.createOrder(input);
    expect(again.ramp_payment_id).toBe(first.ramp_payment_id);
    expect(sandbox.stats().ordersCreated).toBe(1);

    await waitFor(() => hook.events.some((e) => e.data.reference === 'DEP-2026-000001'));
    expect(deliveries).toEqual([[DEST, 100_000_000n]]);
    const done = await ramp.getOrder(first.ramp_payment_id);
    expect(done).toMatchObject({ status: 'COMPLETED', usdc_amount_usd_micro: 100_000_000, transfer_tx_hash: `0x${'1'.padStart(64, '0')}` });
    expect(hook.events.find((e) => e.data.reference === 'DEP-2026-000001')).toMatchObject({
      type: 'onramp.order.completed',
      data: {
        ramp_payment_id: first.ramp_payment_id,
        usdc_amount: '100',
        source_amount: 370_000,
        transfer_tx_hash: done!.transfer_tx_hash,
      },
    });
  });

  it('an amount ending in 13 completes, then is reversed', async () => {
    const o = await ramp.createOrder({
      reference: 'DEP-2026-000002',
      source_currency: 'KES',
      source_amount: 1_290_013,
      destination_address: DEST,
    });
    await waitFor(() => hook.events.some((e) => e.data.reference === 'DEP-2026-000002' && e.type === 'onramp.order.reversed'));
    expect(hook.events.filter((e) => e.data.reference === 'DEP-2026-000002').map((e) => e.type)).toEqual([
      'onramp.order.completed',
      'onramp.order.reversed',
    ]);
    expect(await ramp.getOrder(o.ramp_payment_id)).toMatchObject({
      status: 'REVERSED',
      usdc_amount_usd_micro: Number(sandboxUsdcMicro('KES', 1_290_013)),
      reversed_at: expect.any(String),
    });
    expect(sandboxUsdcMicro('KES', 1_290_013)).toBe(10_000_100_775n);
  });

  it('unknown order: null; unsupported currency: ProviderRejectedError; wrong credentials: ProviderRejectedError (401)', async () => {
    await expect(ramp.getOrder('ramp_nope')).resolves.toBeNull();
    await expect(
      ramp.createOrder({ reference: 'DEP-2026-000003', source_currency: 'EUR', source_amount: 10, destination_address: DEST }),
    ).rejects.toThrow(/UNSUPPORTED_CURRENCY/);
    const wrong = new HttpOnRamp({ baseUrl: sandbox.url, apiKey: DEV_ONRAMP_CREDENTIALS.api_key, apiSecret: 'not-the-secret' });
    await expect(wrong.getOrder('x')).rejects.toBeInstanceOf(ProviderRejectedError);
    await expect(wrong.getOrder('x')).rejects.toThrow(/INVALID_SIGNATURE/);
  });

  it('unreachable: ProviderUnavailableError after the attempts', async () => {
    const down = new HttpOnRamp({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's', attempts: 2, backoffMs: 1, timeoutMs: 500 });
    await expect(down.getOrder('x')).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});
