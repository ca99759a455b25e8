import { batchRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, JobIdParam } from '../../shared/http/path-params';
import { jobView } from '../../shared/http/views';
import { readJob } from '../../shared/use-cases/batches';

/** GET /jobs/{id}: `{job_id, status: PENDING|COMPLETE|FAILED, batch_id, tx_hash, error?}`. */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE', 'AGENT'], params: IdParams(JobIdParam) },
  async ({ caller, params }) => {
    return { status: 200, body: jobView(await readJob(batchRepo(), caller, params.id ?? '')) };
  },
);
