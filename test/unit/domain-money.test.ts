import { DomainError } from '../../shared/domain/errors';
import { microForUgx, microToUsdc, ugxForMicro, ugxForWeight, usdcToMicro } from '../../shared/domain/money';

/** The money rules (shared/domain/money.ts): integer micro-USDC and UGX, exact conversions. */

/** Deterministic PRNG (mulberry32) so property loops are reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Independent oracle: a decimal rate string as an exact fraction num/den (BigInt). */
function rateFraction(rate: string): { num: bigint; den: bigint } {
  const [int, frac = ''] = rate.split('.');
  return { num: BigInt(`${int}${frac}`), den: 10n ** BigInt(frac.length) };
}

/** Oracle for floor(micro × rate / 10^6) in exact integer arithmetic. */
function oracleUgx(micro: number, rate: string): number {
  const { num, den } = rateFraction(rate);
  return Number((BigInt(micro) * num) / (den * 1_000_000n));
}

function expectDomainError(fn: () => unknown, code: string, path?: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(DomainError);
  expect((caught as DomainError).code).toBe(code);
  if (path) expect((caught as DomainError).details).toEqual([expect.objectContaining({ path })]);
}

describe('money: usdcToMicro', () => {
  it('converts whole and fractional USDC amounts to exact integer micro-USDC', () => {
    // Prepare
    const cases: Array<[number, number]> = [
      [1, 1_000_000],
      [12.5, 12_500_000],
      [0.000001, 1],
      [0.3, 300_000],
      [99_999.999999, 99_999_999_999],
    ];

    // Act
    const results = cases.map(([amount]) => usdcToMicro(amount));

    // Assess
    expect(results).toEqual(cases.map(([, micro]) => micro));
  });

  it('accepts exactly 100000 USDC, the largest single payout', () => {
    // Act
    const micro = usdcToMicro(100_000);

    // Assess
    expect(micro).toBe(100_000_000_000);
  });

  it('rejects 100000.000001 USDC as above the per-payout maximum', () => {
    // Act + Assess
    expectDomainError(() => usdcToMicro(100_000.000001), 'VALIDATION_ERROR', 'amount_usdc');
  });

  it.each([[0], [-0], [-1], [-0.000001]])('rejects %p as not greater than 0', (amount) => {
    // Act + Assess
    expectDomainError(() => usdcToMicro(amount), 'VALIDATION_ERROR', 'amount_usdc');
  });

  it.each([[1.0000001], [0.1234567], [0.0000005]])('rejects %p, which has 7 decimals (beyond USDC precision)', (amount) => {
    // Act + Assess
    expectDomainError(() => usdcToMicro(amount), 'VALIDATION_ERROR', 'amount_usdc');
  });

  it.each([[Number.NaN], [Number.POSITIVE_INFINITY]])('rejects the non-finite number %p', (amount) => {
    // Act + Assess
    expectDomainError(() => usdcToMicro(amount), 'VALIDATION_ERROR', 'amount_usdc');
  });

  it('names the given field in the validation details', () => {
    // Act + Assess
    expectDomainError(() => usdcToMicro(0, 'data.amount'), 'VALIDATION_ERROR', 'data.amount');
  });

  it('converts amounts whose binary float product is inexact (1.005, 8.2) and 0.3 exactly', () => {
    // Prepare: naive float multiplication gets these wrong
    expect(1.005 * 1_000_000).not.toBe(1_005_000);
    expect(8.2 * 1_000_000).not.toBe(8_200_000);

    // Act
    const results = [1.005, 8.2, 0.3].map((a) => usdcToMicro(a));

    // Assess
    expect(results).toEqual([1_005_000, 8_200_000, 300_000]);
  });

  it('rejects 0.1 + 0.2 (0.30000000000000004) rather than silently rounding it', () => {
    // Prepare
    const sum = 0.1 + 0.2;

    // Act + Assess
    expectDomainError(() => usdcToMicro(sum), 'VALIDATION_ERROR', 'amount_usdc');
  });

  it('converts every cent amount from 0.01 to 250.00 USDC exactly (property)', () => {
    // Prepare
    const wrong: number[] = [];

    // Act
    for (let cents = 1; cents <= 25_000; cents++) {
      const amount = cents / 100;
      if (usdcToMicro(amount) !== cents * 10_000) wrong.push(amount);
    }

    // Assess
    expect(wrong).toEqual([]);
  });

  it('round-trips micro-USDC values through microToUsdc (property)', () => {
    // Prepare
    const rnd = prng(7);
    const wrong: number[] = [];

    // Act
    for (let i = 0; i < 5_000; i++) {
      const micro = 1 + Math.floor(rnd() * 100_000_000_000);
      if (usdcToMicro(microToUsdc(micro)) !== micro) wrong.push(micro);
    }

    // Assess
    expect(wrong).toEqual([]);
  });
});

