import { batchRepo, custodyRepo, now } from '../../shared/composition/platform';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { createPurchaseOrderRoute } from '../../shared/http/routes/purchase-orders';
import { purchaseOrderView } from '../../shared/http/views';
import { createPurchaseOrder } from '../../shared/use-cases/purchase-orders';

/** POST /purchase-orders (ADMIN; COOPERATIVE with EXPORTER or MANAGER): 201 DRAFT (docs/api/batches-and-custody.md#custody-trail). */
export const handler = httpHandler(routeOptions(createPurchaseOrderRoute), async ({ body, caller }) => {
  const po = await createPurchaseOrder({ batches: batchRepo(), custody: custodyRepo(), now }, caller, body);
  return { status: 201, body: purchaseOrderView(po), headers: { location: `/purchase-orders/${po.purchase_order_id}` } };
});
