/**
 * Lending (docs/api/lending.md#mfi-deposits): the records of loans and MFI deposits, the constants of the
 * specification, and the pure rules — collateral value, loan-to-value, interest per started day.
 * Money is integer micro-USDC (`*_usd_micro`, 6 decimals, as the vault's asset on chain); prices
 * are integer micro-USD per kg. Nothing here does I/O.
 */

import { createHash } from 'node:crypto';
import type { Grade, Payout } from './records';

/** Largest loan-to-value: 60 % of the collateral value, in basis points. */
const MAX_LTV_BPS = 6_000;
/** Smallest loan: 50 USDC (INSUFFICIENT_COLLATERAL below it). */
export const MIN_LOAN_USD_MICRO = 50_000_000;
/** A price feed older than this pauses loan origination (503 STALE_PRICE_FEED). */
export const PRICE_FEED_MAX_AGE_SECONDS = 3_600;
/** The vault's annual rate unless `LOAN_APR` says otherwise (simple interest, per started day). */
export const DEFAULT_LOAN_APR = '0.12';
/** Days in the interest year (simple interest: principal × apr × days / 365). */
const INTEREST_DAYS_PER_YEAR = 365;

/** The coffee price feed: micro-USD per kg by grade, with the time the source published it. */
export interface PriceFeedSnapshot {
  updated_at: string;
  usd_micro_per_kg: Record<Grade, number>;
  /** Where it came from (an URL or the local file path), for the loan record and the logs. */
  source: string;
}

const LOAN_STATUSES = ['PENDING', 'ACTIVE', 'REPAID', 'CANCELLED', 'DEFAULTED'] as const;
export type LoanStatus = (typeof LOAN_STATUSES)[number];

/** A loan against a BatchToken (docs/api/lending.md#loans). */
export interface Loan {
  /** `LOAN-<yyyy>-<nnnnnn>`. */
  loan_id: string;
  batch_id: string;
  token_id: string;
  farmer_id: string;
  cooperative_id: string;
  principal_usd_micro: number;
  /** Annual rate as a decimal string, e.g. "0.12". */
  apr: string;
  status: LoanStatus;
  collateral_value_usd_micro: number;
  /** principal / collateral value, basis points. */
  ltv_bps: number;
  price_usd_micro_per_kg: number;
  price_updated_at: string;
  /** The LOAN_DISBURSEMENT payment (`DISB-…`). */
  disbursement_payment_id: string;
  lock_tx_hash?: string;
  repaid_usd_micro?: number;
  repay_tx_hash?: string;
  /** The purchase order whose buyer payment repaid it. */
  repaid_by_purchase_order_id?: string;
  created_at: string;
  created_by: string;
  disbursed_at?: string;
  repaid_at?: string;
  cancelled_at?: string;
  /** Why a loan was CANCELLED (e.g. the vault refused the lock). */
  cancel_reason?: string;
  /** When the loan is due: creation + LOAN_TERM_DAYS (see shared/domain/loan-terms.ts). Absent on loans made before terms existed. */
  due_at?: string;
  /** DEFAULTED: when the write-off was mined, its transaction, and the principal lost (micro-USDC). */
  defaulted_at?: string;
  write_off_tx_hash?: string;
  loss_usd_micro?: number;
  updated_at: string;
}

