import { Webhook } from 'standardwebhooks';
import { DEV_PAYOUT_WEBHOOK_SECRET } from '../../infra/local/dev-keys';
import { api, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Settlement webhooks that arrive twice, late, out of order, unsigned or forged change nothing and
 * raise no error to the provider (docs/api/inbound-webhooks.md#payout-provider-webhook, docs/api/payouts.md#payout-lifecycle): never pay twice, never move a payout back.
 */

const hook = new Webhook(DEV_PAYOUT_WEBHOOK_SECRET);

function signed(body: unknown, id = `msg_test_${Math.random().toString(36).slice(2)}`, at = new Date()) {
  const raw = JSON.stringify(body);
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': hook.sign(id, at, raw),
    },
  };
}

const post = (w: { raw: string; headers: Record<string, string> }) =>
  api('POST', '/api/webhooks/payout-provider', { raw: w.raw, headers: w.headers });

async function completedPayout(ctx: Awaited<ReturnType<typeof setUpCooperative>>, phone: string) {
  const farmer = await registerFarmer(ctx.id, ctx.coop, phone);
  const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
  const batchId = submit.body.data.batch_id;
  const list = await waitFor(
    () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop }),
    (r) => r.body.payments?.length > 0,
    10_000,
  );
  const id = list.body.payments[0].payment_id;
  const done = await waitFor(
    () => api('GET', `/payments/${id}`, { token: ctx.coop }),
    (r) => r.body.status === 'COMPLETED',
    20_000,
  );
  expect(done.body.status).toBe('COMPLETED');
  return { batchId, payout: done.body };
}

describe('payout-provider webhooks', () => {
  let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
  beforeAll(async () => {
    ctx = await setUpCooperative();
  });

  it('rejects a missing, forged or stale signature with 401 INVALID_SIGNATURE', async () => {
    const body = { type: 'order.settled', data: { order_id: 'ord_x', reference: 'PAY-2026-000001-01-A1' } };
    const unsigned = await api('POST', '/api/webhooks/payout-provider', { body });
    expect([unsigned.status, unsigned.body.error.code]).toEqual([401, 'INVALID_SIGNATURE']);
    const forged = signed(body);
    const tampered = await post({ raw: forged.raw.replace('ord_x', 'ord_y'), headers: forged.headers });
    expect([tampered.status, tampered.body.error.code]).toEqual([401, 'INVALID_SIGNATURE']);
    const other = new Webhook(`whsec_${Buffer.from('another secret entirely').toString('base64')}`);
    const raw = JSON.stringify(body);
    const wrongKey = await post({
      raw,
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'm1',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': other.sign('m1', new Date(), raw),
      },
    });
    expect(wrongKey.status).toBe(401);
    const stale = await post(signed(body, 'msg_stale', new Date(Date.now() - 10 * 60 * 1000)));
    expect([stale.status, stale.body.error.code]).toEqual([401, 'INVALID_SIGNATURE']);
  });

  it('ignores a replayed order.settled, an order.failed after settlement and a settlement of a superseded attempt', async () => {
    // Prepare: a payout that settled at its second attempt (+256700000002)
    const { batchId, payout } = await completedPayout(ctx, '+256700000002');
    expect(payout.retry_count).toBe(1);
    const before = await api('GET', `/batch/${batchId}`, { token: ctx.coop });
    const settledA2 = {
      type: 'order.settled',
      data: {
        order_id: payout.provider_order_id,
        reference: `${payout.payment_id}-A2`,
        amount_ugx: payout.amount_ugx + 5000,
        exchange_rate: '9999',
        mobile_money_transaction_id: 'MPREPLAY',
        settled_at: new Date().toISOString(),
        failure_reason: null,
      },
    };
    // Act: replay, failure after settlement, settlement of attempt 1 (superseded), all signed
    const first = signed(settledA2, 'msg_replay_1');
    const results = [
      await post(first),
      await post(first),
      await post(
        signed({
          type: 'order.failed',
          data: { order_id: payout.provider_order_id, reference: `${payout.payment_id}-A2`, failure_reason: 'late failure' },
        }),
      ),
      await post(
        signed({
          type: 'order.settled',
          data: {
            order_id: 'ord_old',
            reference: `${payout.payment_id}-A1`,
            amount_ugx: 1,
            exchange_rate: '1',
            mobile_money_transaction_id: 'MPOLD',
            settled_at: new Date().toISOString(),
          },
        }),
      ),
    ];
    // Assess: acknowledged, and nothing changed
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const after = await api('GET', `/payments/${payout.payment_id}`, { token: ctx.coop });
    expect(after.body).toEqual(payout);
    const batchAfter = await api('GET', `/batch/${batchId}`, { token: ctx.coop });
    expect(batchAfter.body.audit_log_length).toBe(before.body.audit_log_length);
  });

  it('acknowledges a signed webhook about an unknown order without changing anything', async () => {
    const r = await post(
      signed({
        type: 'order.settled',
        data: {
          order_id: 'ord_nobody',
          reference: 'PAY-2026-999999-01-A1',
          amount_ugx: 1,
          exchange_rate: '1',
          mobile_money_transaction_id: 'x',
          settled_at: new Date().toISOString(),
        },
      }),
    );
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe('UNKNOWN_REFERENCE');
  });

  it('answers a signed but malformed body with 400 and the envelope', async () => {
    const r = await post(signed({ type: 'order.refunded', data: {} }));
    expect([r.status, r.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});
