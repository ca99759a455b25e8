import { ugxForWeight } from './money';

/**
 * Limits on money leaving for one batch and one cooperative (docs/api/settlement.md#money-controls):
 *  - the FARMER_PAYOUTs of a batch together never exceed the batch's value in UGX;
 *  - the manual payouts (POST /payments/farmer-payout) of one cooperative are capped per UTC day.
 * Both are enforced by conditions in the transaction that creates the payout, so concurrent
 * creations cannot pass them together.
 */

/** Daily cap of a cooperative's manual payouts unless `MANUAL_PAYOUT_DAILY_LIMIT_USDC` says otherwise. */
export const DEFAULT_MANUAL_PAYOUT_DAILY_LIMIT_USDC = 10_000;

/**
 * The export premium of a batch in whole UGX: `round(weight_kg × export_premium_ugx_per_kg)`,
 * 0 when the cooperative pays no premium. The automatic TOP_UP payout pays exactly this.
 */
export function exportPremiumUgx(weightKg: number, premiumUgxPerKg: number | undefined): number {
  const premium = premiumUgxPerKg ?? 0;
  return premium > 0 ? ugxForWeight(weightKg, premium) : 0;
}

/**
 * A batch's value in whole UGX: `weight_kg × (prices_ugx_per_kg[grade] + export_premium_ugx_per_kg)`,
 * taken from the same figures the automatic payouts pay: the net coffee payment fixed at submission
 * (`payment_amount_ugx` = round(weight_kg × the grade's price then)) plus the export premium
 * (`exportPremiumUgx`). The sum of a batch's FARMER_PAYOUTs, each in UGX at its quoted rate, may
 * not exceed it.
 */
export function batchValueUgx(batch: { payment_amount_ugx: number; weight_kg: number }, premiumUgxPerKg: number | undefined): number {
  return batch.payment_amount_ugx + exportPremiumUgx(batch.weight_kg, premiumUgxPerKg);
}

/** The UTC calendar day (`YYYY-MM-DD`) a manual payout counts against. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The limits a payout's creating transaction enforces (see `PayoutStore.createPending`). */
export interface PayoutCreationLimits {
  /** FARMER_PAYOUT: the batch's value; the payout's `counted_ugx` is added to the batch's running total under it. */
  batch_value_ugx?: number;
  /** Manual payouts: the cooperative's UTC day (`manual_day` on the payout) and its cap in micro-USDC. */
  daily_limit_usd_micro?: number;
}
