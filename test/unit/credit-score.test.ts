import fc from 'fast-check';
import {
  classifyLoans,
  computeCreditScore,
  creditBand,
  creditScoreFormulaText,
  CREDIT_SCORE_BASE,
  CREDIT_SCORE_MAX,
  CREDIT_SCORE_MIN,
  LOAN_ON_TIME_DAYS,
  type CreditScoreInputs,
} from '../../shared/domain/credit-score';
import { DomainError } from '../../shared/domain/errors';
import type { Loan } from '../../shared/domain/lending';
import type { Batch } from '../../shared/domain/records';
import { openApiDocument } from '../../shared/http/openapi';
import { getCreditScore, type CreditScoreDeps } from '../../shared/use-cases/credit-score';
import { ADMIN, agent, coop, mfi } from './support/api-event';
import { aBatch, aFarmer, aPayout, fakeBatchStore, fakePayoutStore, fakeRegistryStore } from './support/fakes';
import { wire } from './support/errors';

/**
 * The credit score (docs/api/lending.md#credit-score): the pure formula (property tests, fast-check 1,000 runs each;
 * on a failure fast-check prints the seed and the shrunk counterexample — replay with
 * `fc.assert(…, { seed, path })`), the loan classification, and the use case with fakes (access,
 * what it reads).
 */

const RUNS = { numRuns: 1_000 };
const DAY = 86_400_000;
const NOW = new Date('2026-11-22T12:00:00.000Z');

const count = fc.integer({ min: 0, max: 60 });
const kg = fc.integer({ min: 0, max: 2_000_000 }).map((c) => c / 100);
const inputs: fc.Arbitrary<CreditScoreInputs> = fc.record({
  deliveries: fc.integer({ min: 0, max: 500 }),
  kg_by_grade: fc.record({ screen18: kg, screen15: kg, FAQ: kg, PB: kg }),
  loans_repaid_on_time: count,
  loans_repaid_late: count,
  defaults: count,
  tenure_days: fc.integer({ min: 0, max: 20_000 }),
  manual_review_payouts: count,
});

describe('credit score formula (properties)', () => {
  it('is an integer in 300–850, its band follows from it, and it is base + Σ effects clamped', () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const r = computeCreditScore(i);
        const raw = CREDIT_SCORE_BASE + r.factors.reduce((a, f) => a + f.effect, 0);
        return (
          Number.isInteger(r.score) &&
          r.score >= CREDIT_SCORE_MIN &&
          r.score <= CREDIT_SCORE_MAX &&
          r.score === Math.min(CREDIT_SCORE_MAX, Math.max(CREDIT_SCORE_MIN, raw)) &&
          r.band === creditBand(r.score) &&
          r.factors.every((f) => Number.isInteger(f.effect) && !Object.is(f.effect, -0))
        );
      }),
      RUNS,
    );
  });

  it('is deterministic: the same inputs give the same result', () => {
    fc.assert(
      fc.property(inputs, (i) => JSON.stringify(computeCreditScore(i)) === JSON.stringify(computeCreditScore(structuredClone(i)))),
      RUNS,
    );
  });

  it('never falls with one more loan repaid on time, and never rises with one more default', () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const s = computeCreditScore(i).score;
        return (
          computeCreditScore({ ...i, loans_repaid_on_time: i.loans_repaid_on_time + 1 }).score >= s &&
          computeCreditScore({ ...i, defaults: i.defaults + 1 }).score <= s
        );
      }),
      RUNS,
    );
  });

  it('a default always costs points while the score is above the floor', () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const s = computeCreditScore(i).score;
        const after = computeCreditScore({ ...i, defaults: i.defaults + 1 }).score;
        return s === CREDIT_SCORE_MIN ? after === CREDIT_SCORE_MIN : after < s;
      }),
      RUNS,
    );
  });
});

