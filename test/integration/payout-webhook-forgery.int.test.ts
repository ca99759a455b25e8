import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { DEV_PAYOUT_WEBHOOK_SECRET, DEV_PROVIDER_CREDENTIALS } from '../../infra/local/dev-keys';
import { SANDBOX_TEST_PHONES, startPayoutSandbox } from '../../infra/local/payout-sandbox';
import { HttpPayoutOrderReader } from '../../shared/adapters/payout-provider/http-order-reader';
import { HttpPayoutProvider } from '../../shared/adapters/payout-provider/http-payout-provider';
import { ProviderUnavailableError } from '../../shared/domain/errors';
import type { ProviderOrder, SettlementFacts } from '../../shared/domain/ports/payouts';
import { applyPayoutWebhook, type PayoutProviderEvent } from '../../shared/use-cases/payout-webhook';
import { aPayout, fakePayoutStore, fakePayoutWorkflow, fakeWebhookReceiptStore } from '../unit/support/fakes';
import { api, stackDataDir, stackUrl, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Issue 9 defect 4 on the local stack: a correctly signed `order.settled` naming another order id,
 * 1 UGX, rate 0.1 and a 1999 settlement time used to be APPLIED and stored, after which the
 * provider's real webhook was ignored. Now the event is confirmed with the provider's order first:
 * the forgery is acknowledged 200 MISMATCH and nothing is stored, and the genuine settlement then
 * completes the payout with the provider's values.
 */

const hook = new Webhook(process.env.PAYOUT_WEBHOOK_SECRET || DEV_PAYOUT_WEBHOOK_SECRET);

/** Posts `body` to the payout webhook, signed as the payout provider would sign it. */
async function sendPayoutEvent(body: unknown, id = `msg_forged_${randomBytes(8).toString('hex')}`) {
  const raw = JSON.stringify(body);
  const at = new Date();
  const res = await fetch(`${stackUrl()}/api/webhooks/payout-provider`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': hook.sign(id, at, raw),
    },
    body: raw,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('forged payout settlements (issue 9 defect 4)', () => {
  let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
  let provider: HttpPayoutOrderReader;
  beforeAll(async () => {
    ctx = await setUpCooperative();
    const stack = JSON.parse(readFileSync(join(stackDataDir(), 'stack.json'), 'utf8')) as { endpoints: Record<string, string> };
    provider = new HttpPayoutOrderReader({
      baseUrl: stack.endpoints.payout_sandbox!,
      ...{ apiKey: DEV_PROVIDER_CREDENTIALS.api_key, apiSecret: DEV_PROVIDER_CREDENTIALS.api_secret },
    });
  });

  it('stores nothing from a forged signed settlement; the genuine one then completes the payout with the real values', async () => {
    // Prepare: a real payout whose order the provider settles without sending its webhook
    // (sandbox phone +256700000003), so the payout is PROCESSING while the order is SETTLED.
    const farmer = await registerFarmer(ctx.id, ctx.coop, SANDBOX_TEST_PHONES.NO_WEBHOOK);
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    const batchId = submit.body.data.batch_id;
    const list = await waitFor(
      () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop }),
      (r) => r.body.payments?.length > 0,
      10_000,
    );
    const payoutId: string = list.body.payments[0].payment_id;
    const reference = `${payoutId}-A1`;
    const settled = await waitFor(
      () => provider.findOrderByReference(reference),
      (o) => o?.status === 'SETTLED',
      5_000,
      25,
    );
    const order = settled as ProviderOrder;
    expect(order.status).toBe('SETTLED');
    const before = await api('GET', `/payments/${payoutId}`, { token: ctx.coop });
    expect(before.body.status).toBe('PROCESSING');
    const auditBefore = (await api('GET', `/batch/${batchId}`, { token: ctx.coop })).body.audit_log_length;

    // Act 1: the reported forgery, then one naming the real order with made-up numbers, then a replay
    const forgedId = `msg_forged_${randomBytes(8).toString('hex')}`;
    const forged = {
      type: 'order.settled',
      data: {
        order_id: 'ord_forged',
        reference,
        amount_ugx: 1,
        exchange_rate: '0.1',
        mobile_money_transaction_id: 'MPFAKE',
        settled_at: '1999-01-01T00:00:00.000Z',
        failure_reason: null,
      },
    };
    const first = await sendPayoutEvent(forged, forgedId);
    const realOrderFakeNumbers = await sendPayoutEvent({ type: 'order.settled', data: { ...forged.data, order_id: order.order_id } });
    const forgedFailure = await sendPayoutEvent({
      type: 'order.failed',
      data: { order_id: order.order_id, reference, failure_reason: 'forged failure' },
    });
    const replay = await sendPayoutEvent(forged, forgedId);

    // Assess 1: acknowledged without a retry signal, and nothing stored
    expect([first.status, first.body.outcome]).toEqual([200, 'MISMATCH']);
    expect([realOrderFakeNumbers.status, realOrderFakeNumbers.body.outcome]).toEqual([200, 'MISMATCH']);
    expect([forgedFailure.status, forgedFailure.body.outcome]).toEqual([200, 'MISMATCH']);
    expect([replay.status, replay.body.outcome]).toEqual([200, 'DUPLICATE_WEBHOOK']);
    const after = await api('GET', `/payments/${payoutId}`, { token: ctx.coop });
    expect(after.body).toMatchObject({
      status: 'PROCESSING',
      amount_ugx: before.body.amount_ugx,
      exchange_rate: before.body.exchange_rate,
      settled_at: null,
      mobile_money_transaction_id: null,
      retry_count: 0,
    });
    expect((await api('GET', `/batch/${batchId}`, { token: ctx.coop })).body.audit_log_length).toBe(auditBefore);

    // Act 2: the provider's genuine webhook (as the sandbox sends it)
    const genuine = await sendPayoutEvent(
      {
        type: 'order.settled',
        data: {
          order_id: order.order_id,
          reference,
          amount_ugx: order.amount_ugx,
          exchange_rate: order.exchange_rate,
          mobile_money_transaction_id: order.mobile_money_transaction_id,
          settled_at: order.settled_at,
          failure_reason: null,
        },
      },
      `msg_real_${randomBytes(8).toString('hex')}`,
    );

    // Assess 2: the payout completes with the provider's values (the reconciler may have got there
    // first from the same provider answer: then the genuine webhook is IGNORED, values the same)
    expect(genuine.status).toBe(200);
    expect(['APPLIED', 'IGNORED']).toContain(genuine.body.outcome);
    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      10_000,
    );
    expect(done.body).toMatchObject({
      status: 'COMPLETED',
      provider_order_id: order.order_id,
      amount_ugx: order.amount_ugx,
      exchange_rate: Number(order.exchange_rate),
      mobile_money_transaction_id: order.mobile_money_transaction_id,
      settled_at: order.settled_at,
    });
    const batch = await waitFor(
      () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
      (r) => r.body.payment_status === 'PAYMENT_CONFIRMED',
      10_000,
    );
    expect(batch.body.payment_status).toBe('PAYMENT_CONFIRMED');
  });

  it('reads the order with one attempt and reports an unreachable provider as ProviderUnavailableError', async () => {
    const down = new HttpPayoutOrderReader({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's', timeoutMs: 1000 });
    await expect(down.findOrderByReference('PAY-2026-000001-01-A1')).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(provider.findOrderByReference('PAY-2026-999999-01-A1')).resolves.toBeNull();
  });
});

