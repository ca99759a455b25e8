import { depositDeps } from '../../shared/composition/lending';
import { secret } from '../../shared/config';
import { onrampWebhookRoute } from '../../shared/http/routes/inbound-webhooks';
import { webhookHandler, webhookRouteOptions } from '../../shared/http/webhook';
import { applyOnRampWebhook } from '../../shared/use-cases/deposits';

/**
 * POST /api/webhooks/onramp: Standard Webhooks signature (401 INVALID_SIGNATURE), body (400), then
 * the event is confirmed with the on-ramp's order before it is applied (applyOnRampWebhook); 200
 * `{received: true, outcome}`; on-ramp unreachable: 503 PROVIDER_UNAVAILABLE, nothing recorded.
 */
export const handler = webhookHandler(
  webhookRouteOptions(onrampWebhookRoute, () => secret('ONRAMP_WEBHOOK_SECRET', 'ONRAMP_WEBHOOK_SECRET_ARN')),
  async ({ webhookId, event }) => ({
    status: 200,
    body: await applyOnRampWebhook(depositDeps(), { webhookId, event }),
  }),
);
