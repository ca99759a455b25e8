/**
 * Loan terms and vault accounting rules (docs/api/lending.md#loans): when a loan is due, when it is at risk
 * (PAR30) and when it defaults and is written off; and the vault's share units. Pure: no I/O.
 * Times are ISO 8601 strings; money is integer micro-USDC.
 */
import type { Loan } from './lending';

/** Days from a loan's creation to its due date unless `LOAN_TERM_DAYS` says otherwise. */
export const DEFAULT_LOAN_TERM_DAYS = 180;
/** A loan still unpaid this many days after its due date is DEFAULTED and written off. */
export const DEFAULT_AFTER_DAYS_PAST_DUE = 90;
/** Portfolio at risk: loans this many days or more past due count in `par30_usdc`. */
export const PAR_DAYS_PAST_DUE = 30;

const DAY_MS = 86_400_000;

/**
 * The loan term in days from a setting's text: a whole number 1–3650; empty or undefined gives
 * DEFAULT_LOAN_TERM_DAYS. Errors: RangeError for anything else.
 */
export function loanTermDays(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_LOAN_TERM_DAYS;
  const n = Number(value.trim());
  if (!Number.isInteger(n) || n < 1 || n > 3650)
    throw new RangeError(`LOAN_TERM_DAYS must be a whole number of days from 1 to 3650, not ${JSON.stringify(value)}`);
  return n;
}

/** The due date of a loan created at `createdAt`: `termDays` whole days later (ISO). */
export function loanDueAt(createdAt: string, termDays: number): string {
  return new Date(Date.parse(createdAt) + termDays * DAY_MS).toISOString();
}

/** Whole days `now` is past `dueAt` (0 before or on the due instant; a started day does not count). */
export function daysPastDue(dueAt: string, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - Date.parse(dueAt)) / DAY_MS));
}

/** The latest instant a loan may be due to be `days` or more days past due at `now` (ISO). */
export function dueByForDaysPastDue(days: number, now: Date): string {
  return new Date(now.getTime() - days * DAY_MS).toISOString();
}

/** Loans that are still owed: stored ACTIVE (disbursed, neither repaid, cancelled nor written off). */
type OpenLoan = Pick<Loan, 'status' | 'due_at'>;

/** True when an ACTIVE loan with a due date is DEFAULT_AFTER_DAYS_PAST_DUE (90) or more days past it at `now`. */
export function isWriteOffDue(loan: OpenLoan, now: Date): boolean {
  return loan.status === 'ACTIVE' && loan.due_at !== undefined && daysPastDue(loan.due_at, now) >= DEFAULT_AFTER_DAYS_PAST_DUE;
}

/**
 * Portfolio at risk (PAR30): the principal (micro-USDC) of the ACTIVE loans PAR_DAYS_PAST_DUE (30)
 * or more days past due at `now`. Loans not ACTIVE or without a due date do not count.
 */
export function par30UsdMicro(loans: readonly Pick<Loan, 'status' | 'due_at' | 'principal_usd_micro'>[], now: Date): number {
  return loans
    .filter((l) => l.status === 'ACTIVE' && l.due_at !== undefined && daysPastDue(l.due_at, now) >= PAR_DAYS_PAST_DUE)
    .reduce((sum, l) => sum + l.principal_usd_micro, 0);
}

// ---------------------------------------------------------------- vault share units

/** Decimals of the vault's asset (USDC). */
const VAULT_ASSET_DECIMALS = 6;
/** The vault's decimals offset (LendingVault.DECIMALS_OFFSET): virtual shares against the inflation attack. */
const VAULT_DECIMALS_OFFSET = 6;
/** Decimals of a vault share on chain: the asset's plus the offset (12). */
const VAULT_SHARE_DECIMALS = VAULT_ASSET_DECIMALS + VAULT_DECIMALS_OFFSET;

/**
 * On-chain share units (12 decimals) as the API shows them: integers of 10^-6 share (micro-shares,
 * 6 decimals like the asset), rounded down, so a figure stays a safe JSON integer.
 */
export function microShares(onChainUnits: bigint): number {
  return Number(onChainUnits / 10n ** BigInt(VAULT_DECIMALS_OFFSET));
}

/**
 * USDC per whole share (10^12 units), 6 decimals rounded down: total assets / total shares; 1
 * for a vault without shares (the price the first deposit pays).
 */
export function sharePriceUsdc(totalAssetsUsdMicro: bigint, totalShareUnits: bigint): number {
  if (totalShareUnits === 0n) return 1;
  return Number((totalAssetsUsdMicro * 10n ** BigInt(VAULT_SHARE_DECIMALS)) / totalShareUnits) / 1_000_000;
}
