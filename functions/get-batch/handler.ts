import { batchRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, BatchIdParam } from '../../shared/http/path-params';
import { batchView } from '../../shared/http/views';
import { readBatch } from '../../shared/use-cases/batches';

/** GET /batch/{id}: the batch with its stage history (docs/api/batches-and-custody.md#custody-trail). */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE', 'AGENT'], params: IdParams(BatchIdParam) },
  async ({ caller, params }) => {
    return { status: 200, body: batchView(await readBatch(batchRepo(), caller, params.id ?? '')) };
  },
);
