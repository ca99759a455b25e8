import { assertActsFor, assertDuty } from '../domain/access';
import { SYSTEM_CALLER, type Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { assertFarmerUsable } from '../domain/farmer';
import { disbursementIdOf, formatLoanId, parseBatchId } from '../domain/ids';
import { collateralValueUsdMicro, loanAsOf, ltvBps, maxLoanUsdMicro, MIN_LOAN_USD_MICRO, type Loan } from '../domain/lending';
import { DEFAULT_AFTER_DAYS_PAST_DUE, dueByForDaysPastDue, isWriteOffDue, loanDueAt } from '../domain/loan-terms';
import { microToUsdc } from '../domain/money';
import type { BatchStore } from '../domain/ports/batches';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import type { LoanStore, PriceFeed, VaultWriteQueue } from '../domain/ports/lending';
import type { WorkQueue } from '../domain/ports/messaging';
import type { PayoutRequestMessage, PayoutStore } from '../domain/ports/payouts';
import type { RegistryStore } from '../domain/ports/registry';
import type { StoredVaultCall } from '../domain/records';
import { logger } from '../runtime/logger';
import { createFarmerPayout, type PayoutDeps } from './payouts';
import { currentPrice } from './prices';
import type { VaultWriteHandler } from './vault-writes';
import { vaultLedgerTx } from './vault-writes';

/** The ports loan origination and reads need. */
export interface LoanDeps {
  registry: Pick<RegistryStore, 'getFarmer'>;
  batches: Pick<BatchStore, 'get'>;
  loans: LoanStore;
  payouts: Pick<PayoutStore, 'get'>;
  prices: PriceFeed;
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  /** The vault's annual rate (decimal string, e.g. "0.12"; LOAN_APR). */
  apr: string;
  /** Days from creation to the due date (LOAN_TERM_DAYS). */
  termDays: number;
  now: () => Date;
}

/** The id of the ledger write that locks a loan's BatchToken. */
const lockWriteId = (loanId: string) => `${loanId}-lock`;

/**
 * POST /loans (docs/api/lending.md#loans): an advance to the batch's farmer against its BatchToken.
 * Rules, in order: ADMIN or a COOPERATIVE token with the MANAGER duty of the batch's cooperative
 * (403); the batch exists (BATCH_NOT_FOUND) at DELIVERED or later, minted, not SETTLED
 * (BATCH_NOT_ELIGIBLE); its farmer is usable and has a phone (PHONE_NOT_FOUND); the price feed is
 * at most 1 hour old (503 STALE_PRICE_FEED); collateral value = weight × price(grade), the loan at
 * most 60 % of it (loan-to-value) and at least 50 USDC, else 422 INSUFFICIENT_COLLATERAL with the
 * figures; one PENDING or ACTIVE loan per batch (409 BATCH_HAS_ACTIVE_LOAN, decided by the loan's
 * guard in its creation transaction, so concurrent requests create exactly one loan).
 * The loan is due `termDays` after its creation (`due_at`).
 * The loan is stored PENDING with the ledger write that locks the token in the vault; no money
 * moves before that lock is mined (`collateralLocked` then starts the LOAN_DISBURSEMENT).
 * Loan numbers taken by refused concurrent requests are skipped.
 */
export async function createLoan(deps: LoanDeps, caller: Caller, input: { batch_id: string; amount_usd_micro: number }): Promise<Loan> {
  assertDuty(caller, ['MANAGER']);
  const batch = parseBatchId(input.batch_id) ? await deps.batches.get(input.batch_id) : null;
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${input.batch_id} is not recognised.`);
  assertActsFor(caller, batch.cooperative_id);
  if (batch.mint_status !== 'CONFIRMED' || batch.stage === null || batch.stage === 'SETTLED') {
    throw new DomainError(
      'BATCH_NOT_ELIGIBLE',
      `Batch ${batch.batch_id} is ${batch.stage ?? 'not minted yet'}; a loan needs a minted batch at DELIVERED or later that is not SETTLED.`,
    );
  }
  const farmer = await deps.registry.getFarmer(batch.farmer_id);
  if (!farmer) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${batch.farmer_id} of batch ${batch.batch_id} is not registered.`);
  assertFarmerUsable(farmer);
  if (!farmer.phone)
    throw new DomainError(
      'PHONE_NOT_FOUND',
      `Farmer ${farmer.farmer_id} has no mobile-money phone number on record; the loan could not be paid out.`,
    );

  const now = deps.now();
  const price = await currentPrice(deps.prices, batch.grade, now);
  const collateral = collateralValueUsdMicro(batch.weight_kg, price.usd_micro_per_kg);
  const maxLoan = maxLoanUsdMicro(collateral);
  const figures = {
    collateral_value_usdc: microToUsdc(collateral),
    max_loan_usdc: microToUsdc(maxLoan),
    minimum_loan_usdc: microToUsdc(MIN_LOAN_USD_MICRO),
    requested_usdc: microToUsdc(input.amount_usd_micro),
    price_usd_per_kg: microToUsdc(price.usd_micro_per_kg),
    price_updated_at: price.updated_at,
  };
  if (maxLoan < MIN_LOAN_USD_MICRO) {
    throw new DomainError(
      'INSUFFICIENT_COLLATERAL',
      `Batch ${batch.batch_id} is worth ${figures.collateral_value_usdc} USDC; at 60 % loan-to-value it cannot support the minimum loan of 50 USDC.`,
      { details: figures },
    );
  }
  if (input.amount_usd_micro < MIN_LOAN_USD_MICRO) {
    throw new DomainError('INSUFFICIENT_COLLATERAL', `The minimum loan is 50 USDC; ${figures.requested_usdc} USDC was asked.`, {
      details: figures,
    });
  }
  if (input.amount_usd_micro > maxLoan) {
    throw new DomainError(
      'INSUFFICIENT_COLLATERAL',
      `Batch ${batch.batch_id} (${figures.collateral_value_usdc} USDC at ${figures.price_usd_per_kg} USD/kg) supports at most ${figures.max_loan_usdc} USDC at 60 % loan-to-value; ${figures.requested_usdc} USDC was asked.`,
      { details: figures },
    );
  }
  // A fast answer for the common case; the guard in createPending decides under concurrency.
  if (await deps.loans.activeForBatch(batch.batch_id))
    throw new DomainError(
      'BATCH_HAS_ACTIVE_LOAN',
      `Batch ${batch.batch_id} already has an active loan: its BatchToken is locked as collateral.`,
    );

  const year = now.getUTCFullYear();
  const loanId = formatLoanId(year, await deps.loans.nextLoanNumber(year));
  const at = now.toISOString();
  const loan: Loan = {
    loan_id: loanId,
    batch_id: batch.batch_id,
    token_id: batch.token_id,
    farmer_id: batch.farmer_id,
    cooperative_id: batch.cooperative_id,
    principal_usd_micro: input.amount_usd_micro,
    apr: deps.apr,
    status: 'PENDING',
    collateral_value_usd_micro: collateral,
    ltv_bps: ltvBps(input.amount_usd_micro, collateral),
    price_usd_micro_per_kg: price.usd_micro_per_kg,
    price_updated_at: price.updated_at,
    disbursement_payment_id: disbursementIdOf(loanId),
    created_at: at,
    created_by: caller.sub,
    updated_at: at,
    due_at: loanDueAt(at, deps.termDays),
  };
  const lock = vaultLedgerTx(
    lockWriteId(loanId),
    { kind: 'LOCK_COLLATERAL', ref: loanId, tokenId: BigInt(batch.token_id), principalUsdMicro: BigInt(loan.principal_usd_micro) },
    at,
  );
  await deps.loans.createPending(loan, lock);
  try {
    await deps.ledgerQueue.send({ ledger_tx_id: lock.ledger_tx_id });
  } catch (err) {
    logger.error('collateral lock could not be queued; reconciliation will queue it', { loan_id: loanId, error: err as Error });
  }
  logger.info('loan requested', {
    loan_id: loanId,
    batch_id: batch.batch_id,
    principal_usd_micro: loan.principal_usd_micro,
    ltv_bps: loan.ltv_bps,
  });
  return loan;
}

