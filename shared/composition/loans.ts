import type { LoanDeps } from '../use-cases/loans';
import type { PayoutDeps } from '../use-cases/payouts';
import { payoutDeps } from './index';
import { loanApr, loanTermDays } from './lending-config';
import { priceFeed } from './lending-reads';
import { ledgerWriteQueue } from './queues';
import { batchRepo, loanRepo, now, payoutRepo, registryRepo } from './repos';

/**
 * Loans: origination and reads (POST /loans, GET /loans/{id}, GET /batch/{id}/loan) and the
 * disbursement started once the collateral is locked.
 */

/** Ports of loan origination and loan reads. */
export function loanDeps(): LoanDeps {
  return {
    registry: registryRepo(),
    batches: batchRepo(),
    loans: loanRepo(),
    payouts: payoutRepo(),
    prices: priceFeed(),
    ledgerQueue: ledgerWriteQueue(),
    apr: loanApr(),
    termDays: loanTermDays(),
    now,
  };
}

/** Ports of the loan disbursement (payout-request consumer). */
export function loanDisbursementDeps(): PayoutDeps & { loans: ReturnType<typeof loanRepo> } {
  return { ...payoutDeps(), loans: loanRepo() };
}
