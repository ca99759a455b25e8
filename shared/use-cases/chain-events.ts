import { SYSTEM_CALLER } from '../domain/caller';
import { STAGE_CODES } from '../domain/custody';
import { DomainError } from '../domain/errors';
import { exportPremiumUgx } from '../domain/payout-limits';
import type { Hex } from 'viem';
import type { TraceLogReader } from '../domain/ports/ledger';
import type { WebhookReceiptStore } from '../domain/ports/messaging';
import type { RegistryStore } from '../domain/ports/registry';
import { STAGES, type Batch, type Stage } from '../domain/records';
import { logger } from '../runtime/logger';
import { createFarmerPayout, type PayoutCreationDeps } from './payouts';

/**
 * Inbound chain events (docs/api/inbound-webhooks.md#chain-events `POST /api/webhooks/chain-events`; docs/api/inbound-webhooks.md#chain-events:
 * "EXPORTED chain event → calls the farmer-payout operation automatically for the batch").
 *
 * Senders: the scheduled chain-event watcher (shared/use-cases/chain-watch.ts), which reads the
 * logs itself and calls `applyChainEvent` directly with the same event and id; optionally a
 * chain-event provider posting the same body, signed with the same Standard Webhooks secret
 * (locally `infra/local/chain-watcher.ts` plays it, LOCAL_CHAIN_EVENTS=webhook).
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
type TopUpOutcome = 'STARTED' | 'ALREADY_STARTED' | 'NO_PREMIUM' | 'NOT_PAYABLE';

/** What a chain-event webhook did (the 200 body's `outcome`). */
export type ChainEventOutcome = TopUpOutcome | 'NOTED' | 'UNKNOWN_BATCH' | 'TOKEN_MISMATCH' | 'MISMATCH' | 'DUPLICATE_WEBHOOK';

/** Log key of chain events that do not match the batch or the ledger (an alarm filters on it). */
export const CHAIN_EVENT_ALARM = 'FORGED_OR_MISMATCHED_CHAIN_EVENT';

/** What the automatic TOP_UP needs: payout creation, and the batch's cooperative (its export premium). */
interface TopUpDeps extends PayoutCreationDeps {
  registry: Pick<RegistryStore, 'getFarmer' | 'getCooperative'>;
}

/** The ports chain events need: those of payouts, the webhook receipts, and the trace log to check events against. */
export interface ChainEventDeps extends TopUpDeps {
  receipts: WebhookReceiptStore;
  traceLog: TraceLogReader;
}

/**
 * Starts the automatic export-premium payout of a batch that reached EXPORTED (docs/api/conventions.md#identifiers-money-and-time):
 * reason TOP_UP, `round(weight_kg × export_premium_ugx_per_kg)` UGX from the batch and its
 * cooperative, paid as the USDC that buys that many shillings at the quoted rate.
 * Exactly once however often it is called: the payout's (batch, TOP_UP) guard makes a second
 * creation DUPLICATE_PAYOUT → `ALREADY_STARTED`. Premium 0 → `NO_PREMIUM` (nothing created);
 * farmer without a phone → `NOT_PAYABLE` (logged); a provider rejection leaves the payout on its
 * retry path (`STARTED`). Provider unreachable: throws PROVIDER_UNAVAILABLE (nothing left behind),
 * so the caller's sender retries. Throws when the batch or its cooperative does not exist.
 */
