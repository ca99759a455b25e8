import { purchaseOrderDeps } from '../../shared/composition/batches';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { confirmPurchaseOrderRoute } from '../../shared/http/routes/purchase-orders';
import { purchaseOrderView } from '../../shared/http/views';
import { confirmPurchaseOrder } from '../../shared/use-cases/purchase-orders';

/**
 * POST /purchase-orders/{id}/confirm: 200 with the CONFIRMED purchase order; each of its
 * WAREHOUSED batches moves to COMMITTED (listed in `committed_batch_ids`). 202 with the order
 * still CONFIRMING (its progress) when a large order's confirmation needs another call.
 */
export const handler = httpHandler(routeOptions(confirmPurchaseOrderRoute), async ({ caller, params }) => {
  const { po, committed } = await confirmPurchaseOrder(purchaseOrderDeps(), caller, params.id ?? '');
  return { status: po.status === 'CONFIRMING' ? 202 : 200, body: { ...purchaseOrderView(po), committed_batch_ids: committed } };
});
