import { depositRepo } from '../../shared/composition/lending';
import { payoutRepo } from '../../shared/composition/platform';
import { depositView } from '../../shared/http/deposit-views';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getPaymentRoute } from '../../shared/http/routes/payments';
import { paymentRecordView } from '../../shared/http/views';
import { readDeposit } from '../../shared/use-cases/deposits';
import { readPayment } from '../../shared/use-cases/payouts';

/** GET /payments/{id} (COOPERATIVE own, MFI own deposits, ADMIN): the payment record by type. */
export const handler = httpHandler(routeOptions(getPaymentRoute), async ({ caller, params }) => {
  const id = params.id ?? '';
  if (id.startsWith('DEP-')) return { status: 200, body: depositView(await readDeposit(depositRepo(), caller, id)) };
  return { status: 200, body: paymentRecordView(await readPayment(payoutRepo(), caller, id)) };
});
