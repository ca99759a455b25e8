import { refundDeps } from '../../shared/composition/lending';
import { httpHandler, routeOptions } from '../../shared/http/handler';
import { refundBuyerPaymentRoute } from '../../shared/http/routes/purchase-orders';
import { buyerPaymentView } from '../../shared/http/views';
import { refundBuyerPayment } from '../../shared/use-cases/settlement';

/**
 * POST /purchase-orders/{id}/refunds (ADMIN): returns an unapplied buyer payment to its payer
 * through the vault (single ledger writer). 202 with the payment REFUND_REQUESTED (REFUNDED on
 * GET /purchase-orders/{id}/settlement once mined). 404 BUYER_PAYMENT_NOT_FOUND, 409
 * PAYMENT_COUNTED / PAYMENT_ALREADY_REFUNDED.
 */
export const handler = httpHandler(routeOptions(refundBuyerPaymentRoute), async ({ caller, params, body }) => {
  const payment = await refundBuyerPayment(refundDeps(), caller, params.id ?? '', body);
  return { status: 202, body: buyerPaymentView(payment) };
});
