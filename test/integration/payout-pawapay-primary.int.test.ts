import { DEV_PAWAPAY_API_TOKEN } from '../../infra/local/dev-keys';
import type { PawaPaySandboxStats } from '../../infra/local/pawapay-sandbox';
import { pawaPayPayoutId } from '../../shared/adapters/payout-provider/pawapay';
import { api, waitFor } from '../support/api';
import { useOwnStack } from '../support/stack-process';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * pawaPay as the primary provider (PAYOUT_PROVIDERS=pawapay,provider-api), on a stack of its own.
 * pawaPay has no account-holder name lookup, so the recipient name check takes the holder's name
 * from the next provider that gives one (docs/api/payouts.md#recipient-name-check): +256700000005
 * (the wallet's holder is someone else) still ends in MANUAL_REVIEW with RECIPIENT_NAME_MISMATCH,
 * nothing paid at either provider; any other number is paid by pawaPay.
 */

// A second stack beside the shared one: allow for a loaded machine.
const stack = useOwnStack({ PAYOUT_PROVIDERS: 'pawapay,provider-api', LEDGER_BLOCK_TIME_S: '0' }, 420_000);

async function finalPayout(phone: string) {
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
  const payoutId = list.body.payments[0].payment_id as string;
  const done = await waitFor(
    () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
    (r) => r.body.status === 'COMPLETED' || r.body.status === 'MANUAL_REVIEW',
    60_000,
    200,
  );
  return { payoutId, payout: done.body };
}

async function atPawaPay(reference: string): Promise<string> {
  const r = (await (
    await fetch(`${stack().info.endpoints.pawapay_sandbox}/v2/payouts/${pawaPayPayoutId(reference)}`, {
      headers: { Authorization: `Bearer ${DEV_PAWAPAY_API_TOKEN}` },
    })
  ).json()) as { status: string; data?: { status: string } };
  return r.data?.status ?? r.status;
}

describe('PAYOUT_PROVIDERS=pawapay,provider-api', () => {
  it('+256700000005: the name check still runs (the holder named by the next provider): RECIPIENT_NAME_MISMATCH, nothing paid', async () => {
    // Failed before the change: pawaPay's lookup has no name, the check was skipped and pawaPay paid the other holder.
    const { payoutId, payout } = await finalPayout('+256700000005');
    expect(payout).toMatchObject({
      status: 'MANUAL_REVIEW',
      retry_count: 0,
      failure_reason: 'RECIPIENT_NAME_MISMATCH',
      provider_order_id: null,
    });
    expect(await atPawaPay(`${payoutId}-A1`)).toBe('NOT_FOUND');
    const primary = (await (await fetch(`${stack().info.endpoints.pawapay_sandbox}/v2/sandbox/stats`)).json()) as PawaPaySandboxStats;
    expect(Object.keys(primary.completedPerReference).filter((r) => r.startsWith(`${payoutId}-`))).toEqual([]);
    const second = (await (await fetch(`${stack().info.endpoints.payout_sandbox}/v1/sandbox/stats`)).json()) as {
      settledPerReference: Record<string, number>;
    };
    expect(Object.keys(second.settledPerReference).filter((r) => r.startsWith(`${payoutId}-`))).toEqual([]);
  }, 120_000);

  it('any other number: pawaPay pays', async () => {
    const { payoutId, payout } = await finalPayout('+256772000707');
    expect(payout).toMatchObject({ status: 'COMPLETED', provider: 'pawapay' });
    expect(await atPawaPay(`${payoutId}-A1`)).toBe('COMPLETED');
  }, 120_000);
});
