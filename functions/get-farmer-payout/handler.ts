import { payoutRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PayoutIdParam } from '../../shared/http/path-params';
import { payoutStatusView } from '../../shared/http/views';
import { readPayment } from '../../shared/use-cases/payouts';

/** GET /payments/farmer-payout/{id}: the payout status response (same access rules as payments). */
export const handler = httpHandler(
  { roles: ['COOPERATIVE', 'ADMIN', 'MFI'], params: IdParams(PayoutIdParam) },
  async ({ caller, params }) => {
    return { status: 200, body: payoutStatusView(await readPayment(payoutRepo(), caller, params.id ?? '')) };
  },
);
