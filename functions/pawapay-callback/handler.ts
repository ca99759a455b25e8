import { pawaPayCallbackDeps, pawaPayCallbackKeys } from '../../shared/composition/payouts';
import { verifyHttpMessageSignature } from '../../shared/http/http-message-signature';
import { pawaPayCallbackRoute } from '../../shared/http/routes/inbound-webhooks';
import { webhookHandler, webhookRouteOptions } from '../../shared/http/webhook';
import { applyOrderCallback } from '../../shared/use-cases/payout-webhook';

/**
 * POST /api/webhooks/pawapay: pawaPay's RFC 9421 signature over the callback (401
 * INVALID_SIGNATURE), body (400 VALIDATION_ERROR), then the payout is read from pawaPay and its
 * status applied as a payout webhook (docs/api/inbound-webhooks.md#pawapay-callback); pawaPay
 * unreachable: 503 PROVIDER_UNAVAILABLE, nothing recorded.
 */
export const handler = webhookHandler(
  webhookRouteOptions(pawaPayCallbackRoute, pawaPayCallbackKeys, {
    verify: (keys, req) =>
      verifyHttpMessageSignature(
        { method: req.method, authority: req.headers.host ?? '', path: req.path, headers: req.headers, body: req.rawBody },
        JSON.parse(keys) as string[],
      ),
    id: (event) => {
      const e = event as { payoutId: string; status: string };
      return `pawapay-${e.payoutId}-${e.status}`;
    },
  }),
  async ({ webhookId, event }) => ({
    status: 200,
    body: await applyOrderCallback(pawaPayCallbackDeps(), { callbackId: webhookId, orderId: event.payoutId }),
  }),
);
