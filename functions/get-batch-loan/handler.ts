import { batchRepo, loanRepo, payoutRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getBatchLoanRoute } from '../../shared/http/routes/batches';
import { loanView } from '../../shared/http/views';
import { readBatchLoan } from '../../shared/use-cases/loans';

/** GET /batch/{id}/loan (ADMIN; MFI; COOPERATIVE of the batch): its PENDING or ACTIVE loan, else 404 LOAN_NOT_FOUND. */
export const handler = httpHandler(routeOptions(getBatchLoanRoute), async ({ caller, params }) => {
  return {
    status: 200,
    body: loanView(await readBatchLoan({ loans: loanRepo(), payouts: payoutRepo(), batches: batchRepo() }, caller, params.id ?? '')),
  };
});
