import { api, notifications, token, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Money controls through the API on the local stack (docs/api/settlement.md#money-controls): manual payouts
 * need ADMIN or a COOPERATIVE MANAGER and stay within the batch's value and the cooperative's
 * daily cap (also when requests race); a farmer's payout phone is changed only by ADMIN or a
 * MANAGER, audited and notified to the manager and the old number; AGENT tokens read the audit
 * log without amounts, phone numbers and transaction ids.
 *
 * The payout sandbox quotes 3700.25 UGX per USDC, so at the cooperative's prices a 120 kg
 * screen18 batch is worth 120 × (9800 + 400) = 1,224,000 UGX (about 331 USDC), of which the
 * automatic net coffee payment takes 1,176,000 UGX.
 */

type Ctx = Awaited<ReturnType<typeof setUpCooperative>>;

const managerOf = (ctx: Ctx) => token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['MANAGER'], sub: `manager-${ctx.id}` });
const qualityOfficerOf = (ctx: Ctx) =>
  token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['QUALITY_OFFICER'], sub: `quality-${ctx.id}` });

/** A minted 120 kg batch whose automatic net coffee payment exists already (so it counts against the value first). */
async function batchWithNetPayment(ctx: Ctx, farmer: string): Promise<string> {
  const res = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg: 120 }) });
  expect(res.status).toBe(201);
  const batchId = res.body.data.batch_id as string;
  const list = await waitFor(
    () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.admin }),
    (r) => (r.body.payments ?? []).length > 0,
    15_000,
  );
  expect(list.body.payments).toHaveLength(1);
  return batchId;
}

const payout = (tok: string, ctx: Ctx, farmer: string, batchId: string, amountUsdc: number, reason = 'MANUAL') =>
  api('POST', '/payments/farmer-payout', {
    token: tok,
    body: { farmer_id: farmer, batch_id: batchId, amount_usdc: amountUsdc, reason, cooperative_id: ctx.id },
  });

const paymentsOf = async (ctx: Ctx, batchId: string) =>
  ((await api('GET', `/payments?batch_id=${batchId}`, { token: ctx.admin })).body.payments ?? []) as Array<{ payment_id: string }>;