/** Who may read a loan: ADMIN, any MFI (they fund the vault), the COOPERATIVE of the batch. Errors: INSUFFICIENT_PERMISSIONS. */
function assertMayRead(caller: Caller, loan: Loan): void {
  if (caller.role === 'ADMIN' || caller.role === 'MFI') return;
  if (caller.role === 'COOPERATIVE' && caller.cooperative_id === loan.cooperative_id) return;
  throw new DomainError('INSUFFICIENT_PERMISSIONS', `This token has no access to loan ${loan.loan_id}.`);
}

/** GET /loans/{id}. Errors: LOAN_NOT_FOUND (404), INSUFFICIENT_PERMISSIONS (403). */
export async function readLoan(deps: Pick<LoanDeps, 'loans' | 'payouts'>, caller: Caller, loanId: string): Promise<Loan> {
  const loan = await deps.loans.get(loanId);
  if (!loan) throw new DomainError('LOAN_NOT_FOUND', `Loan ${loanId} is not recognised.`);
  assertMayRead(caller, loan);
  return loanAsOf(loan, await deps.payouts.get(loan.disbursement_payment_id));
}

/**
 * GET /batch/{id}/loan: the batch's PENDING or ACTIVE loan. Errors: LOAN_NOT_FOUND (404) when it
 * has none (a repaid or cancelled loan is read by its id); BATCH_NOT_FOUND; INSUFFICIENT_PERMISSIONS.
 */
