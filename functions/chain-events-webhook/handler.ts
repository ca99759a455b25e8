import { webhookReceipts } from '../../shared/adapters/dynamodb/webhook-receipts';
import { payoutDeps } from '../../shared/composition';
import { secret } from '../../shared/config';
import { httpHandler } from '../../shared/http/handler';
import { applyChainEvent } from '../../shared/use-cases/chain-events';

/**
 * POST /api/webhooks/chain-events: Standard Webhooks signature (401 INVALID_SIGNATURE), body
 * `batch.stage_changed` (400 VALIDATION_ERROR); EXPORTED starts the automatic TOP_UP payout once.
 * Answers 200 `{received, outcome}` only after the effect is durably recorded; 503
 * PROVIDER_UNAVAILABLE (nothing recorded, no receipt) makes the sender retry (decisions §6).
 */
export const handler = httpHandler({ public: true, rawBody: true }, async ({ rawBody, headers }) => {
  const result = await applyChainEvent(
    { ...payoutDeps(), receipts: webhookReceipts() },
    { secret: await secret('CHAIN_WEBHOOK_SECRET', 'CHAIN_WEBHOOK_SECRET_ARN'), rawBody, headers },
  );
  return { status: 200, body: result };
});
