import { api, notifications, token, waitFor, localStack } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Closing manual reviews on the local stack (docs/api/payouts.md#manual-review): payouts driven to MANUAL_REVIEW by
 * the sandbox's always-failing test phone (+256700000001; LOCAL_TIME_SCALE 0.01 shortens the
 * 30/60/120 s waits), then closed as paid in cash, or retried through the state machine after the
 * farmer's phone was corrected with PATCH /farmers/{id}.
 */

const FAILING_PHONE = '+256700000001';

/** The payout sandbox's counters (sandbox-only endpoint): settled orders per provider reference. */
async function settledReferences(payoutId: string): Promise<Record<string, number>> {
  const endpoints = localStack().endpoints;
  const stats = (await (await fetch(`${endpoints.payout_sandbox}/v1/sandbox/stats`)).json()) as {
    settledPerReference: Record<string, number>;
  };
  return Object.fromEntries(Object.entries(stats.settledPerReference).filter(([ref]) => ref.startsWith(`${payoutId}-`)));
}

/** A cooperative with a MANAGER token, and a payout of a new farmer (phone `phone`) in MANUAL_REVIEW. */
async function payoutInManualReview() {
  const ctx = await setUpCooperative();
  const manager = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, sub: `manager-${ctx.id}`, duties: ['MANAGER'] });
  const farmer = await registerFarmer(ctx.id, ctx.agent, FAILING_PHONE);
  const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
  expect(submit.status).toBe(201);
  const batchId = submit.body.data.batch_id as string;
  const payoutId = (
    await waitFor(
      () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop }),
      (r) => !!r.body.payments?.[0],
      15_000,
    )
  ).body.payments[0].payment_id as string;
  const review = await waitFor(
    () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
    (r) => r.body.status === 'MANUAL_REVIEW',
    30_000,
    200,
  );
  // the manager's notification is the last step of the ManualReview task
  await waitFor(
    async () => notifications().filter((n) => n.attributes.payout_id === payoutId).length,
    (n) => n === 1,
    10_000,
  );
  const holding = await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.coop });
  expect(holding.body).toMatchObject({ held_usdc: review.body.amount_usdc, payouts_held: 1 });
  return {
    ctx,
    manager,
    farmer,
    batchId,
    payoutId,
    amountUsdc: review.body.amount_usdc as number,
    createdAt: review.body.created_at as string,
  };
}

const resolve = (tok: string, payoutId: string, body: unknown) =>
  api('POST', `/payments/farmer-payout/${payoutId}/resolve`, { token: tok, body });
const auditTypes = async (tok: string, batchId: string) =>
  (await api('GET', `/batch/${batchId}/audit`, { token: tok })).body.entries as Array<{ type: string; payload: Record<string, unknown> }>;