export async function readBatchLoan(deps: Pick<LoanDeps, 'loans' | 'payouts' | 'batches'>, caller: Caller, batchId: string): Promise<Loan> {
  const batch = parseBatchId(batchId) ? await deps.batches.get(batchId) : null;
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  if (caller.role === 'COOPERATIVE' || caller.role === 'AGENT') assertActsFor(caller, batch.cooperative_id);
  if (caller.role === 'AGENT') throw new DomainError('INSUFFICIENT_PERMISSIONS', 'AGENT tokens cannot read loans.');
  const loan = await deps.loans.activeForBatch(batchId);
  if (!loan) throw new DomainError('LOAN_NOT_FOUND', `Batch ${batchId} has no active loan.`);
  return loanAsOf(loan, await deps.payouts.get(loan.disbursement_payment_id));
}

// ------------------------------------------------------------------ after the lock is mined

/** The ports of the collateral-lock outcome (the ledger writer's side). */
export interface CollateralLockDeps {
  loans: Pick<LoanStore, 'transition'>;
  payoutQueue: WorkQueue<PayoutRequestMessage>;
  now: () => Date;
}

/**
 * The ledger writer's handler of LOCK_COLLATERAL writes. Mined: the loan records `lock_tx_hash`
 * and its disbursement is requested (payout-request queue, `{loan_id}`). Refused by the vault
 * (token locked elsewhere, not enough liquidity): the loan is CANCELLED, its guard released, no
 * money moved. Both idempotent.
 */
export function collateralLockHandler(deps: CollateralLockDeps): VaultWriteHandler<Extract<StoredVaultCall, { kind: 'LOCK_COLLATERAL' }>> {
  return {
    async mined(call, txHash) {
      const at = deps.now().toISOString();
      await deps.loans.transition(call.ref, ['PENDING'], 'PENDING', { lock_tx_hash: txHash }, at);
      await deps.payoutQueue.send({ loan_id: call.ref });
    },
    async refused(call, reason) {
      const at = deps.now().toISOString();
      await deps.loans.transition(call.ref, ['PENDING'], 'CANCELLED', { cancelled_at: at, cancel_reason: reason }, at);
    },
  };
}

