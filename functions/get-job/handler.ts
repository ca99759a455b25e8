import { batchRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getJobRoute } from '../../shared/http/routes/jobs';
import { jobView } from '../../shared/http/views';
import { readJob } from '../../shared/use-cases/batches';

/** GET /jobs/{id}: `{job_id, status: PENDING|COMPLETE|FAILED, batch_id, tx_hash, error?}`. */
export const handler = httpHandler(routeOptions(getJobRoute), async ({ caller, params }) => {
  return { status: 200, body: jobView(await readJob(batchRepo(), caller, params.id ?? '')) };
});
