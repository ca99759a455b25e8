import * as v from 'valibot';
import { maxDecimals } from './schema-parts';
import { BatchIdSchema } from './schema-parts';

/** POST /loans body: the batch lent against and the principal in USDC (> 0, ≤ 1,000,000, ≤ 6 decimals). */
export const CreateLoanSchema = v.strictObject({
  batch_id: BatchIdSchema,
  amount_usdc: v.pipe(
    v.number(),
    v.gtValue(0, 'must be greater than 0'),
    v.maxValue(1_000_000, 'must be at most 1000000 USDC'),
    maxDecimals(6),
  ),
});

/** A loan `LOAN-<yyyy>-<nnnnnn>`. */
export const LoanIdParam = v.pipe(v.string(), v.regex(/^LOAN-\d{4}-\d{6,12}$/, 'must be a loan id LOAN-<yyyy>-<nnnnnn>'));