describe('credit score formula (examples)', () => {
  const none: CreditScoreInputs = {
    deliveries: 0,
    kg_by_grade: { screen18: 0, screen15: 0, FAQ: 0, PB: 0 },
    loans_repaid_on_time: 0,
    loans_repaid_late: 0,
    defaults: 0,
    tenure_days: 0,
    manual_review_payouts: 0,
  };

  it('a farmer with no history scores the base, band E, with every factor shown at 0', () => {
    const r = computeCreditScore(none);
    expect(r).toEqual({
      score: 500,
      band: 'E',
      formula_version: '1',
      factors: [
        'deliveries',
        'volume_kg',
        'quality',
        'loans_repaid_on_time',
        'loans_repaid_late',
        'defaults',
        'tenure_days',
        'manual_review_payouts',
      ].map((name) => ({ name, value: 0, effect: 0 })),
    });
  });

  it('a typical farmer: each factor with its points', () => {
    const r = computeCreditScore({
      ...none,
      deliveries: 10,
      kg_by_grade: { screen18: 500, screen15: 1500, FAQ: 0, PB: 0 },
      loans_repaid_on_time: 1,
      tenure_days: 365,
      manual_review_payouts: 1,
    });
    const effects = Object.fromEntries(r.factors.map((f) => [f.name, [f.value, f.effect]]));
    // quality index floor((500×100 + 1500×75) / 2000) = 81 → floor(81 × 60 / 100) − 30 = 18
    expect(effects).toEqual({
      deliveries: [10, 40],
      volume_kg: [2000, 20],
      quality: [81, 18],
      loans_repaid_on_time: [1, 40],
      loans_repaid_late: [0, 0],
      defaults: [0, 0],
      tenure_days: [365, 12],
      manual_review_payouts: [1, -10],
    });
    expect(r.score).toBe(500 + 40 + 20 + 18 + 40 + 12 - 10);
    expect(r.band).toBe('C');
  });

  it('caps each factor and clamps the score', () => {
    const best = computeCreditScore({
      deliveries: 100,
      kg_by_grade: { screen18: 100_000, screen15: 0, FAQ: 0, PB: 0 },
      loans_repaid_on_time: 10,
      loans_repaid_late: 10,
      defaults: 0,
      tenure_days: 10_000,
      manual_review_payouts: 0,
    });
    expect(best.factors.map((f) => f.effect)).toEqual([80, 60, 30, 160, 30, 0, 40, 0]);
    expect(best).toMatchObject({ score: 850, band: 'A' });
    const worst = computeCreditScore({ ...none, defaults: 5, manual_review_payouts: 9 });
    expect(worst.factors.find((f) => f.name === 'manual_review_payouts')!.effect).toBe(-30);
    expect(worst).toMatchObject({ score: 300, band: 'E' });
  });

  it('bands at their thresholds', () => {
    expect([850, 750, 749, 680, 679, 620, 619, 560, 559, 300].map(creditBand)).toEqual(['A', 'A', 'B', 'B', 'C', 'C', 'D', 'D', 'E', 'E']);
  });

  it('refuses negative or fractional counts', () => {
    expect(() => computeCreditScore({ ...none, defaults: -1 })).toThrow(RangeError);
    expect(() => computeCreditScore({ ...none, deliveries: 1.5 })).toThrow(RangeError);
  });

  it('the API reference states the formula with the same constants', () => {
    const note = (openApiDocument('http://x').paths['/farmers/{id}/credit-score'] as Record<string, { description?: string }>).get!
      .description!;
    expect(note).toContain(creditScoreFormulaText());
    for (const s of [
      'score = 500',
      'A ≥ 750',
      'B ≥ 680',
      'C ≥ 620',
      'D ≥ 560',
      '+40 each, at most +160',
      '-120 each',
      `${LOAN_ON_TIME_DAYS} days`,
    ])
      expect(note).toContain(s);
  });
});

const loan = (over: Partial<Loan>): Loan => ({
  loan_id: 'LOAN-2026-000001',
  batch_id: 'BATCH-2026-000001',
  token_id: '1',
  farmer_id: 'F-1',
  cooperative_id: 'COOP-1',
  principal_usd_micro: 100_000_000,
  apr: '0.12',
  status: 'ACTIVE',
  collateral_value_usd_micro: 500_000_000,
  ltv_bps: 2_000,
  price_usd_micro_per_kg: 6_200_000,
  price_updated_at: '2026-01-01T00:00:00.000Z',
  disbursement_payment_id: 'DISB-2026-000001',
  created_at: '2026-01-01T00:00:00.000Z',
  created_by: 'u',
  disbursed_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});
const daysBefore = (d: number, from = NOW) => new Date(from.getTime() - d * DAY).toISOString();
const daysAfter = (d: number, from: string) => new Date(Date.parse(from) + d * DAY).toISOString();

describe('loan classification', () => {
  it(`repaid within ${LOAN_ON_TIME_DAYS} days is on time, later is late; ACTIVE past it is a default; the rest does not count`, () => {
    const d0 = daysBefore(400);
    expect(
      classifyLoans(
        [
          loan({ status: 'REPAID', disbursed_at: d0, repaid_at: daysAfter(LOAN_ON_TIME_DAYS, d0) }),
          loan({ status: 'REPAID', disbursed_at: d0, repaid_at: daysAfter(LOAN_ON_TIME_DAYS + 1, d0) }),
          loan({ status: 'ACTIVE', disbursed_at: daysBefore(LOAN_ON_TIME_DAYS + 1) }),
          loan({ status: 'ACTIVE', disbursed_at: daysBefore(LOAN_ON_TIME_DAYS - 1) }),
          loan({ status: 'ACTIVE', disbursed_at: undefined, created_at: daysBefore(LOAN_ON_TIME_DAYS + 2) }),
          loan({ status: 'PENDING', created_at: daysBefore(999) }),
          loan({ status: 'CANCELLED', created_at: daysBefore(999) }),
        ],
        NOW,
      ),
    ).toEqual({ repaid_on_time: 1, repaid_late: 1, defaults: 2 });
  });

  it('a DEFAULTED (written-off) loan is a default, however recent', () => {
    expect(classifyLoans([loan({ status: 'DEFAULTED', disbursed_at: daysBefore(1) })], NOW)).toEqual({
      repaid_on_time: 0,
      repaid_late: 0,
      defaults: 1,
    });
  });
});

