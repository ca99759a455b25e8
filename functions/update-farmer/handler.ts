import { now } from '../../shared/composition/platform';
import { farmerUpdateDeps } from '../../shared/composition/registry';
import { assertMayMoveMoney } from '../../shared/domain/access';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { updateFarmerRoute } from '../../shared/http/routes/farmers';
import { farmerView } from '../../shared/http/views';
import { updateFarmerPhone } from '../../shared/use-cases/farmer-updates';

/**
 * PATCH /farmers/{id} `{phone}`: ADMIN, or a COOPERATIVE token with the MANAGER duty of the farmer's
 * cooperative (docs/security.md#tokens-and-roles, docs/api/payouts.md#manual-review); the change is audited on the farmer and notified to the
 * cooperative manager and the old number. The duty is checked before the body.
 */
export const handler = httpHandler(
  routeOptions(updateFarmerRoute, { authorize: (caller) => assertMayMoveMoney(caller) }),
  async ({ caller, params, body }) => {
    return { status: 200, body: farmerView(await updateFarmerPhone(farmerUpdateDeps(), caller, params.id ?? '', body, now())) };
  },
);
