import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, notifications, stackDataDir, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Normalised failure reasons through the API on the local stack (docs/api/payouts.md#failure-reasons):
 * the sandbox's test phone +256700000008 is not a wallet, so its order fails with INVALID_MSISDN and
 * the payout goes to MANUAL_REVIEW at once — no RETRY_1..3 — with `failure_reason` on the record.
 */

const NOT_A_WALLET = '+256700000008';
const OTHER_HOLDER = '+256700000005';

describe('normalised payout failures (docs/api/payouts.md#failure-reasons)', () => {
  it('+256700000008: INVALID_MSISDN, MANUAL_REVIEW without retries, failure_reason on the record, manager notified', async () => {
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.agent, NOT_A_WALLET);
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    expect(submit.status).toBe(201);
    const batchId = submit.body.data.batch_id as string;
    const payoutId = (
      await waitFor(
        () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop }),
        (r) => !!r.body.payments?.[0],
        30_000,
      )
    ).body.payments[0].payment_id as string;
    const review = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'MANUAL_REVIEW',
      30_000,
      200,
    );
    expect(review.body).toMatchObject({ status: 'MANUAL_REVIEW', retry_count: 0, failure_reason: 'INVALID_MSISDN' });
    const status = await api('GET', `/payments/farmer-payout/${payoutId}`, { token: ctx.coop });
    expect(status.body).toMatchObject({ status: 'MANUAL_REVIEW', retry_count: 0, failure_reason: 'INVALID_MSISDN' });

    const entries = (await api('GET', `/batch/${batchId}/audit`, { token: ctx.coop })).body.entries as Array<{
      type: string;
      payload: Record<string, unknown>;
    }>;
    const types = entries.map((e) => e.type);
    expect(types).not.toContain('PAYOUT_RETRY_SCHEDULED');
    expect(types.filter((t) => t === 'PAYOUT_FAILED')).toHaveLength(1);
    expect(entries.find((e) => e.type === 'PAYOUT_FAILED')?.payload).toMatchObject({ failure_reason: 'INVALID_MSISDN' });

    const note = await waitFor(
      async () => notifications().filter((n) => n.attributes.payout_id === payoutId),
      (n) => n.length === 1,
      10_000,
    );
    expect(note[0]!.message).toContain('INVALID_MSISDN');
    expect(note[0]!.message).not.toContain(NOT_A_WALLET);
  });

  it('+256700000005: the wallet holder is someone else: RECIPIENT_NAME_MISMATCH, MANUAL_REVIEW without retries, no order placed, manager notified', async () => {
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.agent, OTHER_HOLDER);
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    expect(submit.status).toBe(201);
    const batchId = submit.body.data.batch_id as string;
    const payoutId = (
      await waitFor(
        () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop }),
        (r) => !!r.body.payments?.[0],
        30_000,
      )
    ).body.payments[0].payment_id as string;
    const review = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'MANUAL_REVIEW',
      30_000,
      200,
    );
    expect(review.body).toMatchObject({
      status: 'MANUAL_REVIEW',
      retry_count: 0,
      failure_reason: 'RECIPIENT_NAME_MISMATCH',
      provider_order_id: null,
      mobile_money_transaction_id: null,
    });
    const types = ((await api('GET', `/batch/${batchId}/audit`, { token: ctx.coop })).body.entries as Array<{ type: string }>).map(
      (e) => e.type,
    );
    expect(types).not.toContain('PAYOUT_RETRY_SCHEDULED');
    expect(types).not.toContain('PAYOUT_COMPLETED');
    // nothing placed at the provider under any of the payout's references
    const endpoints = (JSON.parse(readFileSync(join(stackDataDir(), 'stack.json'), 'utf8')) as { endpoints: Record<string, string> })
      .endpoints;
    const stats = (await (await fetch(`${endpoints.payout_sandbox}/v1/sandbox/stats`)).json()) as {
      settledPerReference: Record<string, number>;
    };
    expect(Object.keys(stats.settledPerReference).filter((r) => r.startsWith(`${payoutId}-`))).toEqual([]);
    const note = await waitFor(
      async () => notifications().filter((n) => n.attributes.payout_id === payoutId),
      (n) => n.length === 1,
      10_000,
    );
    expect(note[0]!.message).toContain('RECIPIENT_NAME_MISMATCH');
  });
});
