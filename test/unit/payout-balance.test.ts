import { balanceUsdMicro } from '../../shared/domain/payout-balance';
import type { MerchantBalance, PayoutBalanceAlarmStore } from '../../shared/domain/ports/payouts';
import type { MetricsRecorder } from '../../shared/runtime/metrics';
import { BALANCE_LOW_EVENT, monitorPayoutBalances, type PayoutBalanceMonitorDeps } from '../../shared/use-cases/payout-balance';

/** The alarm store with the adapter's conditions, in memory. */
function memoryAlarms(): PayoutBalanceAlarmStore & { state: Map<string, { state: 'LOW' | 'OK'; since?: string }> } {
  const state = new Map<string, { state: 'LOW' | 'OK'; since?: string }>();
  return {
    state,
    async markLow(p, at) {
      if (state.get(p)?.state === 'LOW') return false;
      state.set(p, { state: 'LOW', since: at });
      return true;
    },
    async undoLow(p, at) {
      const s = state.get(p);
      if (s?.state === 'LOW' && s.since === at) state.set(p, { state: 'OK' });
    },
    async markOk(p) {
      if (state.get(p)?.state !== 'LOW') return false;
      state.set(p, { state: 'OK' });
      return true;
    },
  };
}

function deps(balances: Record<string, () => Promise<MerchantBalance[]>>, over: Partial<PayoutBalanceMonitorDeps> = {}) {
  const published: Array<{ subject: string; message: string; attributes: Record<string, string> }> = [];
  const recorded: Array<{ name: string; dims: Record<string, string>; value: number }> = [];
  const quotes: number[] = [];
  const metrics: MetricsRecorder = {
    count: (name, dims = {}, value = 1) => void recorded.push({ name, dims, value }),
    timing: () => undefined,
  };
  const alarms = memoryAlarms();
  let tick = 0;
  const d: PayoutBalanceMonitorDeps = {
    providers: Object.entries(balances).map(([name, read]) => ({ name, provider: { merchantBalance: read } })),
    rates: {
      quote: async () => {
        quotes.push(1);
        return { quote_id: 'q1', rate: '3700', expires_at: '2026-11-27T00:01:00Z' };
      },
    },
    alarms,
    notifier: {
      publish: async (m) => {
        published.push(m);
        return { messageId: `m${published.length}` };
      },
    },
    metrics,
    now: () => new Date(Date.UTC(2026, 10, 27, 4, 0, tick++)),
    ...over,
  };
  return { d, published, recorded, alarms, quotes };
}

const THRESHOLD = { thresholdUsdMicro: 1_000_000_000 }; // 1,000 USD
const usd = (amount: number): MerchantBalance[] => [{ currency: 'USD', amount_minor: amount * 1_000_000 }];

describe('merchant balance in USD (docs/operations.md#merchant-balance-alarm)', () => {
  it('adds USD as it is and UGX at the rate, rounded down; asks for the rate only when UGX is held', async () => {
    let asked = 0;
    const rate = async () => {
      asked++;
      return '3700';
    };
    expect(await balanceUsdMicro([{ currency: 'USD', amount_minor: 5_000_000 }], rate)).toBe(5_000_000);
    expect(asked).toBe(0);
    // 3,700,001 UGX at 3700 = 1000.00027027… USD → 1,000,000,270 micro-USD (down)
    expect(
      await balanceUsdMicro(
        [
          { currency: 'UGX', amount_minor: 3_700_001 },
          { currency: 'USD', amount_minor: 1 },
        ],
        rate,
      ),
    ).toBe(1_000_000_271);
    expect(asked).toBe(1);
    await expect(balanceUsdMicro([{ currency: 'UGX', amount_minor: 1 }], async () => '0')).rejects.toThrow(RangeError);
    await expect(balanceUsdMicro([{ currency: 'USD', amount_minor: 1.5 }], rate)).rejects.toThrow(RangeError);
  });
});

