import { now, payoutRepo } from '../../shared/composition/repos';
import { payoutWorkflow } from '../../shared/composition/workflow';
import { secret } from '../../shared/config';
import { PayoutWebhookSchema } from '../../shared/http/payout-schemas';
import { webhookHandler } from '../../shared/http/webhook';
import { applyPayoutWebhook } from '../../shared/use-cases/payout-webhook';

/**
 * POST /api/webhooks/payout-provider: Standard Webhooks signature (401 INVALID_SIGNATURE), body
 * (400 VALIDATION_ERROR), then the settlement or failure is recorded durably before the 200
 * acknowledgement (decisions §6).
 */
export const handler = webhookHandler({ secret: () => secret('PAYOUT_WEBHOOK_SECRET', 'PAYOUT_WEBHOOK_SECRET_ARN'), schema: PayoutWebhookSchema }, async ({ webhookId, event }) => ({
  status: 200,
  body: await applyPayoutWebhook({ payouts: payoutRepo(), workflow: payoutWorkflow(), now }, { webhookId, event }),
}));
