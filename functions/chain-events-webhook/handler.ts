import { chainConfirmationDeps, chainEventDeps } from '../../shared/composition/chain-events';
import { settlementDeps } from '../../shared/composition/lending';
import { secret } from '../../shared/config';
import { chainEventsWebhookRoute } from '../../shared/http/routes/inbound-webhooks';
import { webhookHandler, webhookRouteOptions } from '../../shared/http/webhook';
import { requireConfirmations } from '../../shared/use-cases/chain-confirmations';
import { applyChainEvent } from '../../shared/use-cases/chain-events';
import { applyBuyerPayment } from '../../shared/use-cases/settlement';

/**
 * POST /api/webhooks/chain-events: Standard Webhooks signature (401 INVALID_SIGNATURE), body
 * `batch.stage_changed` or `purchase_order.paid` (400 VALIDATION_ERROR), each checked against the
 * ledger (200 MISMATCH otherwise, nothing changed). A stage event for EXPORTED starts the
 * automatic TOP_UP payout once; a buyer payment settles its purchase order once (loans repaid,
 * batches SETTLED, remainder to the cooperative). Answers 200 `{received, outcome}` only after the
 * effect is durably recorded; 503 LEDGER_UNAVAILABLE or PROVIDER_UNAVAILABLE (no receipt) makes
 * the sender retry (docs/api/inbound-webhooks.md#chain-events). An event whose transaction is not yet CHAIN_WATCH_CONFIRMATIONS
 * blocks deep (the scheduled watcher's depth) is refused before anything is read or written:
 * 409 CHAIN_EVENT_NOT_CONFIRMED with Retry-After, so the sender sends it again later.
 */
export const handler = webhookHandler(
  webhookRouteOptions(chainEventsWebhookRoute, () => secret('CHAIN_WEBHOOK_SECRET', 'CHAIN_WEBHOOK_SECRET_ARN')),
  async ({ webhookId, event }) => {
    await requireConfirmations(chainConfirmationDeps(), event.data.tx_hash);
    return {
      status: 200,
      body:
        event.type === 'purchase_order.paid'
          ? await applyBuyerPayment(settlementDeps(), { webhookId, event })
          : await applyChainEvent(chainEventDeps(), { webhookId, event }),
    };
  },
);
