import { registryRepo } from '../../shared/composition/platform';
import { microToUsdc } from '../../shared/domain/money';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PathId } from '../../shared/http/path-params';
import { readHoldingBalance } from '../../shared/use-cases/registry';

/**
 * GET /cooperatives/{id}/holding-balance (ADMIN, or a COOPERATIVE token of that cooperative):
 * `{cooperative_id, held_usdc, payouts_held, updated_at}` — the USDC of payouts that ended in
 * MANUAL_REVIEW, which the farmers collect at the cooperative office.
 */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE'], params: IdParams(PathId) }, async ({ caller, params }) => {
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
