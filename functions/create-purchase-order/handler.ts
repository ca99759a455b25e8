import { custodyRepo } from '../../shared/composition/ledger-writes';
import { batchRepo, now } from '../../shared/composition/repos';
import { httpHandler } from '../../shared/http/handler';
import { CreatePurchaseOrderSchema } from '../../shared/http/schemas';
import { createPurchaseOrder, purchaseOrderView } from '../../shared/use-cases/custody';

/** POST /purchase-orders (ADMIN; COOPERATIVE with EXPORTER or MANAGER): 201 DRAFT (decisions §8). */
export const handler = httpHandler({ roles: ['ADMIN', 'COOPERATIVE'], body: CreatePurchaseOrderSchema }, async ({ body, caller }) => {
  const po = await createPurchaseOrder({ batches: batchRepo(), custody: custodyRepo(), now }, caller, body);
  return { status: 201, body: purchaseOrderView(po), headers: { location: `/purchase-orders/${po.purchase_order_id}` } };
});
