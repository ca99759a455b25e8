import { SYSTEM_CALLER } from '../domain/caller';
import { DomainError } from '../domain/errors';
import { ugxForWeight } from '../domain/money';
import type { WebhookReceiptStore } from '../domain/ports';
import type { Stage } from '../domain/records';
import { logger } from '../runtime/logger';
import { createFarmerPayout, type PayoutDeps } from './payouts';

/**
 * Inbound chain events (decisions §6 `POST /api/webhooks/chain-events`; interface-spec Events:
 * "EXPORTED chain event → calls the farmer-payout operation automatically for the batch").
 *
 * Senders: locally `infra/local/chain-watcher.ts`, which follows TraceLog's `StageRecorded` logs on
 * the hardhat node; in AWS a chain-event provider (or the same watcher run as a long-lived task)
 * that posts the same body, signed with the same Standard Webhooks secret.
 */

/** Receipt source of this webhook (`WEBHOOK#chain-events#<webhook-id>`). */
export const CHAIN_EVENTS_SOURCE = 'chain-events';

/**
 * A `batch.stage_changed` chain event, its signature verified and its body validated by the
 * transport (shared/http/webhook.ts, shared/http/schemas.ts ChainEventSchema).
 */
export interface ChainEvent {
  type: 'batch.stage_changed';
  data: {
    batch_id: string;
    /** uint256 token id as a decimal string (or a safe integer). */
    token_id: string | number;
    stage: Stage;
    tx_hash: string;
    block_number: number;
    log_index: number;
  };
}

/** What starting the automatic TOP_UP did. */
export type TopUpOutcome = 'STARTED' | 'ALREADY_STARTED' | 'NO_PREMIUM' | 'NOT_PAYABLE';

/** What a chain-event webhook did (the 200 body's `outcome`). */
export type ChainEventOutcome = TopUpOutcome | 'NOTED' | 'UNKNOWN_BATCH' | 'TOKEN_MISMATCH' | 'DUPLICATE_WEBHOOK';

/** The ports chain events need: those of payouts, and the webhook receipts. */
export interface ChainEventDeps extends PayoutDeps {
  receipts: WebhookReceiptStore;
}

/**
 * Starts the automatic export-premium payout of a batch that reached EXPORTED (decisions §4):
 * reason TOP_UP, `round(weight_kg × export_premium_ugx_per_kg)` UGX from the batch and its
 * cooperative, paid as the USDC that buys that many shillings at the quoted rate.
 * Exactly once however often it is called: the payout's (batch, TOP_UP) guard makes a second
 * creation DUPLICATE_PAYOUT → `ALREADY_STARTED`. Premium 0 → `NO_PREMIUM` (nothing created);
 * farmer without a phone → `NOT_PAYABLE` (logged); a provider rejection leaves the payout on its
 * retry path (`STARTED`). Provider unreachable: throws PROVIDER_UNAVAILABLE (nothing left behind),
 * so the caller's sender retries. Throws when the batch or its cooperative does not exist.
 */
export async function startTopUpPayout(deps: PayoutDeps, batchId: string): Promise<{ outcome: TopUpOutcome; payout_id?: string }> {
  const batch = await deps.batches.get(batchId);
  if (!batch) throw new Error(`batch ${batchId} not found`);
  const coop = await deps.registry.getCooperative(batch.cooperative_id);
  if (!coop) throw new Error(`cooperative ${batch.cooperative_id} of batch ${batchId} not found`);
  const premium = coop.export_premium_ugx_per_kg ?? 0;
  const ugx = premium > 0 ? ugxForWeight(batch.weight_kg, premium) : 0;
  if (ugx <= 0) {
    logger.info('no export premium: no TOP_UP payout', { batch_id: batchId, cooperative_id: coop.cooperative_id });
    return { outcome: 'NO_PREMIUM' };
  }
  try {
    const payout = await createFarmerPayout(deps, SYSTEM_CALLER, {
      farmer_id: batch.farmer_id, batch_id: batch.batch_id, cooperative_id: batch.cooperative_id, reason: 'TOP_UP', amount: { ugx },
    });
    return { outcome: 'STARTED', payout_id: payout.payment_id };
  } catch (err) {
    if (err instanceof DomainError) {
      if (err.code === 'DUPLICATE_PAYOUT') return { outcome: 'ALREADY_STARTED' };
      if (err.code === 'PAYOUT_FAILED') {
        // Created, rejected at the first order, and on its retry path: durably started.
        const id = (err.details as { payout_id?: string } | undefined)?.payout_id;
        return { outcome: 'STARTED', ...(id ? { payout_id: id } : {}) };
      }
      if (err.code === 'PHONE_NOT_FOUND') {
        logger.warn('TOP_UP not payable: the farmer has no phone on record', { batch_id: batchId, farmer_id: batch.farmer_id });
        return { outcome: 'NOT_PAYABLE' };
      }
    }
    throw err;
  }
}