describe('monitorPayoutBalances (docs/operations.md#merchant-balance-alarm)', () => {
  it('above the threshold: the metric per provider and overall, no notification', async () => {
    const { d, published, recorded } = deps({ http: async () => usd(1500) });
    const r = await monitorPayoutBalances(d, THRESHOLD);
    expect(r).toEqual([{ provider: 'http', balance_usd_micro: 1_500_000_000, state: 'ABOVE', notified: false }]);
    expect(published).toEqual([]);
    expect(recorded).toEqual([
      { name: 'PayoutMerchantBalanceUsd', dims: { provider: 'http' }, value: 1500 },
      { name: 'PayoutMerchantBalanceUsd', dims: {}, value: 1500 },
    ]);
  });

  it('exactly at the threshold is not below it', async () => {
    const { d, published } = deps({ http: async () => usd(1000) });
    expect((await monitorPayoutBalances(d, THRESHOLD))[0]!.state).toBe('ABOVE');
    expect(published).toEqual([]);
  });

  it('below: one ops notification per crossing — not again while it stays low, again after it was back above', async () => {
    let balance = 999.5;
    const { d, published } = deps({ http: async () => [{ currency: 'USD', amount_minor: Math.round(balance * 1_000_000) }] });
    const first = await monitorPayoutBalances(d, THRESHOLD);
    expect(first[0]).toMatchObject({ state: 'BELOW', notified: true, balance_usd_micro: 999_500_000 });
    expect(published).toHaveLength(1);
    expect(published[0]!.attributes).toEqual({ event: BALANCE_LOW_EVENT, provider: 'http', balance_usd: '999.5', threshold_usd: '1000' });
    expect(published[0]!.subject).toContain('999.5 USD');
    expect(published[0]!.attributes.cooperative_id).toBeUndefined(); // not a cooperative's manager's message

    balance = 10; // still low, lower
    expect((await monitorPayoutBalances(d, THRESHOLD))[0]).toMatchObject({ state: 'BELOW', notified: false });
    expect(published).toHaveLength(1);

    balance = 5000; // topped up
    expect((await monitorPayoutBalances(d, THRESHOLD))[0]!.state).toBe('ABOVE');
    balance = 20; // the next crossing
    expect((await monitorPayoutBalances(d, THRESHOLD))[0]).toMatchObject({ state: 'BELOW', notified: true });
    expect(published).toHaveLength(2);
  });

  it('two monitors reading at once notify once (the conditioned LOW mark decides)', async () => {
    const { d, published } = deps({ http: async () => usd(5) });
    await Promise.all([monitorPayoutBalances(d, THRESHOLD), monitorPayoutBalances(d, THRESHOLD)]);
    expect(published).toHaveLength(1);
  });

  it('a notification that fails is retried at the next run (the LOW mark is taken back)', async () => {
    let fail = true;
    const sent: string[] = [];
    const { d, alarms } = deps(
      { http: async () => usd(5) },
      {
        notifier: {
          publish: async (m) => {
            if (fail) throw new Error('SNS down');
            sent.push(m.subject);
            return { messageId: 'x' };
          },
        },
      },
    );
    expect((await monitorPayoutBalances(d, THRESHOLD))[0]).toMatchObject({ state: 'BELOW', notified: false });
    expect(alarms.state.get('http')?.state).toBe('OK');
    fail = false;
    expect((await monitorPayoutBalances(d, THRESHOLD))[0]).toMatchObject({ state: 'BELOW', notified: true });
    expect(sent).toHaveLength(1);
  });

  it('the alarm state store failing for one provider does not stop the run', async () => {
    const { d, published } = deps({ a: async () => usd(5000), b: async () => usd(5) });
    d.alarms = {
      markOk: async () => {
        throw new Error('table down');
      },
      markLow: async () => {
        throw new Error('table down');
      },
      undoLow: async () => undefined,
    };
    const r = await monitorPayoutBalances(d, THRESHOLD);
    expect(r.map((x) => [x.provider, x.state, x.notified])).toEqual([
      ['a', 'ABOVE', false],
      ['b', 'BELOW', false],
    ]);
    expect(published).toEqual([]);
  });

  it('each provider on its own: one unreadable does not stop the others; UGX converted with one quote', async () => {
    const { d, published, recorded, quotes } = deps({
      down: async () => {
        throw new Error('unreachable');
      },
      ugx: async () => [{ currency: 'UGX', amount_minor: 370_000 }], // 100 USD at 3700
      rich: async () => [{ currency: 'UGX', amount_minor: 37_000_000 }], // 10,000 USD
    });
    const r = await monitorPayoutBalances(d, THRESHOLD);
    expect(r.map((x) => [x.provider, x.state, x.balance_usd_micro])).toEqual([
      ['down', 'UNREADABLE', null],
      ['ugx', 'BELOW', 100_000_000],
      ['rich', 'ABOVE', 10_000_000_000],
    ]);
    expect(quotes).toHaveLength(1);
    expect(published.map((p) => p.attributes.provider)).toEqual(['ugx']);
    expect(recorded.filter((m) => m.dims.provider).map((m) => [m.dims.provider, m.value])).toEqual([
      ['ugx', 100],
      ['rich', 10000],
    ]);
  });
});
