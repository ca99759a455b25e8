import { batchRepo, custodyRepo, settlementRepo } from '../../shared/composition/platform';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PurchaseOrderIdParam } from '../../shared/http/path-params';
import { settlementReadingView } from '../../shared/http/views';
import { readSettlement } from '../../shared/use-cases/settlement';

/**
 * GET /purchase-orders/{id}/settlement (ADMIN; COOPERATIVE of the order): AWAITING_PAYMENT with
 * what is paid and due, or how its buyer payments were applied; the unapplied payments either way.
 */
export const handler = httpHandler(
  { roles: ['ADMIN', 'COOPERATIVE'], params: IdParams(PurchaseOrderIdParam) },
  async ({ caller, params }) => {
    return {
      status: 200,
      body: settlementReadingView(
        await readSettlement({ custody: custodyRepo(), settlements: settlementRepo(), batches: batchRepo() }, caller, params.id ?? ''),
      ),
    };
  },
);