const DEPOSIT_STATUSES = ['PROCESSING', 'COMPLETED', 'FAILED', 'REFUNDED'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

/** An MFI deposit into the lending vault through the fiat on-ramp (payment type MFI_DEPOSIT). */
export interface Deposit {
  /** `DEP-<yyyy>-<nnnnnn>`. */
  payment_id: string;
  payment_type: 'MFI_DEPOSIT';
  mfi_id: string;
  status: DepositStatus;
  /** ISO 4217. */
  source_currency: string;
  /** Integer, in the source currency's minor-unit-free amount as the specification has it. */
  source_amount: number;
  /** USDC the on-ramp delivered (0 until known). */
  amount_usd_micro: number;
  ramp_payment_id?: string;
  chain_tx_hash?: string;
  vault_shares_issued?: string;
  refund_tx_hash?: string;
  /** When the on-ramp's reversal was confirmed; the vault reversal is requested once the deposit is COMPLETED. */
  reversed_at?: string;
  failure_reason?: string;
  created_at: string;
  created_by: string;
  completed_at?: string;
  refunded_at?: string;
  updated_at: string;
}

/**
 * Collateral value of a batch: weight × price of its grade, micro-USD (rounded down).
 * Errors: RangeError for a negative or non-integer price or a negative weight.
 */
export function collateralValueUsdMicro(weightKg: number, priceUsdMicroPerKg: number): number {
  if (!Number.isInteger(priceUsdMicroPerKg) || priceUsdMicroPerKg < 0 || !(weightKg >= 0))
    throw new RangeError('weight and price must be non-negative');
  // weight has at most 2 decimals (request schema): work in hundredths of a kg to stay exact.
  const centiKg = BigInt(Math.round(weightKg * 100));
  return Number((centiKg * BigInt(priceUsdMicroPerKg)) / 100n);
}

/** The largest loan the collateral supports: 60 % of its value (micro-USDC, rounded down). */
export function maxLoanUsdMicro(collateralUsdMicro: number): number {
  return Number((BigInt(collateralUsdMicro) * BigInt(MAX_LTV_BPS)) / 10_000n);
}

/** Loan-to-value of a principal against a collateral value, basis points rounded up (0 collateral: Infinity). */
export function ltvBps(principalUsdMicro: number, collateralUsdMicro: number): number {
  if (collateralUsdMicro <= 0) return Number.POSITIVE_INFINITY;
  const p = BigInt(principalUsdMicro) * 10_000n;
  const c = BigInt(collateralUsdMicro);
  return Number((p + c - 1n) / c);
}

/**
 * Days of interest between disbursement and repayment: every started day counts (docs/api/lending.md#loans), at least 1 (a loan repaid the day it was disbursed pays one day).
 */
export function interestDays(disbursedAt: string, repaidAt: string): number {
  const ms = Date.parse(repaidAt) - Date.parse(disbursedAt);
  return Math.max(1, Math.ceil(ms / 86_400_000));
}

/**
 * Simple interest: principal × apr × days / 365, micro-USDC rounded up (the lender is never
 * short-changed by rounding). `apr` is a decimal string with at most 6 decimals ("0.12").
 * Errors: RangeError for a malformed apr.
 */
export function interestUsdMicro(principalUsdMicro: number, apr: string, days: number): number {
  const m = /^(\d{1,2})(?:\.(\d{1,6}))?$/.exec(apr);
  if (!m) throw new RangeError(`malformed apr ${apr}`);
  const aprMicro = BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
  const num = BigInt(principalUsdMicro) * aprMicro * BigInt(days);
  const den = 1_000_000n * BigInt(INTEREST_DAYS_PER_YEAR);
  return Number((num + den - 1n) / den);
}

/** What repays a loan at `repaidAt`: principal plus interest (micro-USDC). */
export function repaymentDueUsdMicro(
  loan: Pick<Loan, 'principal_usd_micro' | 'apr' | 'disbursed_at' | 'created_at'>,
  repaidAt: string,
): number {
  const days = interestDays(loan.disbursed_at ?? loan.created_at, repaidAt);
  return loan.principal_usd_micro + interestUsdMicro(loan.principal_usd_micro, loan.apr, days);
}

/** True when the snapshot is older than PRICE_FEED_MAX_AGE_SECONDS at `now` (or from the future by more than a minute). */
export function isPriceFeedStale(snapshot: Pick<PriceFeedSnapshot, 'updated_at'>, now: Date): boolean {
  const at = Date.parse(snapshot.updated_at);
  if (!Number.isFinite(at)) return true;
  const age = (now.getTime() - at) / 1000;
  return age > PRICE_FEED_MAX_AGE_SECONDS || age < -60;
}

/** One loan's part of a settlement. */
export interface SettlementRepayment {
  loan_id: string;
  batch_id: string;
  principal_usd_micro: number;
  interest_usd_micro: number;
  /** principal + interest: what the vault takes from the buyer payment. */
  amount_usd_micro: number;
  /** REQUESTED: the vault write is queued; REPAID: mined; REFUSED: the vault refused it (alarm). */
  status: 'REQUESTED' | 'REPAID' | 'REFUSED';
  repay_tx_hash?: string;
}

/**
 * The settlement of a purchase order on its buyer's payment into the vault (docs/api/settlement.md#settlement): exactly one per purchase order.
 */
export interface Settlement {
  purchase_order_id: string;
  cooperative_id: string;
  status: 'STARTED' | 'COMPLETED';
  /** The counted payment that completed the amount due (or the last one, for a short settlement). */
  payment_tx_hash: string;
  payment_log_index: number;
  payer: string;
  /** What the settlement applies: the sum of the payments counted toward the order. */
  amount_usd_micro: number;
  /** The order's amount due when it was settled (null: not known, a batch not milled). */
  amount_due_usd_micro?: number | null;
  /** Every payment the settlement applies. */
  payments?: Array<{ tx_hash: string; log_index: number; payer: string; amount_usd_micro: number }>;
  /** Settled on an ADMIN's request below the amount due. */
  short_payment?: boolean;
  /** `system:lending-vault` on full payment, or the ADMIN who settled the order. */
  settled_by?: string;
  /** Keyed by loan id. */
  repayments: Record<string, SettlementRepayment>;
  /** Loans the payment could not cover (they stay ACTIVE, their batches unsettled). */
  unpaid_loan_ids: string[];
  /** Batches recorded SETTLED by this settlement. */
  settled_batch_ids: string[];
  /** What remains for the cooperative after the loans. */
  remainder_usd_micro: number;
  remainder_status: 'NONE' | 'REQUESTED' | 'RELEASED' | 'REFUSED';
  remainder_tx_hash?: string;
  /**
   * An order above one transaction's size (its settlement carried out by the order worker): how
   * many of `settled_batch_ids`, in order, are recorded SETTLED (each batch's step is conditioned;
   * the count moves from → to once per step).
   */
  settled_batch_count?: number;
  /** An order above one transaction's size: every batch has its SETTLEMENT_STARTED audit entry (the fan-out is not run again). */
  start_audit_complete?: boolean;
  /**
   * An order above one transaction's size: its vault writes are stored, each with its id, and
   * queued (a redelivered order work message does not ask for them again; reconciliation queues a
   * stored write whose message was lost).
   */
  writes_requested?: boolean;
  /** An order above one transaction's size: the order worker's run carrying the settlement out now, and until when (ISO) it holds it. */
  run_id?: string;
  run_until?: string;
  created_at: string;
  completed_at?: string;
  updated_at: string;
}

/** A loan a settlement may repay, as it stands at the payment (see `loanAsOf`). */
export interface LoanToSettle {
  loan: Pick<Loan, 'loan_id' | 'batch_id' | 'principal_usd_micro' | 'apr' | 'disbursed_at' | 'created_at'>;
}

/**
 * Plans a settlement (docs/api/settlement.md#settlement): the loans are repaid oldest first (by creation), each with
 * principal + simple interest per started day up to `paidAt`, while the payment covers the whole
 * amount due; a loan it cannot cover — and every younger one — stays unpaid. Batches whose loan is
 * repaid, and `exportedWithoutLoan`, are settled; the remainder goes to the cooperative. Pure.
 */
export function planSettlement(input: { amountUsdMicro: number; paidAt: string; loans: LoanToSettle[]; exportedWithoutLoan: string[] }): {
  repayments: SettlementRepayment[];
  unpaid_loan_ids: string[];
  settled_batch_ids: string[];
  remainder_usd_micro: number;
} {
  const ordered = [...input.loans].sort(
    (a, b) => a.loan.created_at.localeCompare(b.loan.created_at) || a.loan.loan_id.localeCompare(b.loan.loan_id),
  );
  let remaining = input.amountUsdMicro;
  const repayments: SettlementRepayment[] = [];
  const unpaid: string[] = [];
  for (const { loan } of ordered) {
    const due = repaymentDueUsdMicro(loan, input.paidAt);
    if (unpaid.length === 0 && due <= remaining) {
      remaining -= due;
      repayments.push({
        loan_id: loan.loan_id,
        batch_id: loan.batch_id,
        principal_usd_micro: loan.principal_usd_micro,
        interest_usd_micro: due - loan.principal_usd_micro,
        amount_usd_micro: due,
        status: 'REQUESTED',
      });
    } else {
      unpaid.push(loan.loan_id);
    }
  }
  return {
    repayments,
    unpaid_loan_ids: unpaid,
    settled_batch_ids: [...input.exportedWithoutLoan, ...repayments.map((r) => r.batch_id)],
    remainder_usd_micro: remaining,
  };
}

/**
 * A loan as it stands: a PENDING loan whose disbursement has settled — or ended in MANUAL_REVIEW,
 * the money then waiting at the cooperative office (docs/api/lending.md#loans) — is ACTIVE, disbursed at
 * the disbursement's completion (or its move to manual review). Pure.
 */
export function loanAsOf(loan: Loan, disbursement: Pick<Payout, 'status' | 'completed_at' | 'updated_at'> | null): Loan {
  if (!disbursement || (disbursement.status !== 'COMPLETED' && disbursement.status !== 'MANUAL_REVIEW')) return loan;
  const disbursedAt =
    loan.disbursed_at ??
    (disbursement.status === 'COMPLETED' ? (disbursement.completed_at ?? disbursement.updated_at) : disbursement.updated_at);
  return { ...loan, disbursed_at: disbursedAt, ...(loan.status === 'PENDING' ? { status: 'ACTIVE' as const } : {}) };
}

// ------------------------------------------------------------------ buyer payments (paid in full)

/**
 * Why a buyer payment does not count toward its purchase order (it stays in the vault's escrow as
 * an unapplied payment, which an ADMIN returns to its payer): another payer than the order's
 * `buyer_address`, an unknown or unconfirmed order, or a payment after the order was settled.
 */
export type UnappliedReason = 'OTHER_PAYER' | 'UNKNOWN_PURCHASE_ORDER' | 'AFTER_SETTLEMENT';

/**
 * A buyer payment into the vault for a purchase order (one `PurchaseOrderPaid` log), kept once per
 * `tx_hash`/`log_index`. COUNTED: it counts toward the order's amount due (and is applied by its
 * settlement); UNAPPLIED: it waits in escrow (`unapplied_reason`); REFUND_REQUESTED → REFUNDED
 * (or REFUND_REFUSED) once an ADMIN returns it to its payer.
 */
export interface BuyerPayment {
  purchase_order_id: string;
  /** Lower-case 0x hash. */
  tx_hash: string;
  log_index: number;
  block_number: number;
  /** Checksummed or lower-case address of the payer, as the log names it. */
  payer: string;
  amount_usd_micro: number;
  status: 'COUNTED' | 'UNAPPLIED' | 'REFUND_REQUESTED' | 'REFUNDED' | 'REFUND_REFUSED';
  unapplied_reason?: UnappliedReason;
  received_at: string;
  refund_id?: string;
  refund_requested_by?: string;
  refund_requested_at?: string;
  refund_tx_hash?: string;
  refunded_at?: string;
  /** An order above one transaction's size: every batch has this payment's BUYER_PAYMENT_RECEIVED audit entry (the fan-out is not run again). */
  audit_complete?: boolean;
}

/** Is `address` a ledger address (0x + 40 hex digits)? */
export const LEDGER_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * What a purchase order's buyer owes: Σ over its batches of green-coffee weight (the MILLED
 * stage's `outturn_kg`, up to 3 decimals) × `price_usd_per_kg` (up to 4 decimals), micro-USDC,
 * rounded down per batch. Null while a batch has no recorded outturn (not milled yet). Pure.
 * Errors: RangeError for a negative weight or a price that is not a positive decimal.
 */
export function amountDueUsdMicro(batches: Array<{ outturn_kg?: number }>, priceUsdPerKg: number): number | null {
  if (!(priceUsdPerKg > 0)) throw new RangeError('price_usd_per_kg must be > 0');
  // Price in micro-USD per kg: at most 4 decimals (request schema), so exact as an integer.
  const priceMicro = BigInt(Math.round(priceUsdPerKg * 1_000_000));
  let total = 0n;
  for (const b of batches) {
    if (b.outturn_kg === undefined || b.outturn_kg === null) return null;
    if (!(b.outturn_kg >= 0)) throw new RangeError('outturn_kg must be non-negative');
    const milliKg = BigInt(Math.round(b.outturn_kg * 1000));
    total += (milliKg * priceMicro) / 1000n;
  }
  return Number(total);
}

/**
 * Whether a buyer payment counts toward its purchase order: the order must exist and be
 * CONFIRMED (else UNKNOWN_PURCHASE_ORDER), not settled yet (else AFTER_SETTLEMENT), and — when
 * the order names a `buyer_address` — paid from it (else OTHER_PAYER; addresses compared
 * case-insensitively). Any payer counts when the order names none. Pure.
 */
export function classifyBuyerPayment(input: {
  po: { status: string; buyer_address?: string } | null;
  settled: boolean;
  payer: string;
}): { counts: true } | { counts: false; reason: UnappliedReason } {
  if (input.po?.status !== 'CONFIRMED') return { counts: false, reason: 'UNKNOWN_PURCHASE_ORDER' };
  if (input.settled) return { counts: false, reason: 'AFTER_SETTLEMENT' };
  if (input.po.buyer_address && input.po.buyer_address.toLowerCase() !== input.payer.toLowerCase())
    return { counts: false, reason: 'OTHER_PAYER' };
  return { counts: true };
}

/** Settlement starts on its own only once the counted payments reach the amount due (a known amount). Pure. */
export function isPaidInFull(paidUsdMicro: number, amountDueUsdMicro: number | null | undefined): boolean {
  return amountDueUsdMicro !== null && amountDueUsdMicro !== undefined && paidUsdMicro >= amountDueUsdMicro;
}

/**
 * The refund id of a buyer payment: `RFD-` + the first 28 hex digits of sha256("<tx_hash>#<log_index>")
 * (tx hash lower-cased), 32 characters, so it fits the vault's bytes32 reference and a payment
 * has exactly one refund (the vault refuses a second `refundPayment` with it). Pure.
 */
export function refundIdOf(txHash: string, logIndex: number): string {
  return `RFD-${createHash('sha256').update(`${txHash.toLowerCase()}#${logIndex}`).digest('hex').slice(0, 28)}`;
}
