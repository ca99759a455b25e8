import { now } from '../../shared/composition/platform';
import { farmCorrectionDeps } from '../../shared/composition/registry';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { replaceFarmerFarmRoute } from '../../shared/http/routes/farmers';
import { farmerView } from '../../shared/http/views';
import { replaceFarmerFarm } from '../../shared/use-cases/farm-corrections';

/**
 * PUT /farmers/{id}/farm `{gps, polygon?, area_ha}` (docs/api/eudr.md#correcting-a-plot): replaces the
 * farmer's plot after registration's geolocation rules and a new forest check; audited on the farmer;
 * the same plot again changes nothing.
 */
export const handler = httpHandler(routeOptions(replaceFarmerFarmRoute), async ({ caller, params, body }) => {
  return { status: 200, body: farmerView(await replaceFarmerFarm(farmCorrectionDeps(), caller, params.id ?? '', body, now())) };
});