describe('getCreditScore (use case)', () => {
  const farmer = aFarmer({ registered_at: daysBefore(95) });
  const batches: Batch[] = [
    aBatch({ batch_id: 'BATCH-2026-000001', weight_kg: 100.25, grade: 'screen18' }),
    aBatch({ batch_id: 'BATCH-2026-000002', weight_kg: 99.75, grade: 'FAQ', payment_status: 'MANUAL_REVIEW' }),
  ];
  const d0 = daysBefore(300);
  const loans = [
    loan({ status: 'REPAID', disbursed_at: d0, repaid_at: daysAfter(30, d0) }),
    loan({ status: 'ACTIVE', disbursed_at: daysBefore(200) }),
  ];
  const calls: unknown[][] = [];
  const deps = (over: Partial<CreditScoreDeps> = {}): CreditScoreDeps => ({
    registry: fakeRegistryStore({ getFarmer: async (id) => (id === farmer.farmer_id ? farmer : null) }),
    batches: fakeBatchStore({
      listByFarmer: async (...args) => {
        calls.push(['batches', ...args]);
        return batches;
      },
    }),
    loans: {
      listByFarmer: async (...args) => {
        calls.push(['loans', ...args]);
        return loans;
      },
    },
    payouts: fakePayoutStore({ get: async () => null }),
    now: () => NOW,
    ...over,
  });

  it('scores the farmer from its batches, loans and registration', async () => {
    calls.length = 0;
    const r = await getCreditScore(deps(), coop('COOP-1'), 'F-1');
    expect(calls).toEqual([
      ['batches', 'F-1', 'COOP-1', 1_000],
      ['loans', 'F-1', 200],
    ]);
    const factor = Object.fromEntries(r.factors.map((f) => [f.name, [f.value, f.effect]]));
    // quality: floor((100.25×100 + 99.75×40) / 200) = 70 → floor(70×60/100) − 30 = 12
    expect(factor).toEqual({
      deliveries: [2, 8],
      volume_kg: [200, 2],
      quality: [70, 12],
      loans_repaid_on_time: [1, 40],
      loans_repaid_late: [0, 0],
      defaults: [1, -120],
      tenure_days: [95, 3],
      manual_review_payouts: [1, -10],
    });
    expect(r).toMatchObject({
      farmer_id: 'F-1',
      score: 500 + 8 + 2 + 12 + 40 - 120 + 3 - 10,
      band: 'E',
      computed_at: NOW.toISOString(),
      formula_version: '1',
    });
  });

  it('a stored PENDING loan whose disbursement settled long ago counts as outstanding (a default after 180 days)', async () => {
    const pending = loan({ status: 'PENDING', disbursed_at: undefined, created_at: daysBefore(400) });
    const settledDisbursement = aPayout({
      payment_id: pending.disbursement_payment_id,
      status: 'COMPLETED',
      completed_at: daysBefore(399),
    });
    const r = await getCreditScore(
      deps({ loans: { listByFarmer: async () => [pending] }, payouts: fakePayoutStore({ get: async () => settledDisbursement }) }),
      ADMIN,
      'F-1',
    );
    expect(r.factors.find((f) => f.name === 'defaults')).toMatchObject({ value: 1 });
    const unsent = await getCreditScore(deps({ loans: { listByFarmer: async () => [pending] } }), ADMIN, 'F-1');
    expect(unsent.factors.find((f) => f.name === 'defaults')).toMatchObject({ value: 0 });
  });

  it('answers ADMIN and any MFI the same', async () => {
    const a = await getCreditScore(deps(), ADMIN, 'F-1');
    const m = await getCreditScore(deps(), mfi('MFI-9'), 'F-1');
    expect(m).toEqual(a);
  });

  it('403 INSUFFICIENT_PERMISSIONS for another cooperative, before reading batches or loans', async () => {
    const untouched = deps({
      batches: fakeBatchStore(),
      loans: {
        listByFarmer: async () => {
          throw new Error('unexpected');
        },
      },
    });
    await expect(wire(getCreditScore(untouched, coop('COOP-2'), 'F-1'))).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
      status: 403,
    });
    await expect(getCreditScore(untouched, agent('COOP-2'), 'F-1')).rejects.toBeInstanceOf(DomainError);
  });

  it('404 FARMER_NOT_REGISTERED for an unknown farmer', async () => {
    await expect(wire(getCreditScore(deps({ batches: fakeBatchStore() }), ADMIN, 'F-404'))).rejects.toMatchObject({
      code: 'FARMER_NOT_REGISTERED',
      status: 404,
    });
  });
});
