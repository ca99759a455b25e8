import { purchaseOrderCreationDeps } from '../../shared/composition/batches';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { createPurchaseOrderRoute } from '../../shared/http/routes/purchase-orders';
import { purchaseOrderView } from '../../shared/http/views';
import { createPurchaseOrder } from '../../shared/use-cases/purchase-orders';

/**
 * POST /purchase-orders (ADMIN; COOPERATIVE with EXPORTER or MANAGER): 201 DRAFT; above 40
 * batches 202 CREATING, the order worker binding its batches (docs/api/batches-and-custody.md#purchase-orders-of-many-batches).
 */
export const handler = httpHandler(routeOptions(createPurchaseOrderRoute), async ({ body, caller }) => {
  const po = await createPurchaseOrder(purchaseOrderCreationDeps(), caller, body);
  return {
    status: po.status === 'CREATING' ? 202 : 201,
    body: purchaseOrderView(po),
    headers: { location: `/purchase-orders/${po.purchase_order_id}` },
  };
});
