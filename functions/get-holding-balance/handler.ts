import { registryRepo } from '../../shared/composition/platform';
import { microToUsdc } from '../../shared/domain/money';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getHoldingBalanceRoute } from '../../shared/http/routes/cooperatives';
import { readHoldingBalance } from '../../shared/use-cases/registry';

/**
 * GET /cooperatives/{id}/holding-balance (ADMIN, or a COOPERATIVE token of that cooperative):
 * `{cooperative_id, held_usdc, payouts_held, updated_at}` — the USDC of payouts that ended in
 * MANUAL_REVIEW, which the farmers collect at the cooperative office.
 */
export const handler = httpHandler(routeOptions(getHoldingBalanceRoute), async ({ caller, params }) => {
  const h = await readHoldingBalance(registryRepo(), caller, params.id ?? '');
  return {
    status: 200,
    body: {
      cooperative_id: h.cooperative_id,
      held_usdc: microToUsdc(h.held_usd_micro),
      payouts_held: h.payouts_held,
      updated_at: h.updated_at,
    },
  };
});
