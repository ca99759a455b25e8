import { batchRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getBatchRoute } from '../../shared/http/routes/batches';
import { batchView } from '../../shared/http/views';
import { readBatch } from '../../shared/use-cases/batches';

/** GET /batch/{id}: the batch with its stage history (docs/api/batches-and-custody.md#custody-trail). */
export const handler = httpHandler(routeOptions(getBatchRoute), async ({ caller, params }) => {
  return { status: 200, body: batchView(await readBatch(batchRepo(), caller, params.id ?? '')) };
});
