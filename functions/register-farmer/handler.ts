import { now, registryRepo } from '../../shared/composition/platform';
import { forestCheck, nationalRegistry } from '../../shared/composition/registry';
import { errorResponse } from '../../shared/http/envelope';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { registerFarmerRoute } from '../../shared/http/routes/farmers';
import { farmerView } from '../../shared/http/views';
import { registerFarmer } from '../../shared/use-cases/registry';

/**
 * POST /farmers/register: 201 with the farmer (phone masked) and its forest-check result; 202
 * MAAIF_API_UNAVAILABLE with `job_id` when the national farmer registry does not answer (the
 * national-registry-check sweep completes the registration when it does: GET /jobs/{job_id}).
 */
export const handler = httpHandler(routeOptions(registerFarmerRoute), async ({ body, caller, requestId }) => {
  const { farmer, job } = await registerFarmer(
    { registry: registryRepo(), forestCheck: forestCheck(), national: nationalRegistry() },
    caller,
    body,
    now(),
  );
  if (job) {
    return errorResponse(
      'MAAIF_API_UNAVAILABLE',
      `The national farmer registry did not answer; farmer ${farmer.farmer_id} is recorded and the registration completes when it does. Poll GET /jobs/${job.job_id}.`,
      requestId,
      {
        extra: { job_id: job.job_id, status: job.status, farmer: farmerView(farmer) },
        headers: { location: `/jobs/${job.job_id}` },
      },
    );
  }
  return { status: 201, body: farmerView(farmer), headers: { location: `/farmers/${farmer.farmer_id}` } };
});
