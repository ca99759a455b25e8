/**
 * MFI deposits (docs/api/lending.md#mfi-deposits): the rules of `POST /mfi/deposits` that are not transport —
 * which fiat currencies the on-ramp takes, how large one deposit may be, and the deposit id
 * format. The record itself is `Deposit` in ./lending.ts. Nothing here does I/O.
 */

/** ISO 4217 currencies an MFI may deposit from (the on-ramp's supported set). */
export const DEPOSIT_SOURCE_CURRENCIES = ['UGX', 'KES', 'USD'] as const;

/** Largest `source_amount` of one deposit, in whole units of the source currency (any currency). */
export const MAX_DEPOSIT_SOURCE_AMOUNT = 100_000_000_000;

/** `DEP-<yyyy>-<nnnnnn>` of the `n`-th deposit of `year` (at least 6 digits). */
export function depositId(year: number, n: number): string {
  return `DEP-${year}-${String(n).padStart(6, '0')}`;
}

/** True for an id `depositId` mints. */
export function isDepositId(id: string): boolean {
  return /^DEP-\d{4}-\d{6,12}$/.test(id);
}

/** Id of the vault write that puts a deposit's USDC into the vault (VaultWriteQueue). */
export const depositWriteId = (paymentId: string) => `${paymentId}-deposit`;
/** Id of the vault write that withdraws a reversed deposit's shares. */
export const reversalWriteId = (paymentId: string) => `${paymentId}-reverse`;
