import { custodyRepo } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { getPurchaseOrderRoute } from '../../shared/http/routes/purchase-orders';
import { purchaseOrderView } from '../../shared/http/views';
import { getPurchaseOrder } from '../../shared/use-cases/purchase-orders';

/** GET /purchase-orders/{id}: 200 with the purchase order (ADMIN, or a COOPERATIVE token of its cooperative). */
export const handler = httpHandler(routeOptions(getPurchaseOrderRoute), async ({ caller, params }) => {
  return { status: 200, body: purchaseOrderView(await getPurchaseOrder(custodyRepo(), caller, params.id ?? '')) };
});
