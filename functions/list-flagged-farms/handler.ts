import { registryRepo } from '../../shared/composition/repos';
import { httpHandler } from '../../shared/http/handler';
import { farmerView, getCooperative } from '../../shared/use-cases/registry';

/**
 * GET /cooperatives/{id}/flagged-farms (ADMIN; COOPERATIVE of that cooperative): the farmers whose
 * farm the forest check FLAGGED — refused at batch submission until a review clears them
 * (decisions §3, §9): `{cooperative_id, farmers: [farmer…], total}`.
 */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE'] }, async ({ caller, params }) => {
  const coop = await getCooperative(registryRepo(), caller, params.id ?? '');
  const farmers = await registryRepo().flaggedFarmers(coop.cooperative_id);
  return { status: 200, body: { cooperative_id: coop.cooperative_id, farmers: farmers.map(farmerView), total: farmers.length } };
});