async function startTopUpPayout(deps: TopUpDeps, batchId: string): Promise<{ outcome: TopUpOutcome; payout_id?: string }> {
  const batch = await deps.batches.get(batchId);
  if (!batch) throw new Error(`batch ${batchId} not found`);
  const coop = await deps.registry.getCooperative(batch.cooperative_id);
  if (!coop) throw new Error(`cooperative ${batch.cooperative_id} of batch ${batchId} not found`);
  const ugx = exportPremiumUgx(batch.weight_kg, coop.export_premium_ugx_per_kg);
  if (ugx <= 0) {
    logger.info('no export premium: no TOP_UP payout', { batch_id: batchId, cooperative_id: coop.cooperative_id });
    return { outcome: 'NO_PREMIUM' };
  }
  try {
    const payout = await createFarmerPayout(deps, SYSTEM_CALLER, {
      farmer_id: batch.farmer_id,
      batch_id: batch.batch_id,
      cooperative_id: batch.cooperative_id,
      reason: 'TOP_UP',
      amount: { ugx },
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
      if (err.code === 'PAYOUT_EXCEEDS_BATCH_VALUE') {
        // Manual payouts took the batch's value already: the premium would pay the coffee twice.
        logger.error("TOP_UP not payable: the batch's farmer payouts already reach its value", {
          batch_id: batchId,
          farmer_id: batch.farmer_id,
          alarm: 'PAYOUT_EXCEEDS_BATCH_VALUE',
          details: err.details,
        });
        return { outcome: 'NOT_PAYABLE' };
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
 *     `TOKEN_MISMATCH`; the event does not match the batch or the ledger (below) → `MISMATCH`
 *     (both logged as errors with `alarm: 'FORGED_OR_MISMATCHED_CHAIN_EVENT'`, nothing changed);
 *     EXPORTED → `startTopUpPayout`; other stages → `NOTED`;
 *  5. the receipt is claimed (not for `MISMATCH`: that changes nothing at all), then 200
 *     `{received: true, outcome, payout_id?}`.
 *
 * A signed event is not trusted for what it says (the signature proves only who relayed it).
 * Before it is acted on — whatever the stage — it must match:
 *  - the batch: its current stage is the event's stage or later, its `stage_history` has an entry
 *    for the event's stage (every stage change appends one in the same transaction as the
 *    stage), and that entry's `chain_tx_hash` is the event's `tx_hash` (hex case ignored) — or
 *    still null, because the ledger writer sets it once the transaction is mined and the watcher
 *    may report the log first; the ledger check below then carries the proof. A batch at
 *    DELIVERED therefore cannot be paid an EXPORTED premium whatever the event says;
 *  - the ledger: the mined, successful transaction `tx_hash` has, at `log_index`, a
 *    `StageRecorded` log of the configured TraceLog contract (only its recorder can emit one) for
 *    the batch's token id and the event's stage code (`STAGE_CODES`). The event's
 *    `block_number` is informational; the ledger's block is the one logged.
 * A ledger that cannot be read → 503 LEDGER_UNAVAILABLE (no receipt; the sender retries).
 *
 * Why the receipt comes AFTER the effect: docs/api/inbound-webhooks.md#chain-events acknowledges a webhook only once what it
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
  const facts = {
    webhook_id: webhookId,
    batch_id: data.batch_id,
    token_id: String(data.token_id),
    stage: data.stage,
    tx_hash: data.tx_hash,
    log_index: data.log_index,
  };

  if (await deps.receipts.hasWebhook(CHAIN_EVENTS_SOURCE, webhookId)) {
    logger.info('chain event replayed: already processed', facts);
    return { received: true, outcome: 'DUPLICATE_WEBHOOK' };
  }

  const result = await effect(deps, data, facts);
  // A mismatched event changes nothing, not even the receipts: no table write for a forged event,
  // and a re-delivery of a genuine one (a lagging node, say) is checked afresh.
  if (result.outcome === 'MISMATCH') return { received: true, ...result };

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
    logger.error('chain event token id does not match the batch', { ...facts, alarm: CHAIN_EVENT_ALARM, batch_token_id: batch.token_id });
    return { outcome: 'TOKEN_MISMATCH' };
  }
  const mismatch = historyMismatch(batch, data) ?? (await ledgerMismatch(deps, batch, data));
  if (mismatch) {
    logger.error('chain event does not match the batch or the ledger: ignored', {
      ...facts,
      alarm: CHAIN_EVENT_ALARM,
      reason: mismatch,
      batch_stage: batch.stage,
    });
    return { outcome: 'MISMATCH' };
  }
  if (data.stage !== 'EXPORTED') {
    logger.info('chain event noted', facts);
    return { outcome: 'NOTED' };
  }
  const r = await startTopUpPayout(deps, batch.batch_id);
  logger.info('chain event EXPORTED: automatic TOP_UP', { ...facts, outcome: r.outcome, payout_id: r.payout_id });
  return r;
}

/** Why the event does not match the batch's stage history, or null when it does (see applyChainEvent). */
function historyMismatch(batch: Batch, data: ChainEvent['data']): string | null {
  const entries = batch.stage_history.filter((h) => h.stage === data.stage);
  if (entries.length === 0 || batch.stage === null || STAGES.indexOf(batch.stage) < STAGES.indexOf(data.stage))
    return `the batch (at ${batch.stage}) has not reached ${data.stage}`;
  const ok = entries.some((h) => h.chain_tx_hash === null || h.chain_tx_hash.toLowerCase() === data.tx_hash.toLowerCase());
  return ok ? null : `the batch's ${data.stage} was recorded by another transaction (${entries.map((h) => h.chain_tx_hash).join(', ')})`;
}

/**
 * Why the event does not match the trace log, or null when it does (see applyChainEvent).
 * Throws LEDGER_UNAVAILABLE (503) when the ledger cannot be read.
 */
async function ledgerMismatch(deps: ChainEventDeps, batch: Batch, data: ChainEvent['data']): Promise<string | null> {
  let log: Awaited<ReturnType<TraceLogReader['stageRecordedAt']>>;
  try {
    log = await deps.traceLog.stageRecordedAt(data.tx_hash as Hex, data.log_index);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw new DomainError('LEDGER_UNAVAILABLE', `The ledger could not be read to check the chain event: ${(err as Error).message}`);
  }
  if (!log) return `no mined StageRecorded log of the trace log at ${data.tx_hash}#${data.log_index}`;
  if (!sameTokenId(batch.token_id, log.tokenId.toString()))
    return `the ledger log is for token ${log.tokenId}, not the batch's ${batch.token_id}`;
  if (log.stage !== STAGE_CODES[data.stage])
    return `the ledger log records stage code ${log.stage}, not ${data.stage} (${STAGE_CODES[data.stage]})`;
  return null;
}

function sameTokenId(stored: string, received: string | number): boolean {
  try {
    return BigInt(stored) === BigInt(received);
  } catch {
    return false;
  }
}
