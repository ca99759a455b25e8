import { loanRepo, payoutRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { LoanIdParam } from '../../shared/http/loan-schemas';
import { IdParams } from '../../shared/http/path-params';
import { loanView } from '../../shared/http/views';
import { readLoan } from '../../shared/use-cases/loans';

/** GET /loans/{id} (ADMIN; MFI; COOPERATIVE of the batch). */
export const handler = httpHandler(
  { roles: ['ADMIN', 'MFI', 'COOPERATIVE'], params: IdParams(LoanIdParam) },
  async ({ caller, params }) => {
    return { status: 200, body: loanView(await readLoan({ loans: loanRepo(), payouts: payoutRepo() }, caller, params.id ?? '')) };
  },
);
