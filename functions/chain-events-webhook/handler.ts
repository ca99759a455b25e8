import { chainEventDeps } from '../../shared/composition';
import { secret } from '../../shared/config';
import { ChainEventSchema } from '../../shared/http/schemas';
import { webhookHandler } from '../../shared/http/webhook';
import { applyChainEvent } from '../../shared/use-cases/chain-events';

/**
 * POST /api/webhooks/chain-events: Standard Webhooks signature (401 INVALID_SIGNATURE), body
 * `batch.stage_changed` (400 VALIDATION_ERROR), checked against the batch and the TraceLog log on
 * the ledger (200 MISMATCH otherwise, nothing changed); EXPORTED starts the automatic TOP_UP payout
 * once. Answers 200 `{received, outcome}` only after the effect is durably recorded; 503
 * LEDGER_UNAVAILABLE or PROVIDER_UNAVAILABLE (nothing recorded, no receipt) makes the sender retry
 * (decisions §6).
 */
export const handler = webhookHandler({ secret: () => secret('CHAIN_WEBHOOK_SECRET', 'CHAIN_WEBHOOK_SECRET_ARN'), schema: ChainEventSchema }, async ({ webhookId, event }) => ({
  status: 200,
  body: await applyChainEvent(chainEventDeps(), { webhookId, event }),
}));
