import { loanRepo, payoutRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getLoanRoute } from '../../shared/http/routes/lending';
import { loanView } from '../../shared/http/views';
import { readLoan } from '../../shared/use-cases/loans';

/** GET /loans/{id} (ADMIN; MFI; COOPERATIVE of the batch). */
export const handler = httpHandler(routeOptions(getLoanRoute), async ({ caller, params }) => {
  return { status: 200, body: loanView(await readLoan({ loans: loanRepo(), payouts: payoutRepo() }, caller, params.id ?? '')) };
});
