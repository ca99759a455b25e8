import { payoutRepo } from '../../shared/composition/repos';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PaymentIdParam } from '../../shared/http/path-params';
import { paymentRecordView } from '../../shared/http/views';
import { readPayment } from '../../shared/use-cases/payouts';

/** GET /payments/{id} (COOPERATIVE own, MFI own deposits, ADMIN): the payment record by type. */
export const handler = httpHandler({ roles: ['COOPERATIVE', 'ADMIN', 'MFI'], params: IdParams(PaymentIdParam) }, async ({ caller, params }) => {
  return { status: 200, body: paymentRecordView(await readPayment(payoutRepo(), caller, params.id ?? '')) };
});
