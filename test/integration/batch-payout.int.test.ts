import { api, notifications, token, uid, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * The first slice end to end on the real local components: submit → mint → payout → signed
 * settlement webhook → COMPLETED and PAYMENT_CONFIRMED; and the payout paths of the sandbox's
 * test phones through the one state machine (LOCAL_TIME_SCALE 0.01).
 */

const payoutOf = async (tok: string, batchId: string) => {
  const list = await api('GET', `/payments?batch_id=${batchId}`, { token: tok });
  return list.body.payments?.[0]?.payment_id as string | undefined;
};

/** Submits a batch with `tok` and finds its payout with `reader` (AGENT tokens cannot read payments). */
async function submitAndFindPayout(tok: string, farmer: string, coopId: string, reader = tok) {
  const res = await api('POST', '/batch/submit', { token: tok, body: batchBody(farmer, coopId) });
  expect(res.status).toBe(201);
  const batchId = res.body.data.batch_id as string;
  const payoutId = await waitFor(
    () => payoutOf(reader, batchId),
    (p) => !!p,
    15_000,
  );
  expect(payoutId).toBeDefined();
  return { batchId, payoutId: payoutId!, submit: res };
}

describe('batch submission to farmer payout', () => {
  let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
  beforeAll(async () => {
    ctx = await setUpCooperative();
  });

  it('mints the BatchToken, writes the audit log and pays the farmer: COMPLETED and PAYMENT_CONFIRMED', async () => {
    // Prepare
    const farmer = await registerFarmer(ctx.id, ctx.agent, '+256772000123');
    // Act
    const { batchId, payoutId, submit } = await submitAndFindPayout(ctx.agent, farmer, ctx.id, ctx.coop);
    expect((await api('GET', `/payments?batch_id=${batchId}`, { token: ctx.agent })).status).toBe(403);
    // Assess: the 201 body of the specification
    expect(submit.body.success).toBe(true);
    expect(submit.body.data).toMatchObject({
      batch_id: expect.stringMatching(/^BATCH-\d{4}-\d{6}$/),
      token_id: expect.stringMatching(/^\d+$/),
      chain_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      audit_log_message_id: `AUD-${batchId}-1`,
      payment_status: 'INITIATED',
      payment_amount_ugx: 1180900, // round(120.5 kg × 9800 UGX/kg)
      farmer_phone: '+256 7•• ••• 123',
      estimated_payment_time_seconds: 60,
    });
    expect(payoutId).toMatch(new RegExp(`^PAY-${batchId.slice(6, 10)}-${batchId.slice(11)}-01$`));
    const done = await waitFor(
      () => api('GET', `/payments/farmer-payout/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      15_000,
    );
    expect(done.body).toMatchObject({
      payout_id: payoutId,
      status: 'COMPLETED',
      amount_ugx: expect.any(Number),
      mobile_money_transaction_id: expect.stringMatching(/^MP/),
      elapsed_seconds: expect.any(Number),
      retry_count: 0,
    });
    expect(Number.isInteger(done.body.amount_ugx)).toBe(true);
    expect(done.body.amount_ugx).toBeGreaterThanOrEqual(1180900);
    expect(done.body.completed_at).toMatch(/Z$/);
    const record = await api('GET', `/payments/${payoutId}`, { token: ctx.coop });
    expect(record.body).toMatchObject({
      payment_type: 'FARMER_PAYOUT',
      reason: 'NET_COFFEE_PAYMENT',
      batch_id: batchId,
      cooperative_id: ctx.id,
      exchange_rate: expect.any(Number),
    });
    expect(record.body.amount_ugx).toBe(Math.floor(record.body.amount_usdc * record.body.exchange_rate + 1e-9));
    const batch = await waitFor(
      () => api('GET', `/batch/${batchId}`, { token: ctx.agent }),
      (r) => r.body.payment_status === 'PAYMENT_CONFIRMED',
      5000,
    );
    // audit log: BATCH_SUBMITTED, PAYOUT_PROCESSING, PAYMENT_CONFIRMED
    expect(batch.body).toMatchObject({ stage: 'DELIVERED', payment_status: 'PAYMENT_CONFIRMED', dds_eligible: false, audit_log_length: 3 });
    expect(batch.body.stage_history).toEqual([
      expect.objectContaining({ stage: 'DELIVERED', audit_log_sequence_number: '1', chain_tx_hash: submit.body.data.chain_tx_hash }),
    ]);
  });

  it('retries a failed order after the wait and completes on the next attempt (+256700000002)', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256700000002');
    const { payoutId } = await submitAndFindPayout(ctx.coop, farmer, ctx.id);
    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      20_000,
    );
    expect(done.body).toMatchObject({ status: 'COMPLETED', retry_count: 1 });
  });

  it('moves a payout whose every order fails to MANUAL_REVIEW after 3 retries and notifies the manager (+256700000001)', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256700000001');
    const { payoutId, batchId } = await submitAndFindPayout(ctx.coop, farmer, ctx.id);
    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'MANUAL_REVIEW',
      30_000,
      200,
    );
    expect(done.body).toMatchObject({ status: 'MANUAL_REVIEW', retry_count: 3 });
    const note = await waitFor(
      async () => notifications().find((n) => n.attributes.payout_id === payoutId),
      (n) => !!n,
      5000,
    );
    expect(note).toBeDefined();
    expect(note!.attributes.cooperative_id).toBe(ctx.id);
    expect(note!.message).toContain(batchId);
    expect(note!.message).toContain('Joseph Wamala');
    const batch = await api('GET', `/batch/${batchId}`, { token: ctx.coop });
    expect(batch.body.payment_status).toBe('MANUAL_REVIEW');
    // the USDC is held for the cooperative, readable by it and by ADMIN only
    const holding = await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.coop });
    expect(holding.status).toBe(200);
    expect(holding.body).toMatchObject({ cooperative_id: ctx.id, held_usdc: done.body.amount_usdc, payouts_held: 1 });
    expect((await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.admin })).status).toBe(200);
    expect((await api('GET', `/cooperatives/${ctx.id}/holding-balance`, { token: ctx.agent })).status).toBe(403);
    // audit: submitted, processing, then per attempt failed (+ retry scheduled for 1–3), manual review
    expect(batch.body.audit_log_length).toBe(1 + 1 + 4 + 3 + 1);
  });

  it('finds a settlement whose webhook never comes by asking the provider (+256700000003)', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256700000003');
    const { payoutId } = await submitAndFindPayout(ctx.coop, farmer, ctx.id);
    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      30_000,
      200,
    );
    expect(done.body).toMatchObject({ status: 'COMPLETED', retry_count: 0 });
  });

  it('answers 503 PROVIDER_UNAVAILABLE and leaves no payout when the provider is unreachable (+256700000004)', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256700000004');
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    expect(submit.status).toBe(201);
    const batchId = submit.body.data.batch_id;
    const res = await api('POST', '/payments/farmer-payout', {
      token: ctx.coop,
      body: { farmer_id: farmer, batch_id: batchId, amount_usdc: 12.5, reason: 'MANUAL', cooperative_id: ctx.id },
    });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('PROVIDER_UNAVAILABLE');
    const list = await api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop });
    expect(list.body.payments.filter((p: { payment_id: string }) => p.payment_id)).toHaveLength(0);
  });

  it('creates exactly one payout for a batch and reason under 50 concurrent identical requests (DUPLICATE_PAYOUT)', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000456');
    const { batchId } = await submitAndFindPayout(ctx.coop, farmer, ctx.id);
    // 12.345678 USDC = 45,681 UGX at the sandbox rate: within what the net payment leaves of the batch's value (120.5 kg × 400 UGX premium = 48,200 UGX)
    const body = { farmer_id: farmer, batch_id: batchId, amount_usdc: 12.345678, reason: 'TOP_UP', cooperative_id: ctx.id };
    const results = await Promise.all(Array.from({ length: 50 }, () => api('POST', '/payments/farmer-payout', { token: ctx.coop, body })));
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'DUPLICATE_PAYOUT')).toBe(true);
    expect(results.filter((r) => r.status === 409)).toHaveLength(49);
    expect(created[0]!.body).toMatchObject({
      status: 'PROCESSING',
      amount_usdc: 12.345678,
      phone: '+256 7•• ••• 456',
      estimated_completion_seconds: 60,
      provider_order_id: expect.any(String),
    });
    const list = await api('GET', `/payments?batch_id=${batchId}&limit=1`, { token: ctx.coop });
    expect(list.body.total).toBe(2);
    expect(list.body.payments).toHaveLength(1);
    const next = await api('GET', `/payments?batch_id=${batchId}&limit=1&next_token=${encodeURIComponent(list.body.next_token)}`, {
      token: ctx.coop,
    });
    expect(next.body.payments).toHaveLength(1);
    expect(next.body.payments[0].payment_id).not.toBe(list.body.payments[0].payment_id);
  });

  it('answers 202 with a job under Prefer: respond-async, and the job completes with the transaction', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000789');
    const res = await api('POST', '/v1/batch/submit', {
      token: ctx.coop,
      body: batchBody(farmer, ctx.id),
      headers: { prefer: 'respond-async' },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ job_id: expect.stringMatching(/^JOB-/), status: 'PENDING' });
    const job = await waitFor(
      () => api('GET', `/jobs/${res.body.job_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETE',
      15_000,
    );
    expect(job.body).toMatchObject({ status: 'COMPLETE', batch_id: res.body.batch_id, tx_hash: expect.stringMatching(/^0x/) });
    const batch = await api('GET', `/batch/${res.body.batch_id}`, { token: ctx.coop });
    expect(batch.body.stage).toBe('DELIVERED');
    const other = await setUpCooperative();
    expect((await api('GET', `/jobs/${res.body.job_id}`, { token: other.coop })).status).toBe(403);
  });

  it('answers a stage update 202 at once under Prefer: respond-async, and its job completes with the trace-log transaction', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000790');
    const submitted = await api('POST', '/batch/submit', {
      token: ctx.coop,
      body: batchBody(farmer, ctx.id),
      headers: { prefer: 'respond-async' },
    });
    const batchId = submitted.body.batch_id as string;
    await waitFor(
      () => api('GET', `/jobs/${submitted.body.job_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETE',
      15_000,
    );
    const res = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } },
      headers: { prefer: 'respond-async' },
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    expect(res.headers.get('location')).toBe(`/jobs/${res.body.job_id}`);
    expect(res.body).toMatchObject({ job_id: expect.stringMatching(/^JOB-/), status: 'PENDING', new_stage: 'GRADED', chain_tx_hash: null });
    const job = await waitFor(
      () => api('GET', `/jobs/${res.body.job_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETE',
      15_000,
    );
    expect(job.body).toMatchObject({ status: 'COMPLETE', batch_id: batchId, tx_hash: expect.stringMatching(/^0x/) });
    const batch = await api('GET', `/batch/${batchId}`, { token: ctx.coop });
    expect(batch.body.stage).toBe('GRADED');
  });
});

describe('Idempotency-Key on batch submission', () => {
  it('answers a retried submission with the first answer instead of a second batch', async () => {
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000321');
    const key = `retry-${Date.now()}`;
    const first = await api('POST', '/batch/submit', {
      token: ctx.coop,
      body: batchBody(farmer, ctx.id),
      headers: { 'idempotency-key': key },
    });
    const again = await api('POST', '/batch/submit', {
      token: ctx.coop,
      body: batchBody(farmer, ctx.id),
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.data.batch_id).toBe(first.body.data.batch_id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await api('POST', '/batch/submit', {
      token: ctx.coop,
      body: batchBody(farmer, ctx.id, { weight_kg: 99 }),
      headers: { 'idempotency-key': key },
    });
    expect([other.status, other.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const fresh = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    expect(fresh.body.data.batch_id).not.toBe(first.body.data.batch_id);
  });
});

describe('Idempotency-Key scope', () => {
  it("never serves one cooperative's replay to another, even to a token with the same subject, and checks access before any replay", async () => {
    const a = await setUpCooperative();
    const b = await setUpCooperative();
    const farmerA = await registerFarmer(a.id, a.coop, '+256772000331');
    const farmerB = await registerFarmer(b.id, b.coop, '+256772000332');
    const shared = 'shared-officer';
    const tokA = await token({ role: 'COOPERATIVE', cooperative_id: a.id, sub: shared });
    const tokB = await token({ role: 'COOPERATIVE', cooperative_id: b.id, sub: shared });
    const key = `scope-${Date.now()}`;
    const first = await api('POST', '/batch/submit', { token: tokA, body: batchBody(farmerA, a.id), headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    // The same subject acting for cooperative B, same key, A's body: refused by the binding check, not replayed.
    const foreign = await api('POST', '/batch/submit', {
      token: tokB,
      body: batchBody(farmerA, a.id),
      headers: { 'idempotency-key': key },
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect(foreign.headers.get('idempotent-replayed')).toBeNull();
    // Its own submission with the same key is its own, not A's batch.
    const own = await api('POST', '/batch/submit', { token: tokB, body: batchBody(farmerB, b.id), headers: { 'idempotency-key': key } });
    expect(own.status).toBe(201);
    expect(own.headers.get('idempotent-replayed')).toBeNull();
    expect(own.body.data.batch_id).not.toBe(first.body.data.batch_id);
  });
});

describe('business rules of batch submission', () => {
  it('refuses a flagged farm (GFW_CHECK_FAILED), an inactive cooperative, an unknown farmer and a foreign cooperative', async () => {
    const ctx = await setUpCooperative();
    const flagged = uid('UG-MUK');
    const reg = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: {
        farmer_id: flagged,
        full_name: 'Mabira Farmer',
        cooperative_id: ctx.id,
        district: 'Mukono',
        farm: { gps: { lat: 0.43, lng: 32.95 }, area_ha: 2 },
      },
    });
    expect(reg.status).toBe(201);
    expect(reg.body.gfw_status).toBe('FLAGGED');
    const r1 = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(flagged, ctx.id) });
    expect([r1.status, r1.body.error.code]).toEqual([422, 'GFW_CHECK_FAILED']);
    const r2 = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody('UG-NOBODY', ctx.id) });
    expect([r2.status, r2.body.error.code]).toEqual([404, 'FARMER_NOT_REGISTERED']);
    const other = await setUpCooperative();
    const r3 = await api('POST', '/batch/submit', { token: other.coop, body: batchBody(flagged, ctx.id) });
    expect([r3.status, r3.body.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000999');
    await api('PATCH', `/cooperatives/${ctx.id}`, { token: ctx.admin, body: { licence_status: 'SUSPENDED' } });
    const r4 = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    expect([r4.status, r4.body.error.code]).toEqual([422, 'COOPERATIVE_NOT_ACTIVE']);
  });
});
