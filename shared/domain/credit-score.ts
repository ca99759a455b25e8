/**
 * The farmer credit score (docs/api/lending.md#credit-score): a deterministic function of this service's own
 * records — deliveries, volumes, quality, loans repaid on time, defaults, tenure, payouts left in
 * manual review. Every factor is shown with the points it adds or subtracts; the score is
 * CREDIT_SCORE_BASE plus the sum of the factors' effects, clamped to 300–850. Nothing here does I/O;
 * `creditScoreFormulaText()` is the formula as the API reference states it (the same constants).
 */
import type { Loan } from './lending';
import type { Grade } from './records';

/** Bumped whenever a point value, cap, band or classification rule below changes. */
const CREDIT_SCORE_FORMULA_VERSION = '1';
export const CREDIT_SCORE_MIN = 300;
export const CREDIT_SCORE_MAX = 850;
/** Points every farmer starts from. */
export const CREDIT_SCORE_BASE = 500;
/** A loan repaid within this many days of its disbursement is on time; an ACTIVE loan older than this is a default. */
export const LOAN_ON_TIME_DAYS = 180;

/** Quality points of a kg of each grade (kg-weighted average → quality index 0–100). */
const GRADE_QUALITY: Record<Grade, number> = { screen18: 100, PB: 85, screen15: 75, FAQ: 40 };

/** Points of each factor: per unit, capped (a cap is on the factor's total effect, in its direction). */
const CREDIT_SCORE_POINTS = {
  /** Per confirmed batch delivered, at most +80 (20 batches). */
  deliveries: { per: 4, cap: 80 },
  /** Per full 100 kg delivered, at most +60 (6,000 kg). */
  volume_kg: { perHundredKg: 1, cap: 60 },
  /** floor(quality index × 60 / 100) − 30: −6 (all FAQ) to +30 (all screen18); 0 without deliveries. */
  quality: { scale: 60, offset: -30 },
  /** Per loan repaid within LOAN_ON_TIME_DAYS, at most +160 (4 loans). */
  loans_repaid_on_time: { per: 40, cap: 160 },
  /** Per loan repaid later than that, at most +30. */
  loans_repaid_late: { per: 10, cap: 30 },
  /** Per ACTIVE loan older than LOAN_ON_TIME_DAYS since disbursement, no cap. */
  defaults: { per: -120 },
  /** Per full 30 days since registration, at most +40. */
  tenure_days: { perThirtyDays: 1, cap: 40 },
  /** Per batch whose payout ended in MANUAL_REVIEW (farmer unreachable on mobile money), at most −30. */
  manual_review_payouts: { per: -10, cap: -30 },
} as const;

/** Band thresholds, best first; below the last: E. */
const CREDIT_SCORE_BANDS = [
  { band: 'A', min: 750 },
  { band: 'B', min: 680 },
  { band: 'C', min: 620 },
  { band: 'D', min: 560 },
] as const;
export type CreditBand = 'A' | 'B' | 'C' | 'D' | 'E';

/** What the score is computed from (counts are non-negative integers). */
export interface CreditScoreInputs {
  /** Confirmed batches delivered. */
  deliveries: number;
  /** Their kg by grade. */
  kg_by_grade: Record<Grade, number>;
  loans_repaid_on_time: number;
  loans_repaid_late: number;
  defaults: number;
  /** Whole days since registration (0 if registered in the future). */
  tenure_days: number;
  manual_review_payouts: number;
}

type CreditFactorName = keyof typeof CREDIT_SCORE_POINTS;

/** One factor: its measured value and the integer points it added (negative: subtracted). */
export interface CreditFactor {
  name: CreditFactorName;
  value: number;
  effect: number;
}

export interface CreditScoreResult {
  score: number;
  band: CreditBand;
  formula_version: string;
  factors: CreditFactor[];
}

const capUp = (points: number, cap: number) => Math.min(points, cap);

/** The band of a score. */
export function creditBand(score: number): CreditBand {
  for (const b of CREDIT_SCORE_BANDS) if (score >= b.min) return b.band;
  return 'E';
}

/** kg-weighted quality index 0–100 of a grade mix (integer, floor); 0 without kg. */
function qualityIndex(kgByGrade: Record<Grade, number>): number {
  let kg = 0;
  let points = 0;
  for (const [g, q] of Object.entries(GRADE_QUALITY) as Array<[Grade, number]>) {
    const w = Math.max(0, kgByGrade[g] ?? 0);
    kg += w;
    points += w * q;
  }
  return kg > 0 ? Math.floor(points / kg) : 0;
}

/**
 * The score of `inputs`: base + Σ effects clamped to 300–850, its band, and every factor in a
 * fixed order. Pure and deterministic.
 * @throws RangeError when a count is negative or not an integer
 */
