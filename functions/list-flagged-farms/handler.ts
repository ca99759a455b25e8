import { registryRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { listFlaggedFarmsRoute } from '../../shared/http/routes/cooperatives';
import { farmerView } from '../../shared/http/views';
import { listFlaggedFarms } from '../../shared/use-cases/registry';

/**
 * GET /cooperatives/{id}/flagged-farms (ADMIN; COOPERATIVE of that cooperative): the farmers whose
 * farm the forest check FLAGGED — refused at batch submission until a review clears them
 * (docs/api/registries.md#forest-check, docs/api/eudr.md#farm-geolocation): `{cooperative_id, farmers: [farmer…], total}`.
 */
export const handler = httpHandler(routeOptions(listFlaggedFarmsRoute), async ({ caller, params }) => {
  const { cooperative_id, farmers } = await listFlaggedFarms(registryRepo(), caller, params.id ?? '');
  return { status: 200, body: { cooperative_id, farmers: farmers.map(farmerView), total: farmers.length } };
});
