import { registryRepo } from '../../shared/composition/platform';
import { forestCheck } from '../../shared/composition/registry';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { verifyGfwRoute } from '../../shared/http/routes/eudr';
import { verifyFarmForest } from '../../shared/use-cases/eudr';

/**
 * POST /eudr/verify-gfw `{farmer_id}` → 200 `{farmer_id, status: CLEAR|FLAGGED, checked_at,
 * cutoff_date, dataset: {name, version}, alerts}`; 503 GFW_API_UNAVAILABLE with Retry-After 300.
 */
export const handler = httpHandler(routeOptions(verifyGfwRoute), async ({ body, caller }) => ({
  status: 200,
  body: await verifyFarmForest({ registry: registryRepo(), forestCheck: forestCheck() }, caller, body.farmer_id),
}));