export function computeCreditScore(inputs: CreditScoreInputs): CreditScoreResult {
  for (const k of [
    'deliveries',
    'loans_repaid_on_time',
    'loans_repaid_late',
    'defaults',
    'tenure_days',
    'manual_review_payouts',
  ] as const) {
    if (!Number.isSafeInteger(inputs[k]) || inputs[k] < 0) throw new RangeError(`credit score: ${k} must be a non-negative integer`);
  }
  const P = CREDIT_SCORE_POINTS;
  const totalKg = Object.values(inputs.kg_by_grade).reduce((a, b) => a + Math.max(0, b), 0);
  const volume = Math.round(totalKg * 100) / 100;
  const quality = qualityIndex(inputs.kg_by_grade);
  const factors: CreditFactor[] = [
    { name: 'deliveries', value: inputs.deliveries, effect: capUp(inputs.deliveries * P.deliveries.per, P.deliveries.cap) },
    { name: 'volume_kg', value: volume, effect: capUp(Math.floor(volume / 100) * P.volume_kg.perHundredKg, P.volume_kg.cap) },
    { name: 'quality', value: quality, effect: totalKg > 0 ? Math.floor((quality * P.quality.scale) / 100) + P.quality.offset : 0 },
    {
      name: 'loans_repaid_on_time',
      value: inputs.loans_repaid_on_time,
      effect: capUp(inputs.loans_repaid_on_time * P.loans_repaid_on_time.per, P.loans_repaid_on_time.cap),
    },
    {
      name: 'loans_repaid_late',
      value: inputs.loans_repaid_late,
      effect: capUp(inputs.loans_repaid_late * P.loans_repaid_late.per, P.loans_repaid_late.cap),
    },
    { name: 'defaults', value: inputs.defaults, effect: inputs.defaults * P.defaults.per },
    {
      name: 'tenure_days',
      value: inputs.tenure_days,
      effect: capUp(Math.floor(inputs.tenure_days / 30) * P.tenure_days.perThirtyDays, P.tenure_days.cap),
    },
    {
      name: 'manual_review_payouts',
      value: inputs.manual_review_payouts,
      effect: Math.max(inputs.manual_review_payouts * P.manual_review_payouts.per, P.manual_review_payouts.cap),
    },
  ];
  // `+ 0` turns a -0 (0 × negative points) into 0.
  for (const f of factors) f.effect += 0;
  const raw = CREDIT_SCORE_BASE + factors.reduce((a, f) => a + f.effect, 0);
  const score = Math.min(CREDIT_SCORE_MAX, Math.max(CREDIT_SCORE_MIN, raw));
  return { score, band: creditBand(score), formula_version: CREDIT_SCORE_FORMULA_VERSION, factors };
}

/** How a farmer's loans count (see LOAN_ON_TIME_DAYS). */
export interface LoanHistory {
  repaid_on_time: number;
  repaid_late: number;
  defaults: number;
}

const DAY_MS = 86_400_000;

/**
 * Classifies loans at `now`: REPAID within LOAN_ON_TIME_DAYS of disbursement (`disbursed_at`, else
 * `created_at`) → on time, later → late; DEFAULTED (written off), or ACTIVE for more than LOAN_ON_TIME_DAYS → default; ACTIVE
 * younger than that, PENDING and CANCELLED do not count.
 */
export function classifyLoans(
  loans: ReadonlyArray<Pick<Loan, 'status' | 'created_at' | 'disbursed_at' | 'repaid_at'>>,
  now: Date,
): LoanHistory {
  const out: LoanHistory = { repaid_on_time: 0, repaid_late: 0, defaults: 0 };
  const limit = LOAN_ON_TIME_DAYS * DAY_MS;
  for (const l of loans) {
    const from = Date.parse(l.disbursed_at ?? l.created_at);
    if (l.status === 'REPAID') {
      const to = Date.parse(l.repaid_at ?? '');
      if (Number.isFinite(from) && Number.isFinite(to) && to - from <= limit) out.repaid_on_time++;
      else out.repaid_late++;
    } else if (l.status === 'DEFAULTED' || (l.status === 'ACTIVE' && Number.isFinite(from) && now.getTime() - from > limit)) {
      out.defaults++;
    }
  }
  return out;
}

/** Whole days from `registeredAt` to `now` (0 when not after). */
export function tenureDays(registeredAt: string, now: Date): number {
  const at = Date.parse(registeredAt);
  return Number.isFinite(at) ? Math.max(0, Math.floor((now.getTime() - at) / DAY_MS)) : 0;
}

/** The formula in words, for the API reference (built from the constants above). */
export function creditScoreFormulaText(): string {
  const P = CREDIT_SCORE_POINTS;
  const q = Object.entries(GRADE_QUALITY)
    .map(([g, v]) => `${g} ${v}`)
    .join(', ');
  const bands = CREDIT_SCORE_BANDS.map((b) => `${b.band} ≥ ${b.min}`).join(', ');
  return [
    `score = ${CREDIT_SCORE_BASE} + the sum of the factors' effects, clamped to ${CREDIT_SCORE_MIN}–${CREDIT_SCORE_MAX} (formula_version ${CREDIT_SCORE_FORMULA_VERSION}); bands ${bands}, E below.`,
    `Factors (value → effect, integer points): deliveries (confirmed batches) +${P.deliveries.per} each, at most +${P.deliveries.cap};`,
    `volume_kg (their total kg) +${P.volume_kg.perHundredKg} per full 100 kg, at most +${P.volume_kg.cap};`,
    `quality (kg-weighted grade index 0–100: ${q}) floor(index × ${P.quality.scale} / 100) − ${-P.quality.offset}, 0 without deliveries;`,
    `loans_repaid_on_time (repaid within ${LOAN_ON_TIME_DAYS} days of disbursement) +${P.loans_repaid_on_time.per} each, at most +${P.loans_repaid_on_time.cap};`,
    `loans_repaid_late +${P.loans_repaid_late.per} each, at most +${P.loans_repaid_late.cap};`,
    `defaults (loans still ACTIVE more than ${LOAN_ON_TIME_DAYS} days after disbursement) ${P.defaults.per} each;`,
    `tenure_days (since registration) +${P.tenure_days.perThirtyDays} per full 30 days, at most +${P.tenure_days.cap};`,
    `manual_review_payouts (batches whose payout ended in MANUAL_REVIEW) ${P.manual_review_payouts.per} each, at most ${P.manual_review_payouts.cap}.`,
    'PENDING and CANCELLED loans and ACTIVE loans within their term do not count. Deterministic: the same records on the same day give the same score.',
  ].join(' ');
}