describe('closing manual reviews (docs/api/payouts.md#manual-review)', () => {
  it('PAID_IN_CASH: COMPLETED at the office with the receipt, holding balance back to 0, audit entry, batch PAYMENT_CONFIRMED; a second resolution is refused', async () => {
    const { ctx, manager, batchId, payoutId, createdAt } = await payoutInManualReview();
    const paidAt = new Date(Date.now() - 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const body = { resolution: 'PAID_IN_CASH', receipt_number: 'RCPT/2026/0042', paid_at: paidAt };

    // who may not: an AGENT, a COOPERATIVE without MANAGER, a MANAGER of another cooperative
    const officer = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, sub: 'qo', duties: ['QUALITY_OFFICER', 'EXPORTER'] });
    const other = await setUpCooperative();
    for (const tok of [ctx.agent, officer, other.coop]) {
      const res = await resolve(tok, payoutId, body);
      expect([res.status, res.body.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    }
    // what may not: bad bodies (400), a paid_at before the payout existed (400), an unknown payout (404)
    for (const bad of [
      {},
      { resolution: 'REFUND' },
      { ...body, receipt_number: '' },
      { ...body, paid_at: 'yesterday' },
      { ...body, extra: 1 },
    ]) {
      const res = await resolve(manager, payoutId, bad);
      expect([res.status, res.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    }
    const early = await resolve(manager, payoutId, { ...body, paid_at: new Date(Date.parse(createdAt) - 60_000).toISOString() });
    expect([early.status, early.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    const unknown = await resolve(manager, 'PAY-2026-999999-01', body);
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'PAYMENT_NOT_FOUND']);
    expect((await api('GET', `/payments/${payoutId}`, { token: ctx.coop })).body.status).toBe('MANUAL_REVIEW');

    const res = await resolve(manager, payoutId, body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      payout_id: payoutId,
      status: 'COMPLETED',
      resolution: 'PAID_IN_CASH',
      settlement_channel: 'CASH_AT_OFFICE',
      cash_receipt: { receipt_number: 'RCPT/2026/0042', paid_at: paidAt.replace('Z', '.000Z') },
    });
    const record = await api('GET', `/payments/${payoutId}`, { token: ctx.coop });
    expect(record.body).toMatchObject({
      status: 'COMPLETED',
      settlement_channel: 'CASH_AT_OFFICE',
      cash_receipt: { receipt_number: 'RCPT/2026/0042' },
      completed_at: expect.stringMatching(/Z$/),
    });
    const holding = await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.coop });
    expect(holding.body).toMatchObject({ held_usdc: 0, payouts_held: 0 });
    expect((await api('GET', `/batch/${batchId}`, { token: ctx.coop })).body.payment_status).toBe('PAYMENT_CONFIRMED');
    const entries = await auditTypes(ctx.coop, batchId);
    expect(entries.at(-1)).toMatchObject({
      type: 'PAYOUT_PAID_IN_CASH',
      payload: { payment_id: payoutId, receipt_number: 'RCPT/2026/0042', settlement_channel: 'CASH_AT_OFFICE' },
    });

    // resolved once: another PAID_IN_CASH or a RETRY is 422, nothing changes
    for (const again of [body, { resolution: 'RETRY' }]) {
      const second = await resolve(ctx.admin, payoutId, again);
      expect([second.status, second.body.error?.code, second.body.error?.details?.status]).toEqual([
        422,
        'STAGE_OUT_OF_ORDER',
        'COMPLETED',
      ]);
    }
    expect((await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.coop })).body).toMatchObject({
      held_usdc: 0,
      payouts_held: 0,
    });
    expect((await auditTypes(ctx.coop, batchId)).length).toBe(entries.length);
  }, 60_000);

  it('concurrent resolutions: exactly one wins, the balance is reduced once', async () => {
    const { ctx, manager, payoutId } = await payoutInManualReview();
    const paidAt = new Date(Date.now() - 1000).toISOString();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        resolve(manager, payoutId, { resolution: 'PAID_IN_CASH', receipt_number: `R-${i}`, paid_at: paidAt }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422 && r.body.error.code === 'STAGE_OUT_OF_ORDER')).toHaveLength(5);
    expect((await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.coop })).body).toMatchObject({
      held_usdc: 0,
      payouts_held: 0,
    });
  }, 60_000);

  it('RETRY after PATCH /farmers/{id}: a new attempt (-A5) to the corrected phone settles once; holding balance back down; audit entry', async () => {
    const { ctx, manager, farmer, batchId, payoutId } = await payoutInManualReview();

    // PATCH /farmers/{id}: the cooperative's MANAGER may; another cooperative, a bad number, an unknown farmer may not
    const other = await setUpCooperative();
    const otherManager = await token({ role: 'COOPERATIVE', cooperative_id: other.id, duties: ['MANAGER'], sub: `manager-${other.id}` });
    const cross = await api('PATCH', `/farmers/${farmer}`, { token: otherManager, body: { phone: '+256772000321' } });
    expect([cross.status, cross.body.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    const landline = await api('PATCH', `/farmers/${farmer}`, { token: manager, body: { phone: '+256414123456' } });
    expect([landline.status, landline.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    const unknown = await api('PATCH', '/farmers/UG-MBL-NOBODY', { token: ctx.admin, body: { phone: '+256772000321' } });
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'FARMER_NOT_REGISTERED']);
    const patched = await api('PATCH', `/farmers/${farmer}`, { token: manager, body: { phone: '+256772000321' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ farmer_id: farmer, phone: '+256 7•• ••• 321', phone_updated_at: expect.stringMatching(/Z$/) });
    expect(patched.body).not.toHaveProperty('updated_by');
    expect((await api('GET', `/farmers/${farmer}`, { token: ctx.coop })).body.phone).toBe('+256 7•• ••• 321');

    const res = await resolve(manager, payoutId, { resolution: 'RETRY' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      payout_id: payoutId,
      resolution: 'RETRY',
      status: 'PROCESSING',
      attempt: 5,
      resolution_round: 1,
      phone: '+256 7•• ••• 321',
      retry_count: 0,
    });
    const holdingNow = await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.coop });
    expect(holdingNow.body).toMatchObject({ held_usdc: 0, payouts_held: 0 });

    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      20_000,
      200,
    );
    expect(done.body).toMatchObject({
      status: 'COMPLETED',
      settlement_channel: 'MOBILE_MONEY',
      cash_receipt: null,
      mobile_money_transaction_id: expect.stringMatching(/^MP/),
    });
    expect(await settledReferences(payoutId)).toEqual({ [`${payoutId}-A5`]: 1 });
    expect((await api('GET', `/batch/${batchId}`, { token: ctx.coop })).body.payment_status).toBe('PAYMENT_CONFIRMED');
    expect((await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.coop })).body).toMatchObject({
      held_usdc: 0,
      payouts_held: 0,
    });
    const entries = await auditTypes(ctx.coop, batchId);
    const types = entries.map((e) => e.type);
    expect(types.slice(types.indexOf('PAYOUT_RETRY_REQUESTED'))).toEqual(['PAYOUT_RETRY_REQUESTED', 'PAYMENT_CONFIRMED']);
    expect(entries.find((e) => e.type === 'PAYOUT_RETRY_REQUESTED')!.payload).toMatchObject({
      payment_id: payoutId,
      round: 1,
      first_attempt: 5,
      phone_changed: true,
      phone_last3: '321',
    });
    expect(entries.find((e) => e.type === 'PAYMENT_CONFIRMED')!.payload).toMatchObject({ attempt: 5 });
  }, 60_000);

  it('RETRY to a phone that still fails: a second MANUAL_REVIEW holds the USDC again and notifies the manager again', async () => {
    const { ctx, manager, payoutId, amountUsdc } = await payoutInManualReview();
    const res = await resolve(manager, payoutId, { resolution: 'RETRY' });
    expect(res.status).toBe(200);
    const again = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'MANUAL_REVIEW',
      30_000,
      200,
    );
    expect(again.body).toMatchObject({ status: 'MANUAL_REVIEW', retry_count: 3 });
    await waitFor(
      async () => notifications().filter((n) => n.attributes.payout_id === payoutId).length,
      (n) => n === 2,
      10_000,
    );
    expect((await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.coop })).body).toMatchObject({
      held_usdc: amountUsdc,
      payouts_held: 1,
    });
    expect(await settledReferences(payoutId)).toEqual({});
  }, 60_000);
});
