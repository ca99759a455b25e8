import Big from 'big.js';
import { DomainError } from './errors';

/**
 * Money (docs/api/conventions.md#identifiers-money-and-time): USDC amounts are integer micro-USDC (6 decimals) inside the service and
 * JSON numbers outside; UGX amounts are integer shillings. No binary float ever takes part in
 * arithmetic: numbers are converted through their decimal string with big.js.
 */

export const MICRO_PER_USDC = 1_000_000;
/** Largest single payout, USDC (docs/api/conventions.md#identifiers-money-and-time). */
const MAX_PAYOUT_USDC = 100_000;

/**
 * A JSON `amount_usdc` → integer micro-USDC. Errors: VALIDATION_ERROR when not > 0, more than
 * 6 decimals, or above 100,000 USDC.
 */
export function usdcToMicro(amount: number, field = 'amount_usdc'): number {
  if (typeof amount !== 'number' || !Number.isFinite(amount)) throw invalid(field, 'must be a number');
  const b = new Big(String(amount));
  if (b.lte(0)) throw invalid(field, 'must be greater than 0');
  const micro = b.times(MICRO_PER_USDC);
  if (!micro.mod(1).eq(0)) throw invalid(field, 'must have at most 6 decimals (USDC precision)');
  if (b.gt(MAX_PAYOUT_USDC)) throw invalid(field, `must be at most ${MAX_PAYOUT_USDC} USDC per payout`);
  return Number(micro.toFixed(0));
}

/** Integer micro-USDC → the JSON number with at most 6 decimals. */
export function microToUsdc(micro: number): number {
  return Number(new Big(micro).div(MICRO_PER_USDC).toFixed(6));
}

/** Integer micro-USD → decimal USD string with at most 6 decimals ("12.5", "0.000001"). Throws RangeError for a non-integer. */
export function microToDecimalString(micro: number): string {
  if (!Number.isSafeInteger(micro)) throw new RangeError(`amount in micro-USD must be a safe integer, got ${micro}`);
  return new Big(micro).div(MICRO_PER_USDC).toFixed();
}

/** Decimal USD string (at most 6 decimals) → integer micro-USD. Throws RangeError when not exactly representable. */
export function decimalStringToMicro(amount: string): number {
  if (typeof amount !== 'string' || !/^-?\d+(\.\d{1,6})?$/.test(amount)) {
    throw new RangeError(`not a decimal USD amount with at most 6 decimals: ${JSON.stringify(amount)}`);
  }
  const micro = Number(new Big(amount).times(MICRO_PER_USDC).toFixed(0));
  if (!Number.isSafeInteger(micro)) throw new RangeError(`USD amount out of range: ${amount}`);
  return micro;
}

/** `amount_ugx = floor(amount_usdc × exchange_rate)` (docs/api/conventions.md#identifiers-money-and-time); rate is UGX per USDC. */
export function ugxForMicro(micro: number, rate: string): number {
  return Number(new Big(micro).times(rate).div(MICRO_PER_USDC).round(0, Big.roundDown).toFixed(0));
}

/**
 * The least micro-USDC that buys at least `ugx` shillings at `rate` (docs/api/conventions.md#identifiers-money-and-time: "the USDC sent
 * is what buys that many shillings at the quoted rate").
 */
export function microForUgx(ugx: number, rate: string): number {
  let micro = Number(new Big(ugx).times(MICRO_PER_USDC).div(rate).round(0, Big.roundUp).toFixed(0));
  while (ugxForMicro(micro, rate) < ugx) micro += 1;
  return micro;
}

/** `round(weight_kg × price_ugx_per_kg)` in whole shillings (docs/api/conventions.md#identifiers-money-and-time). */
export function ugxForWeight(weightKg: number, priceUgxPerKg: number): number {
  return Number(new Big(String(weightKg)).times(priceUgxPerKg).round(0, Big.roundHalfUp).toFixed(0));
}

function invalid(field: string, message: string): DomainError {
  return new DomainError('VALIDATION_ERROR', `${field} ${message}`, { details: [{ path: field, message }] });
}
