import type { Caller } from '../../shared/domain/caller';
import { ProviderRejectedError, ProviderUnavailableError } from '../../shared/domain/errors';
import { createFarmerPayout, createManualPayout, type PayoutDeps } from '../../shared/use-cases/payouts';
import { domainErrorOf, onTheWire } from './support/errors';
import {
  aBatch,
  aFarmer,
  fakeBatchStore,
  fakePayoutProvider,
  fakePayoutStore,
  fakePayoutWorkflow,
  fakeRegistryStore,
  aCooperative,
} from './support/fakes';

/** POST /payments/farmer-payout when the provider is down or refuses the order (docs/api/payouts.md#creating-a-payout). */

const caller: Caller = { sub: 'officer', role: 'COOPERATIVE', cooperative_id: 'C1', duties: [] };
const input = {
  farmer_id: 'F1',
  batch_id: 'BATCH-2026-000042',
  cooperative_id: 'C1',
  reason: 'MANUAL' as const,
  amount: { usd_micro: 12_500_000 },
};

function deps(createOrder: () => Promise<never>, quote?: () => Promise<never>) {
  const calls: string[] = [];
  const d: PayoutDeps = {
    now: () => new Date('2026-11-22T10:00:00.000Z'),
    registry: fakeRegistryStore({
      getFarmer: async () => aFarmer({ farmer_id: 'F1', cooperative_id: 'C1', phone: '+256772000123', full_name: 'Joseph Wamala' }),
      getCooperative: async () => aCooperative({ cooperative_id: 'C1' }),
    }),
    batches: fakeBatchStore({
      get: async () => aBatch({ batch_id: 'BATCH-2026-000042', cooperative_id: 'C1', farmer_id: 'F1', payout_seq: 0 }),
    }),
    payouts: fakePayoutStore({
      createPending: async (p) => {
        calls.push(`pending ${p.payment_id} ${p.amount_usd_micro}`);
      },
      discardUnsent: async (p) => {
        calls.push(`discard ${p.payment_id}`);
      },
      markFirstOrderRejected: async (p, failure) => {
        calls.push(`rejected ${p.payment_id} ${failure.reason} ${failure.detail}`);
        return { ...p, status: 'FAILED' };
      },
      markProcessing: async () => {
        throw new Error('must not be PROCESSING');
      },
    }),
    provider: fakePayoutProvider({
      quote: async () => {
        calls.push('quote');
        return quote ? quote() : { quote_id: 'q1', rate: '3700.25', expires_at: '2026-11-22T10:01:00.000Z' };
      },
      createOrder: async () => {
        calls.push('order');
        return createOrder();
      },
      findOrderByReference: async () => null, // asked after an unreachable creation: no order was placed
    }),
    workflow: fakePayoutWorkflow({
      start: async (id) => {
        calls.push(`start ${id}`);
      },
    }),
  };
  return { d, calls };
}

describe('createFarmerPayout', () => {
  it('leaves no payout behind when the provider is unreachable after its attempts: 503 PROVIDER_UNAVAILABLE', async () => {
    const { d, calls } = deps(async () => {
      throw new ProviderUnavailableError();
    });
    const err = await domainErrorOf(createFarmerPayout(d, caller, input));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(onTheWire(err).status).toBe(503);
    expect(calls).toEqual(['quote', 'pending PAY-2026-000042-01 12500000', 'order', 'discard PAY-2026-000042-01']);
  });

  it('keeps a rejected payout as FAILED, starts its retries and answers 500 PAYOUT_FAILED naming it', async () => {
    const { d, calls } = deps(async () => {
      throw new ProviderRejectedError('RECIPIENT_BLOCKED: wallet suspended');
    });
    const err = await domainErrorOf(createFarmerPayout(d, caller, input));
    expect(err.code).toBe('PAYOUT_FAILED');
    expect(onTheWire(err).status).toBe(500);
    expect(err.details).toEqual({ payout_id: 'PAY-2026-000042-01', status: 'FAILED', failure_reason: 'PROVIDER_ERROR' });
    expect(calls).toEqual([
      'quote',
      'pending PAY-2026-000042-01 12500000',
      'order',
      'rejected PAY-2026-000042-01 PROVIDER_ERROR RECIPIENT_BLOCKED: wallet suspended',
      'start PAY-2026-000042-01',
    ]);
  });

  it('answers 500 PAYOUT_FAILED (not INTERNAL_ERROR) when the provider rejects the quote, and creates nothing', async () => {
    const { d, calls } = deps(
      async () => {
        throw new Error('no order may be placed');
      },
      async () => {
        throw new ProviderRejectedError('AMOUNT_TOO_LARGE: above the corridor limit');
      },
    );
    const err = await domainErrorOf(createFarmerPayout(d, caller, input));
    expect(err.code).toBe('PAYOUT_FAILED');
    expect(onTheWire(err).status).toBe(500);
    expect(err.message).toMatch(/AMOUNT_TOO_LARGE/);
    expect(err.message).toMatch(/no payout was created/);
    expect(err.details).toEqual({ step: 'QUOTE', provider_reason: 'AMOUNT_TOO_LARGE: above the corridor limit', payout_created: false });
    expect(calls).toEqual(['quote']);
  });

  it('still answers 503 PROVIDER_UNAVAILABLE when the quote cannot be had at all, and creates nothing', async () => {
    const { d, calls } = deps(
      async () => {
        throw new Error('no order may be placed');
      },
      async () => {
        throw new ProviderUnavailableError();
      },
    );
    const err = await domainErrorOf(createFarmerPayout(d, caller, input));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(calls).toEqual(['quote']);
  });
});

