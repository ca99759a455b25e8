import { batchRepo, custodyRepo, settlementRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getSettlementRoute } from '../../shared/http/routes/purchase-orders';
import { settlementReadingView } from '../../shared/http/views';
import { readSettlement } from '../../shared/use-cases/settlement';

/**
 * GET /purchase-orders/{id}/settlement (ADMIN; COOPERATIVE of the order): AWAITING_PAYMENT with
 * what is paid and due, or how its buyer payments were applied; the unapplied payments either way.
 */
export const handler = httpHandler(routeOptions(getSettlementRoute), async ({ caller, params }) => {
  return {
    status: 200,
    body: settlementReadingView(
      await readSettlement({ custody: custodyRepo(), settlements: settlementRepo(), batches: batchRepo() }, caller, params.id ?? ''),
    ),
  };
});
