import { loanDeps } from '../../shared/composition/lending';
import { usdcToMicro } from '../../shared/domain/money';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { createLoanRoute } from '../../shared/http/routes/lending';
import { loanView } from '../../shared/http/views';
import { createLoan } from '../../shared/use-cases/loans';

/**
 * POST /loans (ADMIN; COOPERATIVE with MANAGER duty of the batch's cooperative): 202 with the
 * PENDING loan and `Location: /loans/{loan_id}`; the BatchToken is locked in the vault, then the
 * LOAN_DISBURSEMENT pays the farmer, and the loan becomes ACTIVE once it settles.
 */
export const handler = httpHandler(routeOptions(createLoanRoute), async ({ body, caller }) => {
  const loan = await createLoan(loanDeps(), caller, { batch_id: body.batch_id, amount_usd_micro: usdcToMicro(body.amount_usdc) });
  return { status: 202, body: loanView(loan), headers: { location: `/loans/${loan.loan_id}` } };
});
