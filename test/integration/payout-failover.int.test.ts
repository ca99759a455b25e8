import { DEV_PAWAPAY_API_TOKEN } from '../../infra/local/dev-keys';
import { pawaPayPayoutId } from '../../shared/adapters/payout-provider/pawapay';
import { api, waitFor } from '../support/api';
import { useOwnStack } from '../support/stack-process';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Two payout providers through the API (docs/api/payouts.md#payout-providers-and-failover), on a
 * stack of its own with PAYOUT_PROVIDERS=provider-api,pawapay (the shared stack keeps the default,
 * one provider). +256700000006: the primary is unreachable for new orders (its look-ups answer
 * "no such order"), so the payout fails over to pawaPay under the same reference, is completed by
 * pawaPay's signed callback, and exactly one order settled: none at the primary, one at pawaPay.
 * Any other number is paid by the primary.
 */

const stack = useOwnStack({ PAYOUT_PROVIDERS: 'provider-api,pawapay', LEDGER_BLOCK_TIME_S: '0' });

async function batchPayout(phone: string): Promise<{ ctx: Awaited<ReturnType<typeof setUpCooperative>>; payoutId: string }> {
  const ctx = await setUpCooperative();
  const farmer = await registerFarmer(ctx.id, ctx.agent, phone);
  const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
  expect([201, 202]).toContain(submit.status);
  const batchId = submit.body.data.batch_id as string;
  const list = await waitFor(
    () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop }),
    (r) => !!r.body.payments?.[0],
    60_000,
    200,
  );
  return { ctx, payoutId: list.body.payments[0].payment_id as string };
}

async function primarySettled(reference: string): Promise<number> {
  const stats = (await (await fetch(`${stack().info.endpoints.payout_sandbox}/v1/sandbox/stats`)).json()) as {
    settledPerReference: Record<string, number>;
  };
  return stats.settledPerReference[reference] ?? 0;
}

describe('PAYOUT_PROVIDERS=provider-api,pawapay', () => {
  it('+256700000006: the primary is unreachable, pawaPay pays under the same reference, one settled order in all', async () => {
    const { ctx, payoutId } = await batchPayout('+256700000006');
    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED' || r.body.status === 'MANUAL_REVIEW',
      60_000,
      200,
    );
    expect(done.body).toMatchObject({ status: 'COMPLETED', provider: 'pawapay', retry_count: 0, failure_reason: null });
    const reference = `${payoutId}-A1`;
    expect(done.body.provider_order_id).toBe(pawaPayPayoutId(reference));

    // pawaPay holds one completed payout for the reference, in UGX at the payout's rate; the primary settled none.
    const pawapay = (await (
      await fetch(`${stack().info.endpoints.pawapay_sandbox}/v2/payouts/${pawaPayPayoutId(reference)}`, {
        headers: { Authorization: `Bearer ${DEV_PAWAPAY_API_TOKEN}` },
      })
    ).json()) as { status: string; data: { status: string; amount: string; metadata: Record<string, string> } };
    expect(pawapay).toMatchObject({ status: 'FOUND', data: { status: 'COMPLETED', metadata: { reference } } });
    expect(Number(pawapay.data.amount)).toBe(done.body.amount_ugx);
    expect(await primarySettled(reference)).toBe(0);

    const status = await api('GET', `/payments/farmer-payout/${payoutId}`, { token: ctx.coop });
    expect(status.body).toMatchObject({ status: 'COMPLETED', provider: 'pawapay' });
  }, 120_000);

  it('any other number: the primary pays, pawaPay is not used', async () => {
    const { ctx, payoutId } = await batchPayout('+256772000606');
    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED' || r.body.status === 'MANUAL_REVIEW',
      60_000,
      200,
    );
    expect(done.body).toMatchObject({ status: 'COMPLETED', provider: 'provider-api' });
    expect(await primarySettled(`${payoutId}-A1`)).toBe(1);
    const atPawaPay = (await (
      await fetch(`${stack().info.endpoints.pawapay_sandbox}/v2/payouts/${pawaPayPayoutId(`${payoutId}-A1`)}`, {
        headers: { Authorization: `Bearer ${DEV_PAWAPAY_API_TOKEN}` },
      })
    ).json()) as { status: string };
    expect(atPawaPay.status).toBe('NOT_FOUND');
  }, 120_000);
});
