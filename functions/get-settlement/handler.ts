import { custodyRepo, settlementRepo } from '../../shared/composition/repos';
import { httpHandler } from '../../shared/http/handler';
import { IdParams, PurchaseOrderIdParam } from '../../shared/http/path-params';
import { settlementView } from '../../shared/http/views';
import { readSettlement } from '../../shared/use-cases/settlement';

/** GET /purchase-orders/{id}/settlement (ADMIN; COOPERATIVE of the order): how its buyer payment was applied. */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE'], params: IdParams(PurchaseOrderIdParam) }, async ({ caller, params }) => {
  return { status: 200, body: settlementView(await readSettlement({ custody: custodyRepo(), settlements: settlementRepo() }, caller, params.id ?? '')) };
});