/**
 * Starts a loan's LOAN_DISBURSEMENT (`DISB-…`) once its BatchToken is locked: the principal paid
 * to the farmer's mobile money through the same creation path, state machine and never-twice
 * rules as farmer payouts (one per batch and reason; a retry resumes an order left unknown).
 * Idempotent: an existing disbursement means it was started. Provider unreachable: throws, so the
 * queue retries.
 */
export async function startLoanDisbursement(deps: PayoutDeps & { loans: Pick<LoanStore, 'get'> }, loanId: string): Promise<void> {
  const loan = await deps.loans.get(loanId);
  if (!loan) throw new Error(`loan ${loanId} not found`);
  if (loan.status !== 'PENDING' || !loan.lock_tx_hash) {
    logger.warn('loan disbursement not started: the loan is not PENDING with its token locked', { loan_id: loanId, status: loan.status });
    return;
  }
  try {
    await createFarmerPayout(
      deps,
      SYSTEM_CALLER,
      {
        farmer_id: loan.farmer_id,
        batch_id: loan.batch_id,
        cooperative_id: loan.cooperative_id,
        reason: 'LOAN_DISBURSEMENT',
        amount: { usd_micro: loan.principal_usd_micro },
      },
      { payment_id: loan.disbursement_payment_id, loan_id: loan.loan_id },
    );
  } catch (err) {
    if (err instanceof DomainError && (err.code === 'DUPLICATE_PAYOUT' || err.code === 'PAYOUT_FAILED')) return;
    throw err;
  }
}

/** What one loan reconciliation run did. */
export interface LoanReconcileReport {
  examined: number;
  /** PENDING loans whose disbursement settled (or went to manual review): stored ACTIVE now. */
  activated: number;
  /** Locked loans whose disbursement did not exist: started again. */
  disbursementsRequested: number;
}

/**
 * Scheduled reconciliation of loans (with the payouts'): a loan still PENDING `staleAfterSeconds`
 * after its creation is looked at — its disbursement settled or in manual review → stored ACTIVE
 * with `disbursed_at` (reads show it ACTIVE before, see loanAsOf); its token locked but no
 * disbursement exists (the request was lost or dead-lettered) → the disbursement is started
 * again (`startDisbursement`, i.e. startLoanDisbursement: idempotent). A loan whose lock is still unmined is left to the ledger writer's own
 * reconciliation. Failures of one loan are logged and do not stop the others.
 */
export async function reconcileLoans(
  deps: {
    loans: Pick<LoanStore, 'pendingBefore' | 'transition'>;
    payouts: Pick<PayoutStore, 'get'>;
    startDisbursement: (loanId: string) => Promise<void>;
    now: () => Date;
  },
  opts: { staleAfterSeconds: number; limit?: number },
): Promise<LoanReconcileReport> {
  const report: LoanReconcileReport = { examined: 0, activated: 0, disbursementsRequested: 0 };
  const cutoff = new Date(deps.now().getTime() - opts.staleAfterSeconds * 1000).toISOString();
  for (const loan of await deps.loans.pendingBefore(cutoff, opts.limit ?? 100)) {
    report.examined++;
    try {
      const disbursement = await deps.payouts.get(loan.disbursement_payment_id);
      const asOf = loanAsOf(loan, disbursement);
      if (asOf.status === 'ACTIVE') {
        if (await deps.loans.transition(loan.loan_id, ['PENDING'], 'ACTIVE', { disbursed_at: asOf.disbursed_at }, deps.now().toISOString()))
          report.activated++;
      } else if (!disbursement && loan.lock_tx_hash) {
        await deps.startDisbursement(loan.loan_id);
        report.disbursementsRequested++;
      }
    } catch (err) {
      logger.warn('reconciliation of a loan failed; the next run tries again', { loan_id: loan.loan_id, error: err as Error });
    }
  }
  if (report.examined) logger.info('loan reconciliation run', { ...report });
  return report;
}