describe("the provider's genuine webhooks are confirmed (sandbox webhook body against the sandbox order, as read)", () => {
  it('applies what the sandbox sends for a settled order, with the values it reads back', async () => {
    const received: PayoutProviderEvent[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as PayoutProviderEvent);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const creds = { apiKey: 'k_genuine', apiSecret: 's_genuine' };
    const sandbox = await startPayoutSandbox({
      ...creds,
      webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
      settleMs: 30,
      webhookSecret: `whsec_${Buffer.from('genuine-webhook-secret-32-bytes!').toString('base64')}`,
    });
    try {
      const payout = aPayout({ status: 'PROCESSING', amount_usd_micro: 12_345_678 });
      const reference = `${payout.payment_id}-A1`;
      const created = await new HttpPayoutProvider({ baseUrl: sandbox.url, ...creds }).createOrder({
        reference,
        amount_usd_micro: payout.amount_usd_micro,
        recipient: { phone: '+256772000123', name: 'Joseph Wamala' },
      });
      const event = await waitFor(
        async () => received[0],
        (e) => e !== undefined,
        5_000,
        10,
      );
      expect(event?.type).toBe('order.settled');
      const settlements: SettlementFacts[] = [];
      const r = await applyPayoutWebhook(
        {
          now: () => new Date(),
          payouts: fakePayoutStore({
            get: async () => ({ ...payout, provider_order_id: created.order_id }),
            recordSettlement: async (_p, s) => {
              settlements.push(s);
              return 'APPLIED';
            },
          }),
          provider: new HttpPayoutOrderReader({ baseUrl: sandbox.url, ...creds }),
          receipts: fakeWebhookReceiptStore({ hasWebhook: async () => false }),
          workflow: fakePayoutWorkflow(),
        },
        { webhookId: 'msg_genuine', event: event! },
      );
      expect(r.outcome).toBe('APPLIED');
      expect(settlements).toEqual([
        {
          attempt: 1,
          order_id: created.order_id,
          amount_ugx: event!.data.amount_ugx,
          exchange_rate: String(event!.data.exchange_rate),
          mobile_money_transaction_id: event!.data.mobile_money_transaction_id,
          settled_at: event!.data.settled_at,
        },
      ]);
    } finally {
      await sandbox.stop();
      receiver.closeAllConnections();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
