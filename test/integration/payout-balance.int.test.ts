import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localStack, notifications, stackDataDir, waitFor } from '../support/api';

/**
 * The merchant balance alarm on the local stack (docs/operations.md#merchant-balance-alarm): the
 * scheduled payout-balance-monitor reads the payout sandbox's merchant balance (every 5 minutes,
 * scaled by LOCAL_TIME_SCALE: every 3 s under test). Set below PAYOUT_BALANCE_ALARM_USD (1,000 by
 * default) through the sandbox's test hook, the ops notification appears in notifications.jsonl
 * once — not at every reading — and the balance is in metrics.ndjson; back above and low again, a
 * second notification (the next crossing).
 */

const sandbox = () => localStack().endpoints.payout_sandbox!;
const setBalance = async (amount: string) => {
  const r = await fetch(`${sandbox()}/v1/sandbox/balance`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount }),
  });
  expect(r.status).toBe(200);
};
const lowNotices = () =>
  notifications().filter((n) => n.attributes.event === 'payout.balance_low' && n.attributes.provider === 'provider-api');
/** Values of PayoutMerchantBalanceUsd for provider `http` in the metrics file. */
const balanceMetrics = (): number[] => {
  const file = join(stackDataDir(), 'metrics.ndjson');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((d) => d.provider === 'provider-api' && d.PayoutMerchantBalanceUsd !== undefined)
    .flatMap((d) => [d.PayoutMerchantBalanceUsd].flat() as number[]);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('merchant balance alarm (docs/operations.md#merchant-balance-alarm)', () => {
  afterAll(async () => {
    await setBalance('1000000'); // the sandbox's default: other suites' payouts see a funded merchant
  });

  it('below PAYOUT_BALANCE_ALARM_USD: one ops notification per crossing, and the balance metric in USD', async () => {
    expect(lowNotices()).toEqual([]);
    await setBalance('250.75');
    const first = await waitFor(
      async () => lowNotices(),
      (n) => n.length >= 1,
      30_000,
      200,
    );
    expect(first).toHaveLength(1);
    // (other suites' payouts on this stack may have spent a little of it since)
    expect(first[0]).toMatchObject({
      subject: expect.stringContaining(`${first[0]!.attributes.balance_usd} USD`),
      attributes: { event: 'payout.balance_low', provider: 'provider-api', threshold_usd: '1000' },
    });
    expect(Number(first[0]!.attributes.balance_usd)).toBeLessThanOrEqual(250.75);
    expect(first[0]!.message).toContain('PAYOUT_BALANCE_ALARM_USD');
    expect(balanceMetrics()).toContain(Number(first[0]!.attributes.balance_usd));

    // Several more readings (every 3 s here), still low: no second notification.
    await sleep(10_000);
    expect(lowNotices()).toHaveLength(1);

    // Topped up, then low again: the next crossing notifies again.
    const seen = balanceMetrics().length;
    await setBalance('5000');
    await waitFor(
      async () => balanceMetrics().slice(seen),
      (v) => v.some((x) => x > 4000 && x <= 5000),
      30_000,
      200,
    );
    await setBalance('12');
    const second = await waitFor(
      async () => lowNotices(),
      (n) => n.length >= 2,
      30_000,
      200,
    );
    expect(second).toHaveLength(2);
    expect(Number(second[1]!.attributes.balance_usd)).toBeLessThanOrEqual(12);
  }, 120_000);
});