/** The id of the ledger write that writes a loan off in the vault (one per loan). */
export const writeOffWriteId = (loanId: string) => `${loanId}-write-off`;

/** What one write-off run did. */
export interface LoanWriteOffReport {
  /** ACTIVE loans DEFAULT_AFTER_DAYS_PAST_DUE (90) or more days past due. */
  due: number;
  /** Write-offs requested (or requested again: the write id is the loan's, so it lands once). */
  requested: number;
}

/**
 * Scheduled write-off of defaulted loans: every loan stored ACTIVE and 90 or more days past its
 * `due_at` gets its WRITE_OFF_LOAN vault write requested through the single ledger writer, under
 * one id per loan (`writeOffWriteId`), so runs that see it again change nothing. The loan becomes
 * DEFAULTED only when the write-off is mined (`loanWriteOffHandler`): a repayment that reaches the
 * vault first wins (the write-off is then refused by the vault, LoanNotActive) and one that comes
 * after loses (the vault refuses it; the settlement records it REFUSED). Failures of one loan are
 * logged and do not stop the others.
 */
export async function writeOffDefaultedLoans(deps: {
  loans: Pick<LoanStore, 'activeDueBy'>;
  vaultWrites: VaultWriteQueue;
  now: () => Date;
}): Promise<LoanWriteOffReport> {
  const now = deps.now();
  const report: LoanWriteOffReport = { due: 0, requested: 0 };
  for (const loan of await deps.loans.activeDueBy(dueByForDaysPastDue(DEFAULT_AFTER_DAYS_PAST_DUE, now))) {
    if (!isWriteOffDue(loan, now)) continue;
    report.due++;
    try {
      await deps.vaultWrites.request(writeOffWriteId(loan.loan_id), { kind: 'WRITE_OFF_LOAN', ref: loan.loan_id }, now.toISOString());
      report.requested++;
    } catch (err) {
      logger.warn('write-off of a defaulted loan could not be requested; the next run tries again', {
        loan_id: loan.loan_id,
        error: err as Error,
      });
    }
  }
  if (report.due) logger.info('loan write-off run', { ...report });
  return report;
}

/**
 * The ledger writer's handler of WRITE_OFF_LOAN writes. Mined: the loan DEFAULTED (from ACTIVE or
 * PENDING) with `loss_usd_micro` = the principal the vault wrote off, `defaulted_at` and
 * `write_off_tx_hash`, and a LOAN_DEFAULTED audit entry (its batch keeps the guard: the token stays
 * with the vault). Refused: the vault's loan was no longer ACTIVE (repaid or cancelled first);
 * nothing changes here, that write's own handler records it. Idempotent.
 */
export function loanWriteOffHandler(deps: {
  loans: Pick<LoanStore, 'transition' | 'get'>;
  now: () => Date;
}): VaultWriteHandler<Extract<StoredVaultCall, { kind: 'WRITE_OFF_LOAN' }>> {
  return {
    async mined(call, txHash, result) {
      const at = deps.now().toISOString();
      const loan = await deps.loans.get(call.ref);
      const loss = result?.assetsUsdMicro !== undefined ? Number(result.assetsUsdMicro) : loan?.principal_usd_micro;
      const moved = await deps.loans.transition(
        call.ref,
        ['PENDING', 'ACTIVE'],
        'DEFAULTED',
        { loss_usd_micro: loss, defaulted_at: at, write_off_tx_hash: txHash },
        at,
      );
      if (moved) logger.warn('loan written off', { loan_id: call.ref, loss_usd_micro: loss, tx_hash: txHash });
    },
    async refused(call, reason) {
      logger.warn('loan write-off refused by the vault: it was repaid or cancelled first', { loan_id: call.ref, reason });
    },
  };
}
