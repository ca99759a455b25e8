import { manualReviewDeps } from '../../shared/composition/payouts';
import { assertDuty } from '../../shared/domain/access';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { resolveFarmerPayoutRoute } from '../../shared/http/routes/payments';
import { payoutResolutionView } from '../../shared/http/views';
import { resolveFarmerPayout } from '../../shared/use-cases/manual-review';

/**
 * POST /payments/farmer-payout/{id}/resolve (ADMIN; COOPERATIVE with MANAGER of the payout's
 * cooperative): closes a payout in MANUAL_REVIEW as PAID_IN_CASH or by a RETRY (docs/api/payouts.md#manual-review).
 */
export const handler = httpHandler(
  routeOptions(resolveFarmerPayoutRoute, { authorize: (caller) => assertDuty(caller, ['MANAGER']) }),
  async ({ caller, params, body }) => {
    const payout = await resolveFarmerPayout(manualReviewDeps(), caller, params.id ?? '', body);
    return { status: 200, body: payoutResolutionView(payout, body.resolution) };
  },
);
