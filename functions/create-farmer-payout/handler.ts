import { payoutCreationDeps } from '../../shared/composition';
import { usdcToMicro } from '../../shared/domain/money';
import { httpHandler } from '../../shared/http/handler';
import { FarmerPayoutSchema } from '../../shared/http/payout-schemas';
import { payoutCreatedView } from '../../shared/http/views';
import { createFarmerPayout } from '../../shared/use-cases/payouts';

/** POST /payments/farmer-payout (COOPERATIVE, ADMIN): 201 with status PROCESSING (spec rules 1–5). */
export const handler = httpHandler({ roles: ['COOPERATIVE', 'ADMIN'], body: FarmerPayoutSchema }, async ({ body, caller }) => {
  const payout = await createFarmerPayout(payoutCreationDeps(), caller, {
    farmer_id: body.farmer_id,
    batch_id: body.batch_id,
    cooperative_id: body.cooperative_id,
    reason: body.reason,
    amount: { usd_micro: usdcToMicro(body.amount_usdc) },
  });
  return { status: 201, body: payoutCreatedView(payout), headers: { location: `/payments/farmer-payout/${payout.payment_id}` } };
});
