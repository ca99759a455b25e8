import { now, payoutRepo } from '../../shared/composition/repos';
import { payoutWorkflow } from '../../shared/composition/workflow';
import { secret } from '../../shared/config';
import { httpHandler } from '../../shared/http/handler';
import { applyPayoutWebhook } from '../../shared/use-cases/payout-webhook';

/**
 * POST /api/webhooks/payout-provider: Standard Webhooks signature (401 INVALID_SIGNATURE), then
 * the settlement or failure is recorded durably before the 200 acknowledgement (decisions §6).
 */
export const handler = httpHandler({ public: true, rawBody: true }, async ({ rawBody, headers }) => {
  const result = await applyPayoutWebhook({ payouts: payoutRepo(), workflow: payoutWorkflow(), now }, { secret: await secret('PAYOUT_WEBHOOK_SECRET', 'PAYOUT_WEBHOOK_SECRET_ARN'), rawBody, headers });
  return { status: 200, body: result };
});