describe('manual payouts: two keys', () => {
  let ctx: Ctx;
  let farmer: string;
  beforeAll(async () => {
    ctx = await setUpCooperative();
    farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000501');
  });

  it('a COOPERATIVE token with only the QUALITY_OFFICER duty, or an AGENT, is refused 403 and nothing is created; a MANAGER pays', async () => {
    // Prepare
    const batchId = await batchWithNetPayment(ctx, farmer);

    // Act
    const officer = await payout(await qualityOfficerOf(ctx), ctx, farmer, batchId, 5);
    const agent = await payout(ctx.agent, ctx, farmer, batchId, 5);
    const afterRefusals = await paymentsOf(ctx, batchId);
    const manager = await payout(await managerOf(ctx), ctx, farmer, batchId, 5);

    // Assess
    expect([officer.status, officer.body.error?.code, officer.body.error?.details]).toEqual([
      403,
      'INSUFFICIENT_PERMISSIONS',
      { required_role: 'COOPERATIVE', required_duty: 'MANAGER' },
    ]);
    expect([agent.status, agent.body.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect(afterRefusals).toHaveLength(1);
    expect([manager.status, manager.body.status]).toEqual([201, 'PROCESSING']);
    expect(await paymentsOf(ctx, batchId)).toHaveLength(2);
  }, 60_000);
});

describe('manual payouts: the batch-value cap', () => {
  let ctx: Ctx;
  let farmer: string;
  let manager: string;
  beforeAll(async () => {
    ctx = await setUpCooperative();
    farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000502');
    manager = await managerOf(ctx);
  });

  it('100,000 USDC on a 120 kg batch (about 300× what is left of its value) is 422 PAYOUT_EXCEEDS_BATCH_VALUE; payouts pass until the value is reached', async () => {
    // Prepare
    const batchId = await batchWithNetPayment(ctx, farmer);

    // Act
    const huge = await payout(manager, ctx, farmer, batchId, 100_000);
    const first = await payout(manager, ctx, farmer, batchId, 10, 'MANUAL'); // 37,002 UGX of the 48,000 left
    const over = await payout(ctx.admin, ctx, farmer, batchId, 5, 'TOP_UP'); // 18,501 UGX: 7,503 too many, also for ADMIN
    const fits = await payout(manager, ctx, farmer, batchId, 2.9, 'TOP_UP'); // 10,730 UGX: 268 UGX left

    // Assess
    expect([huge.status, huge.body.error?.code]).toEqual([422, 'PAYOUT_EXCEEDS_BATCH_VALUE']);
    expect(huge.body.error.details).toMatchObject({ batch_id: batchId, batch_value_ugx: 1_224_000 });
    expect(first.status).toBe(201);
    expect([over.status, over.body.error?.code]).toEqual([422, 'PAYOUT_EXCEEDS_BATCH_VALUE']);
    expect(over.body.error.details).toMatchObject({ batch_value_ugx: 1_224_000, paid_ugx: 1_176_000 + 37_002, payout_ugx: 18_501 });
    expect(fits.status).toBe(201);
    expect(await paymentsOf(ctx, batchId)).toHaveLength(3);
  }, 60_000);

  it('two manual payouts racing, each within what is left but not together: exactly one is created', async () => {
    // Prepare: 48,000 UGX left; each asks 29,602 UGX
    const batchId = await batchWithNetPayment(ctx, farmer);

    // Act
    const results = await Promise.all([
      payout(manager, ctx, farmer, batchId, 8, 'MANUAL'),
      payout(manager, ctx, farmer, batchId, 8, 'TOP_UP'),
    ]);

    // Assess
    expect(results.map((r) => r.status).sort()).toEqual([201, 422]);
    expect(results.find((r) => r.status === 422)!.body.error.code).toBe('PAYOUT_EXCEEDS_BATCH_VALUE');
    expect(await paymentsOf(ctx, batchId)).toHaveLength(2);
  }, 60_000);
});

describe('manual payouts: the daily cap of a cooperative', () => {
  it('above MANUAL_PAYOUT_DAILY_LIMIT_USDC (10,000) in one UTC day: 422 DAILY_PAYOUT_LIMIT_REACHED, nothing created; up to the cap passes', async () => {
    // Prepare: a premium of 1,000,000 UGX/kg makes a 120 kg batch worth far more than the daily cap
    const ctx = await setUpCooperative({ export_premium_ugx_per_kg: 1_000_000 });
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000503');
    const manager = await managerOf(ctx);
    const batchId = await batchWithNetPayment(ctx, farmer);

    // Act
    const first = await payout(manager, ctx, farmer, batchId, 9_000, 'MANUAL');
    const over = await payout(ctx.admin, ctx, farmer, batchId, 1_500, 'TOP_UP');
    const toTheCap = await payout(manager, ctx, farmer, batchId, 1_000, 'TOP_UP');

    // Assess
    expect(first.status).toBe(201);
    expect([over.status, over.body.error?.code]).toEqual([422, 'DAILY_PAYOUT_LIMIT_REACHED']);
    expect(over.body.error.details).toMatchObject({
      cooperative_id: ctx.id,
      day: new Date().toISOString().slice(0, 10),
      daily_limit_usdc: 10_000,
      requested_usdc: 1_500,
    });
    expect(toTheCap.status).toBe(201);
    expect(await paymentsOf(ctx, batchId)).toHaveLength(3);
  }, 60_000);
});

describe('phone changes: two keys, audited and notified', () => {
  it('an AGENT and a COOPERATIVE token without MANAGER are refused 403; a MANAGER changes it: audit entry, notice to the manager (masked) and an SMS to the old number', async () => {
    // Prepare
    const ctx = await setUpCooperative();
    const oldPhone = '+256772000504';
    const newPhone = '+256772000999';
    const farmer = await registerFarmer(ctx.id, ctx.coop, oldPhone);

    // Act
    const agent = await api('PATCH', `/farmers/${farmer}`, { token: ctx.agent, body: { phone: newPhone } });
    const officer = await api('PATCH', `/farmers/${farmer}`, { token: await qualityOfficerOf(ctx), body: { phone: newPhone } });
    const unchanged = await api('GET', `/farmers/${farmer}`, { token: ctx.admin });
    const patched = await api('PATCH', `/farmers/${farmer}`, { token: await managerOf(ctx), body: { phone: newPhone } });

    // Assess: refusals change nothing
    expect([agent.status, agent.body.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect([officer.status, officer.body.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect(unchanged.body).toMatchObject({ phone: '+256 7•• ••• 504' });
    expect(unchanged.body.phone_changes ?? []).toEqual([]);
    // the change and its audit entry
    expect(patched.status).toBe(200);
    const audited = await api('GET', `/farmers/${farmer}`, { token: ctx.admin });
    expect(audited.body).toMatchObject({ phone: '+256 7•• ••• 999' });
    expect(audited.body.phone_changes).toEqual([
      {
        at: expect.stringMatching(/Z$/),
        actor: `manager-${ctx.id}`,
        actor_role: 'COOPERATIVE',
        previous_phone: '+256 7•• ••• 504',
        phone: '+256 7•• ••• 999',
      },
    ]);
    // the two notices
    const notices = await waitFor(
      async () => notifications().filter((n) => n.attributes.farmer_id === farmer && n.attributes.event === 'farmer.phone_changed'),
      (ns) => ns.length >= 2,
      10_000,
    );
    const toManager = notices.find((n) => !n.attributes.phone_number);
    const toOldNumber = notices.find((n) => n.attributes.phone_number);
    expect(notices).toHaveLength(2);
    expect(toManager!.attributes.cooperative_id).toBe(ctx.id);
    expect(toManager!.message).toContain('+256 7•• ••• 504');
    expect(toManager!.message).toContain('+256 7•• ••• 999');
    expect(toManager!.message).not.toContain(oldPhone);
    expect(toManager!.message).not.toContain(newPhone);
    expect(toOldNumber!.attributes.phone_number).toBe(oldPhone);
    expect(toOldNumber!.message).toContain('+256 7•• ••• 999');
    expect(toOldNumber!.message).not.toContain(newPhone);
  }, 60_000);
});

describe('AGENT tokens see no money in the audit log', () => {
  it('the payout entries of GET /batch/{id}/audit come without amounts, phone numbers and transaction ids for an AGENT; MANAGER and ADMIN read them whole; the verification is the same', async () => {
    // Prepare: a batch whose net coffee payment completed
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000505');
    const batchId = await batchWithNetPayment(ctx, farmer);
    await waitFor(
      () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
      (r) => r.body.payment_status === 'PAYMENT_CONFIRMED',
      20_000,
    );

    // Act
    const asAgent = await api('GET', `/batch/${batchId}/audit`, { token: ctx.agent });
    const asManager = await api('GET', `/batch/${batchId}/audit`, { token: await managerOf(ctx) });
    const asAdmin = await api('GET', `/batch/${batchId}/audit`, { token: ctx.admin });

    // Assess
    expect([asAgent.status, asManager.status, asAdmin.status]).toEqual([200, 200, 200]);
    const confirmedOf = (r: typeof asAgent) =>
      (r.body.entries as Array<{ type: string; payload: Record<string, unknown>; payload_redacted?: boolean; hash: string }>).find(
        (e) => e.type === 'PAYMENT_CONFIRMED',
      )!;
    for (const whole of [asManager, asAdmin]) {
      expect(confirmedOf(whole).payload).toMatchObject({
        amount_usd_micro: expect.any(Number),
        amount_ugx: expect.any(Number),
        mobile_money_transaction_id: expect.stringMatching(/^MP/),
      });
      expect(confirmedOf(whole)).not.toHaveProperty('payload_redacted');
    }
    const agentText = JSON.stringify(asAgent.body.entries.map((e: { payload: unknown }) => e.payload));
    expect(agentText).not.toMatch(/amount|_ugx|usd_micro|exchange_rate|phone|transaction_id|provider_order_id/);
    expect(agentText).not.toContain(String(confirmedOf(asManager).payload.mobile_money_transaction_id));
    expect(confirmedOf(asAgent)).toMatchObject({
      payload_redacted: true,
      hash: confirmedOf(asManager).hash,
      payload: { payment_id: confirmedOf(asManager).payload.payment_id },
    });
    expect(asAgent.body.entries.map((e: { hash: string }) => e.hash)).toEqual(asManager.body.entries.map((e: { hash: string }) => e.hash));
    expect([asAgent.body.verified, asAgent.body.checks]).toEqual([asManager.body.verified, asManager.body.checks]);
  }, 60_000);
});
