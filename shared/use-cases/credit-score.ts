import type { Caller } from '../domain/caller';
import { classifyLoans, computeCreditScore, tenureDays, type CreditFactor, type CreditBand } from '../domain/credit-score';
import type { BatchStore } from '../domain/ports/batches';
import type { LoanStore } from '../domain/ports/lending';
import type { PayoutStore } from '../domain/ports/payouts';
import type { RegistryStore } from '../domain/ports/registry';
import { loanAsOf } from '../domain/lending';
import { GRADES, type Grade } from '../domain/records';
import { getFarmer } from './registry';

/** Most batches and loans one score reads (the stores' reads are bounded by these). */
const CREDIT_SCORE_MAX_BATCHES = 1_000;
const CREDIT_SCORE_MAX_LOANS = 200;

export interface CreditScoreDeps {
  registry: Pick<RegistryStore, 'getFarmer'>;
  batches: Pick<BatchStore, 'listByFarmer'>;
  loans: Pick<LoanStore, 'listByFarmer'>;
  /** The loans' disbursements: a stored PENDING loan whose disbursement settled is ACTIVE (loanAsOf). */
  payouts: Pick<PayoutStore, 'get'>;
  now: () => Date;
}

/** GET /farmers/{id}/credit-score. */
export interface CreditScore {
  farmer_id: string;
  score: number;
  band: CreditBand;
  computed_at: string;
  formula_version: string;
  factors: CreditFactor[];
}

/**
 * The farmer's credit score (docs/api/lending.md#credit-score; the formula: shared/domain/credit-score.ts) from this
 * service's records: the farmer's confirmed batches (count, kg by grade, payouts in MANUAL_REVIEW),
 * their loans (repaid on time, late, defaults at `now`) and the registration date.
 * Roles (the handler checks them): ADMIN, MFI, COOPERATIVE of the farmer.
 * Errors: 404 FARMER_NOT_REGISTERED; 403 INSUFFICIENT_PERMISSIONS for another cooperative's farmer.
 */
export async function getCreditScore(deps: CreditScoreDeps, caller: Caller, farmerId: string): Promise<CreditScore> {
  const farmer = await getFarmer(deps.registry, caller, farmerId);
  const [batches, loans] = await Promise.all([
    deps.batches.listByFarmer(farmer.farmer_id, farmer.cooperative_id, CREDIT_SCORE_MAX_BATCHES),
    deps.loans.listByFarmer(farmer.farmer_id, CREDIT_SCORE_MAX_LOANS),
  ]);
  const now = deps.now();
  const kg_by_grade = Object.fromEntries(GRADES.map((g) => [g, 0])) as Record<Grade, number>;
  let manualReview = 0;
  for (const b of batches) {
    // Hundredths of a kg, summed as integers (weights have at most 2 decimals).
    kg_by_grade[b.grade] = (Math.round(kg_by_grade[b.grade] * 100) + Math.round(b.weight_kg * 100)) / 100;
    if (b.payment_status === 'MANUAL_REVIEW') manualReview++;
  }
  const asOf = await Promise.all(
    loans.map(async (l) => (l.status === 'PENDING' ? loanAsOf(l, await deps.payouts.get(l.disbursement_payment_id)) : l)),
  );
  const history = classifyLoans(asOf, now);
  const result = computeCreditScore({
    deliveries: batches.length,
    kg_by_grade,
    loans_repaid_on_time: history.repaid_on_time,
    loans_repaid_late: history.repaid_late,
    defaults: history.defaults,
    tenure_days: tenureDays(farmer.registered_at, now),
    manual_review_payouts: manualReview,
  });
  return {
    farmer_id: farmer.farmer_id,
    score: result.score,
    band: result.band,
    computed_at: now.toISOString(),
    formula_version: result.formula_version,
    factors: result.factors,
  };
}
