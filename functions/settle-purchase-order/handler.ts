import { settlementDeps } from '../../shared/composition/lending';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { settlePurchaseOrderRoute } from '../../shared/http/routes/purchase-orders';
import { purchaseOrderView, settlementView } from '../../shared/http/views';
import { settlePurchaseOrder } from '../../shared/use-cases/settlement';

/**
 * POST /purchase-orders/{id}/settle (ADMIN): settles a confirmed order on the payments counted so
 * far; below the amount due only with `accept_short_payment: true`. 200 with the settlement; 202
 * with the order when the order worker settles it (above one transaction's size).
 * 409 PO_ALREADY_SETTLED / NO_PAYMENT_RECEIVED, 422 SHORT_PAYMENT_NOT_ACCEPTED / PO_NOT_CONFIRMED.
 */
export const handler = httpHandler(routeOptions(settlePurchaseOrderRoute), async ({ caller, params, body }) => {
  const answer = await settlePurchaseOrder(settlementDeps(), caller, params.id ?? '', {
    accept_short_payment: body.accept_short_payment,
  });
  return answer.kind === 'QUEUED'
    ? { status: 202, body: purchaseOrderView(answer.po) }
    : { status: 200, body: settlementView(answer.settlement) };
});