/**
 * POST /api/webhooks/chain-events, after the transport verified the Standard Webhooks signature
 * (401 INVALID_SIGNATURE), the `webhook-id` and the body (400 VALIDATION_ERROR). Steps:
 *  3. a `webhook-id` with a receipt → 200 `DUPLICATE_WEBHOOK`, nothing done again;
 *  4. the effect: unknown batch → `UNKNOWN_BATCH` (logged); token id ≠ the batch's →
 *     `TOKEN_MISMATCH` (logged as an error); EXPORTED → `startTopUpPayout`; other stages → `NOTED`;
 *  5. the receipt is claimed, then 200 `{received: true, outcome, payout_id?}`.
 *
 * Why the receipt comes AFTER the effect: decisions §6 acknowledges a webhook only once what it
 * says is durably recorded. Claiming first would turn a failed effect (e.g. provider unreachable,
 * 503) into a receipt, and the sender's retry with the same id would be answered "duplicate" while
 * the payout never started; and receipts cannot be released (no function may delete them). With
 * the receipt last, a failure anywhere (effect or claim) leaves no receipt, and the retry runs the
 * effect again — which is safe because exactly-once comes from the payout's (batch, TOP_UP) guard,
 * not from the receipt: a second run finds DUPLICATE_PAYOUT (`ALREADY_STARTED`). Two concurrent
 * deliveries of one id may both run the effect; the guard lets one payout through and the
 * conditional put one receipt. The receipt only spares the re-work of a replay.
 */
export async function applyChainEvent(
  deps: ChainEventDeps,
  input: { webhookId: string; event: ChainEvent },
): Promise<{ received: true; outcome: ChainEventOutcome; payout_id?: string }> {
  const { webhookId, event } = input;
  const { data } = event;
  const facts = { webhook_id: webhookId, batch_id: data.batch_id, token_id: String(data.token_id), stage: data.stage, tx_hash: data.tx_hash, log_index: data.log_index };

  if (await deps.receipts.hasWebhook(CHAIN_EVENTS_SOURCE, webhookId)) {
    logger.info('chain event replayed: already processed', facts);
    return { received: true, outcome: 'DUPLICATE_WEBHOOK' };
  }

  const result = await effect(deps, data, facts);

  const first = await deps.receipts.claimWebhook(CHAIN_EVENTS_SOURCE, webhookId, deps.now().toISOString());
  if (!first) logger.info('chain event processed concurrently under the same webhook-id', facts);
  return { received: true, ...result };
}

/** Step 4 of applyChainEvent: what the event means for the batch. */
async function effect(
  deps: ChainEventDeps,
  data: ChainEvent['data'],
  facts: Record<string, unknown>,
): Promise<{ outcome: ChainEventOutcome; payout_id?: string }> {
  const batch = await deps.batches.get(data.batch_id);
  if (!batch) {
    logger.warn('chain event for an unknown batch', facts);
    return { outcome: 'UNKNOWN_BATCH' };
  }
  if (!sameTokenId(batch.token_id, data.token_id)) {
    logger.error('chain event token id does not match the batch', { ...facts, batch_token_id: batch.token_id });
    return { outcome: 'TOKEN_MISMATCH' };
  }
  if (data.stage !== 'EXPORTED') {
    logger.info('chain event noted', facts);
    return { outcome: 'NOTED' };
  }
  const r = await startTopUpPayout(deps, batch.batch_id);
  logger.info('chain event EXPORTED: automatic TOP_UP', { ...facts, outcome: r.outcome, payout_id: r.payout_id });
  return r;
}

function sameTokenId(stored: string, received: string | number): boolean {
  try {
    return BigInt(stored) === BigInt(received);
  } catch {
    return false;
  }
}
