import { envOr } from '../config';
import { DEFAULT_LOAN_APR } from '../domain/lending';
import { loanTermDays as parseLoanTermDays } from '../domain/loan-terms';

/** The vault's annual rate: `LOAN_APR` (decimal string), default DEFAULT_LOAN_APR "0.12" (docs/api/lending.md#loans). */
export const loanApr = (): string => envOr('LOAN_APR', DEFAULT_LOAN_APR);

/** Days from a loan's creation to its due date: `LOAN_TERM_DAYS` (whole days), default 180. Errors: RangeError for a malformed value. */
export const loanTermDays = (): number => parseLoanTermDays(process.env.LOAN_TERM_DAYS);
