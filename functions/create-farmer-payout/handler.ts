import { manualPayoutDailyLimitUsdMicro, payoutCreationDeps } from '../../shared/composition/payouts';
import { usdcToMicro } from '../../shared/domain/money';
import { assertMayMoveMoney } from '../../shared/domain/access';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { createFarmerPayoutRoute } from '../../shared/http/routes/payments';
import { payoutCreatedView } from '../../shared/http/views';
import { createManualPayout } from '../../shared/use-cases/payouts';

/**
 * POST /payments/farmer-payout (ADMIN; COOPERATIVE with the MANAGER duty): 201 with status
 * PROCESSING (docs/api/payouts.md#creating-a-payout), within the batch's value and the cooperative's daily cap
 * (MANUAL_PAYOUT_DAILY_LIMIT_USDC). The duty is checked before the body (token, permission, body).
 */
export const handler = httpHandler(
  routeOptions(createFarmerPayoutRoute, { authorize: (caller) => assertMayMoveMoney(caller) }),
  async ({ body, caller }) => {
    const payout = await createManualPayout(
      payoutCreationDeps(),
      caller,
      {
        farmer_id: body.farmer_id,
        batch_id: body.batch_id,
        cooperative_id: body.cooperative_id,
        reason: body.reason,
        amount_usd_micro: usdcToMicro(body.amount_usdc),
      },
      { dailyLimitUsdMicro: manualPayoutDailyLimitUsdMicro() },
    );
    return { status: 201, body: payoutCreatedView(payout), headers: { location: `/payments/farmer-payout/${payout.payment_id}` } };
  },
);
