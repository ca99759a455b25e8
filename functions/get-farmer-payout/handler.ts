import { payoutRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getFarmerPayoutRoute } from '../../shared/http/routes/payments';
import { payoutStatusView } from '../../shared/http/views';
import { readPayment } from '../../shared/use-cases/payouts';

/** GET /payments/farmer-payout/{id}: the payout status response (same access rules as payments). */
export const handler = httpHandler(routeOptions(getFarmerPayoutRoute), async ({ caller, params }) => {
  return { status: 200, body: payoutStatusView(await readPayment(payoutRepo(), caller, params.id ?? '')) };
});