describe('money: ugxForMicro', () => {
  it('floors the shilling amount (never rounds up)', () => {
    // Act + Assess
    expect(ugxForMicro(1_000_000, '3700.99')).toBe(3700);
    expect(ugxForMicro(1, '3700')).toBe(0);
    expect(ugxForMicro(270, '3700')).toBe(0); // 0.999 UGX
    expect(ugxForMicro(271, '3700')).toBe(1); // 1.0027 UGX
    expect(ugxForMicro(12_500_000, '3712.5')).toBe(46_406); // 46406.25
  });

  it('matches exact integer arithmetic for many amounts and rates (property)', () => {
    // Prepare
    const rnd = prng(11);
    const rates = ['3700', '3751.23', '3812.123456', '3699.999999', '1', '0.5', '4100.07'];
    const mismatches: string[] = [];

    // Act
    for (let i = 0; i < 3_000; i++) {
      const micro = Math.floor(rnd() * 100_000_000_000);
      const rate = rates[i % rates.length]!;
      const got = ugxForMicro(micro, rate);
      if (got !== oracleUgx(micro, rate)) mismatches.push(`${micro}@${rate}=${got}`);
    }

    // Assess
    expect(mismatches).toEqual([]);
  });
});

describe('money: microForUgx', () => {
  it('returns the least micro-USDC that buys at least the shillings (property over amounts and rates)', () => {
    // Prepare
    const rnd = prng(42);
    const rates = ['3700', '3751.23', '3812.123456', '3699.999999', '3333.333333', '1', '0.5', '4100.07', '3725.5'];
    const failures: string[] = [];

    // Act
    for (let i = 0; i < 4_000; i++) {
      const ugx = i < 200 ? i + 1 : 1 + Math.floor(rnd() * 400_000_000);
      const rate = rates[i % rates.length]!;
      const micro = microForUgx(ugx, rate);
      const buysEnough = oracleUgx(micro, rate) >= ugx;
      const isLeast = micro === 0 || oracleUgx(micro - 1, rate) < ugx;
      if (!Number.isSafeInteger(micro) || !buysEnough || !isLeast) failures.push(`${ugx}@${rate}→${micro}`);
    }

    // Assess
    expect(failures).toEqual([]);
  });

  it('pays 1,000,000 micro for 3700 UGX at a round rate of 3700', () => {
    // Act + Assess
    expect(microForUgx(3700, '3700')).toBe(1_000_000);
    expect(microForUgx(3701, '3700')).toBe(1_000_271);
  });
});

describe('money: ugxForWeight', () => {
  it.each([
    [60.25, 7000, 421_750],
    [12.5, 1, 13], // half rounds up
    [2.5, 1, 3],
    [0.1, 3, 0],
    [1.15, 10, 12], // 1.15 × 10 is 11.499999999999998 in binary floats
    [1.005, 1000, 1005], // 1004.9999999999999 in binary floats
    [5000, 1_000_000, 5_000_000_000],
    [1, 0, 0],
  ])('round(%p kg × %p UGX/kg) = %p', (weight, price, expected) => {
    // Act
    const ugx = ugxForWeight(weight, price);

    // Assess
    expect(ugx).toBe(expected);
  });
});
