import { payoutWebhookDeps } from '../../shared/composition/payouts';
import { secret } from '../../shared/config';
import { payoutProviderWebhookRoute } from '../../shared/http/routes/inbound-webhooks';
import { webhookHandler, webhookRouteOptions } from '../../shared/http/webhook';
import { applyPayoutWebhook } from '../../shared/use-cases/payout-webhook';

/**
 * POST /api/webhooks/payout-provider: Standard Webhooks signature (401 INVALID_SIGNATURE), body
 * (400 VALIDATION_ERROR), then the event is confirmed with the provider's order and, if it agrees,
 * the settlement or failure is recorded durably (with the provider's values) before the 200
 * acknowledgement; an event the provider does not confirm is acknowledged 200 `MISMATCH` and
 * changes nothing; provider unreachable: 503 PROVIDER_UNAVAILABLE, nothing recorded (docs/api/inbound-webhooks.md#payout-provider-webhook).
 */
export const handler = webhookHandler(
  webhookRouteOptions(payoutProviderWebhookRoute, () => secret('PAYOUT_WEBHOOK_SECRET', 'PAYOUT_WEBHOOK_SECRET_ARN')),
  async ({ webhookId, event }) => ({
    status: 200,
    body: await applyPayoutWebhook(payoutWebhookDeps(), { webhookId, event }),
  }),
);
