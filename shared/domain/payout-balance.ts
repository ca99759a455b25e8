import Big from 'big.js';
import { MICRO_PER_USDC } from './money';
import type { MerchantBalance } from './ports/payouts';

/**
 * The merchant balance alarm (docs/operations.md#merchant-balance-alarm): each payout provider's
 * merchant balance, in USD, against the threshold `PAYOUT_BALANCE_ALARM_USD`.
 */

/** The threshold unless `PAYOUT_BALANCE_ALARM_USD` says otherwise, USD. */
export const DEFAULT_PAYOUT_BALANCE_ALARM_USD = 1000;

/**
 * A provider's whole merchant balance in micro-USD: its USD entries as they are, its UGX entries
 * converted at `ugxPerUsd` (a decimal string, UGX per 1 USD) and rounded down, so the figure never
 * overstates what can be paid. `ugxPerUsd` is asked for only when there is a UGX entry.
 * @throws RangeError on an amount that is not a whole number (an overdrawn balance is negative), or a rate that is not positive
 */
export async function balanceUsdMicro(balances: readonly MerchantBalance[], ugxPerUsd: () => Promise<string>): Promise<number> {
  let total = new Big(0);
  let rate: string | undefined;
  for (const b of balances) {
    if (!Number.isSafeInteger(b.amount_minor))
      throw new RangeError(`merchant balance ${b.currency}: ${b.amount_minor} is not a whole amount`);
    if (b.currency === 'USD') total = total.plus(b.amount_minor);
    else {
      rate ??= await ugxPerUsd();
      if (!/^\d+(\.\d+)?$/.test(rate) || new Big(rate).lte(0)) throw new RangeError(`UGX per USD rate ${rate} is not a positive decimal`);
      total = total.plus(new Big(b.amount_minor).times(MICRO_PER_USDC).div(rate).round(0, Big.roundDown));
    }
  }
  return Number(total.toFixed(0));
}
