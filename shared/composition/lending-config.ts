import { envOr } from '../config';
import { DEFAULT_LOAN_APR } from '../domain/lending';

/** The vault's annual rate: `LOAN_APR` (decimal string), default DEFAULT_LOAN_APR "0.12" (decisions §10.1). */
export const loanApr = (): string => envOr('LOAN_APR', DEFAULT_LOAN_APR);