describe('createManualPayout: two keys and the limits handed to the creating transaction', () => {
  const manual = {
    farmer_id: 'F1',
    batch_id: 'BATCH-2026-000042',
    cooperative_id: 'C1',
    reason: 'MANUAL' as const,
    amount_usd_micro: 12_500_000,
  };

  it.each<[string, Caller]>([
    ['a COOPERATIVE token with only QUALITY_OFFICER', { sub: 'q', role: 'COOPERATIVE', cooperative_id: 'C1', duties: ['QUALITY_OFFICER'] }],
    ['an AGENT', { sub: 'a', role: 'AGENT', cooperative_id: 'C1', duties: [] }],
    ['an MFI', { sub: 'm', role: 'MFI', mfi_id: 'M1', duties: [] }],
  ])('%s: 403 INSUFFICIENT_PERMISSIONS before anything is read or quoted', async (_who, who) => {
    const { d, calls } = deps(async () => {
      throw new Error('no order');
    });
    const err = await domainErrorOf(createManualPayout(d, who, manual, { dailyLimitUsdMicro: 10_000_000_000 }));
    expect([err.code, onTheWire(err).status, err.details]).toEqual([
      'INSUFFICIENT_PERMISSIONS',
      403,
      { required_role: 'COOPERATIVE', required_duty: 'MANAGER' },
    ]);
    expect(calls).toEqual([]);
  });

  it('a MANAGER: the payout counts its UGX against the batch value (net payment + premium) and its USDC against the UTC day', async () => {
    const { d } = deps(async () => ({ order_id: 'o1', status: 'PENDING', amount_ugx: 46_253, exchange_rate: '3700.25' }) as never);
    const seen: unknown[] = [];
    d.payouts = {
      ...d.payouts,
      createPending: async (p, _seq, limits) => {
        seen.push({ counted: p.counted_ugx, day: p.manual_day, limits });
      },
      markProcessing: async (p) => ({ ...p, status: 'PROCESSING' }),
    };
    const batch = aBatch({ batch_id: 'BATCH-2026-000042', cooperative_id: 'C1', farmer_id: 'F1', payout_seq: 0 });
    d.batches = fakeBatchStore({ get: async () => batch });
    await createManualPayout(d, { sub: 'mgr', role: 'COOPERATIVE', cooperative_id: 'C1', duties: ['MANAGER'] }, manual, {
      dailyLimitUsdMicro: 10_000_000_000,
    });
    const premium = aCooperative({ cooperative_id: 'C1' }).export_premium_ugx_per_kg;
    expect(seen).toEqual([
      {
        counted: 46_253,
        day: '2026-11-22',
        limits: {
          batch_value_ugx: batch.payment_amount_ugx + Math.round(batch.weight_kg * premium),
          daily_limit_usd_micro: 10_000_000_000,
        },
      },
    ]);
  });
});

describe('the recipient name check before the first order (docs/api/payouts.md#recipient-name-check)', () => {
  const neverOrdered = async (): Promise<never> => {
    throw new Error('no order may be placed');
  };

  it('another holder: no order, FAILED with RECIPIENT_NAME_MISMATCH, the lifecycle started (manual review follows)', async () => {
    const { d, calls } = deps(neverOrdered);
    d.provider.lookupAccountHolder = async (phone) => {
      calls.push(`lookup ${phone}`);
      return { found: true, name: 'Grace Nakato Ssemwogerere' };
    };
    const err = await domainErrorOf(createFarmerPayout(d, caller, input));
    expect(err.code).toBe('PAYOUT_FAILED');
    expect(err.details).toEqual({ payout_id: 'PAY-2026-000042-01', status: 'FAILED', failure_reason: 'RECIPIENT_NAME_MISMATCH' });
    expect(calls).toEqual([
      'quote',
      'pending PAY-2026-000042-01 12500000',
      'lookup +256772000123',
      'rejected PAY-2026-000042-01 RECIPIENT_NAME_MISMATCH RECIPIENT_NAME_MISMATCH: the wallet is registered to "Grace Nakato Ssemwogerere", not to the farmer "Joseph Wamala"',
      'start PAY-2026-000042-01',
    ]);
  });

  it('not a wallet: INVALID_MSISDN, no order', async () => {
    const { d, calls } = deps(neverOrdered);
    d.provider.lookupAccountHolder = async () => ({ found: false });
    const err = await domainErrorOf(createFarmerPayout(d, caller, input));
    expect(err.details).toMatchObject({ failure_reason: 'INVALID_MSISDN' });
    expect(calls).not.toContain('order');
  });

  it('the same person written differently (case, accents, order, a middle name): the order is placed', async () => {
    const { d, calls } = deps(async () => {
      throw new ProviderRejectedError('STOP: reached the order');
    });
    d.provider.lookupAccountHolder = async () => ({ found: true, name: 'WAMALA Jósèph K.' });
    await domainErrorOf(createFarmerPayout(d, caller, input));
    expect(calls).toContain('order');
  });

  it('the lookup unreachable: nothing placed, the payout discarded, 503 PROVIDER_UNAVAILABLE', async () => {
    const { d, calls } = deps(neverOrdered);
    d.provider.lookupAccountHolder = async () => {
      throw new ProviderUnavailableError();
    };
    const err = await domainErrorOf(createFarmerPayout(d, caller, input));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(calls).toEqual(['quote', 'pending PAY-2026-000042-01 12500000', 'discard PAY-2026-000042-01']);
  });
});
