import { safeHead } from '../domain/chain-confirmations';
import { STAGE_CODES } from '../domain/custody';
import { DomainError, isUnavailableCode, LedgerRefusedError } from '../domain/errors';
import type { ChainCursorStore, ChainEventParking, ChainLogSource, WatchedChainLog } from '../domain/ports/chain-watch';
import type { Stage } from '../domain/records';
import { logger } from '../runtime/logger';
import { applyChainEvent, type ChainEvent, type ChainEventDeps } from './chain-events';
import { applyBuyerPayment, type BuyerPaymentEvent, type SettlementDeps } from './settlement';

/**
 * Our own chain watcher (issue 12): the scheduled function `chain-event-watcher` (EventBridge, every
 * minute; locally a timer) reads TraceLog `StageRecorded` and LendingVault `PurchaseOrderPaid`
 * logs with `eth_getLogs` from a block cursor kept in the table, and feeds each one to the very
 * use cases the signed chain-events webhook feeds — `applyChainEvent` (EXPORTED starts the TOP_UP
 * payout) and `applyBuyerPayment` (settlement) — with the same event shape and the same id
 * `evt_<txHash>_<logIndex>` the webhook's `webhook-id` carries, so whichever path reports an event
 * first, the other finds its receipt (`DUPLICATE_WEBHOOK`) and nothing happens twice.
 *
 * One run:
 *  1. takes the cursor's lease (a conditional update; another run holding an unexpired lease →
 *     `BUSY`, nothing read). The lease outlasts the function's timeout and no range is started in
 *     its second half, so a run never outlives its lease: two runs never process the same blocks;
 *  2. reads the head block; only blocks at least `confirmations` deep are read
 *     (`safe head = head − confirmations`);
 *  3. from the cursor to the safe head in ranges of at most `maxBlocksPerRange` blocks, at most
 *     `maxRangesPerRun` of them: reads the range's logs, applies its buyer payments first and then
 *     its stage events, each in chain order (block, then log index) — the events are independent,
 *     and a range of a thousand stage events must not hold back the payment that starts a
 *     settlement — then advances the cursor past the range (conditional on still holding the lease
 *     and the cursor being where the run found it). A failure anywhere in a range (RPC, table,
 *     provider) stops the run with the cursor before that range: the next run reads it again, and
 *     the events already applied are replays the use cases recognise (receipts, and the payout's
 *     (batch, TOP_UP) guard and the settlement's one-per-order item behind them);
 *  4. gives the lease up.
 * Events the use cases answer MISMATCH, UNKNOWN_BATCH and the like are applied (logged, alarmed
 * by them) and passed; a log that cannot be an event (unknown stage code, token without a batch
 * id, a `poRef` that is not an id) is logged and passed.
 *
 * No poison event: an event whose use case throws (other than for an outage: a 503-class error,
 * which is retried without counting) is counted (`parking.eventFailed`); once it has
 * failed in `maxEventAttempts` runs it is parked — kept with its reason for operators
 * (`npm run ledger-parked -- list`), an error logged with `alarm: CHAIN_EVENT_PARKED`, the
 * ChainEventsParked metric counted — and the run goes on past it, so it no longer holds the cursor.
 */

/** Tuning of the watcher (environment `CHAIN_WATCH_*`, see shared/composition/chain-events.ts). */
export interface ChainWatchConfig {
  /** Blocks a log must be buried under before it is read (0 locally: the hardhat node never reorganises). */
  confirmations: number;
  /** The block the cursor starts at when the table has none (the contracts' deployment block). */
  startBlock: bigint;
  /** Blocks per eth_getLogs range (providers cap it; e.g. 1000). */
  maxBlocksPerRange: number;
  /** Ranges per run; the rest waits for the next run. */
  maxRangesPerRun: number;
  /** How long the lease holds, ms: longer than the function may run. No range starts in its second half. */
  leaseMs: number;
  /** Runs in which one event may fail before it is parked and the cursor moves past it (default DEFAULT_MAX_EVENT_ATTEMPTS). */
  maxEventAttempts?: number;
}

/** Runs in which one chain event may fail before the watcher parks it, unless CHAIN_WATCH_MAX_EVENT_ATTEMPTS says otherwise. */
export const DEFAULT_MAX_EVENT_ATTEMPTS = 5;

/** The log key (`alarm`) of a parked chain event: a metric filter and an alarm watch it (infra/stack/observability.ts). */
export const CHAIN_EVENT_PARKED_ALARM = 'CHAIN_EVENT_PARKED';

/** The ports of a run. */
export interface ChainWatchDeps {
  source: ChainLogSource;
  cursor: ChainCursorStore;
  /** What `batch.stage_changed` events need (the webhook's deps). */
  stageEvents: ChainEventDeps;
  /** What `purchase_order.paid` events need (the webhook's deps). */
  buyerPayments: SettlementDeps;
  now: () => Date;
  /** Failed events counted and parked (without it a failing event holds the cursor, as before). */
  parking?: ChainEventParking;
  /** Counted once per parked event (the ChainEventsParked metric). */
  parkedMetric?: () => void;
}

/** What a run did (JSON: block numbers as numbers). */
export interface ChainWatchReport {
  /**
   * CAUGHT_UP: read up to the safe head; MORE_TO_READ: stopped at `maxRangesPerRun` or half its
   * lease; BUSY: another run holds the lease; LEASE_LOST: the cursor moved under it (stopped);
   * FAILED: a range failed (the cursor stays before it; `error` says why).
   */
  outcome: 'CAUGHT_UP' | 'MORE_TO_READ' | 'BUSY' | 'LEASE_LOST' | 'FAILED';
  /** Cursor when the run started (next block to read). */
  from_block?: number;
  /** Cursor when the run ended. */
  next_block?: number;
  head_block?: number;
  /** Ranges fully processed. */
  ranges: number;
  /** Events applied, by the use case's outcome (STARTED, NOTED, DUPLICATE_WEBHOOK, SETTLEMENT_STARTED, …). */
  outcomes: Record<string, number>;
  /** Logs that could not be events. */
  skipped: number;
  /** Events parked by this run (they failed in every allowed run; the cursor moved past them). */
  parked?: number;
  error?: string;
}

/** Id of a chain event, the same the webhook path's `webhook-id` carries. */
export function chainEventId(txHash: string, logIndex: number): string {
  return `evt_${txHash}_${logIndex}`;
}

const STAGE_OF_CODE = new Map<number, Stage>((Object.entries(STAGE_CODES) as Array<[Stage, number]>).map(([name, code]) => [code, name]));

/**
 * The event a log stands for, as the webhook's body would carry it, or a reason it is none.
 * `batch.stage_changed`: {batch_id, token_id (decimal string), stage, tx_hash, block_number, log_index};
 * `purchase_order.paid`: {purchase_order_id, payer, amount_usd_micro (decimal string), tx_hash, block_number, log_index}.
 */
function eventOfLog(log: WatchedChainLog): { event: ChainEvent | BuyerPaymentEvent } | { skip: string } {
  const where = { tx_hash: log.txHash, block_number: Number(log.blockNumber), log_index: log.logIndex };
  if (log.kind === 'StageRecorded') {
    const stage = STAGE_OF_CODE.get(log.stage);
    if (stage === undefined) return { skip: `unknown stage code ${log.stage}` };
    if (!log.batchId) return { skip: `token ${log.tokenId} has no batch id` };
    return { event: { type: 'batch.stage_changed', data: { batch_id: log.batchId, token_id: log.tokenId.toString(), stage, ...where } } };
  }
  if (!log.purchaseOrderId) return { skip: 'poRef is not a purchase order id' };
  return {
    event: {
      type: 'purchase_order.paid',
      data: { purchase_order_id: log.purchaseOrderId, payer: log.payer, amount_usd_micro: log.amountUsdMicro.toString(), ...where },
    },
  };
}

const inChainOrder = (a: WatchedChainLog, b: WatchedChainLog) =>
  a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1;

/** A range's buyer payments before its stage events, each kind in chain order. */
const paymentsFirst = (a: WatchedChainLog, b: WatchedChainLog) =>
  a.kind === b.kind ? inChainOrder(a, b) : a.kind === 'PurchaseOrderPaid' ? -1 : 1;

/**
 * One run of the watcher (see the module comment) under the lease owner `runId` (unique per run).
 * Never throws for a failed range: the report says FAILED with the error, the cursor unchanged
 * past the last range fully processed. Throws only when the lease cannot be taken or given up
 * (the table is unavailable), leaving the cursor as it was.
 */
export async function runChainWatch(deps: ChainWatchDeps, config: ChainWatchConfig, runId: string): Promise<ChainWatchReport> {
  if (!(Number.isSafeInteger(config.confirmations) && config.confirmations >= 0))
    throw new RangeError('chain watch: confirmations must be a non-negative integer');
  if (!(Number.isSafeInteger(config.maxBlocksPerRange) && config.maxBlocksPerRange >= 1))
    throw new RangeError('chain watch: maxBlocksPerRange must be a positive integer');
  if (!(Number.isSafeInteger(config.maxRangesPerRun) && config.maxRangesPerRun >= 1))
    throw new RangeError('chain watch: maxRangesPerRun must be a positive integer');
  if (!(config.leaseMs > 0) || config.startBlock < 0n)
    throw new RangeError('chain watch: leaseMs must be positive and startBlock non-negative');

  const startedAt = deps.now();
  const leaseUntil = new Date(startedAt.getTime() + config.leaseMs);
  const lastRangeStart = startedAt.getTime() + config.leaseMs / 2;
  const report: ChainWatchReport = { outcome: 'CAUGHT_UP', ranges: 0, outcomes: {}, skipped: 0 };

  const claimed = await deps.cursor.claim(runId, startedAt, leaseUntil, config.startBlock);
  if (!claimed) {
    logger.info('chain watch: another run holds the cursor', { run_id: runId });
    return { ...report, outcome: 'BUSY' };
  }
  let next = claimed.nextBlock;
  report.from_block = Number(next);
  try {
    const head = await deps.source.headBlock();
    report.head_block = Number(head);
    const deepEnough = safeHead(head, config.confirmations);
    while (next <= deepEnough) {
      if (report.ranges >= config.maxRangesPerRun || deps.now().getTime() >= lastRangeStart) {
        report.outcome = 'MORE_TO_READ';
        break;
      }
      const last = next + BigInt(config.maxBlocksPerRange) - 1n < deepEnough ? next + BigInt(config.maxBlocksPerRange) - 1n : deepEnough;
      const logs = [...(await deps.source.logsIn(next, last))].sort(paymentsFirst);
      for (const log of logs) await applyOrPark(deps, config, log, report);
      if (!(await deps.cursor.advance(runId, next, last + 1n))) {
        logger.error('chain watch: the cursor moved under this run; stopped', { run_id: runId, from_block: Number(next) });
        report.outcome = 'LEASE_LOST';
        break;
      }
      report.ranges++;
      next = last + 1n;
    }
  } catch (err) {
    report.outcome = 'FAILED';
    report.error = (err as Error)?.message ?? String(err);
    logger.error('chain watch: a block range failed; the next run reads it again', {
      run_id: runId,
      next_block: Number(next),
      error: report.error,
    });
  } finally {
    report.next_block = Number(next);
    await deps.cursor.release(runId);
  }
  logger.info('chain watch run', { run_id: runId, ...report });
  return report;
}

/** Applies one log through the webhook's use case; throws what the use case throws. */
async function applyLog(deps: ChainWatchDeps, log: WatchedChainLog, report: ChainWatchReport): Promise<void> {
  const id = chainEventId(log.txHash, log.logIndex);
  const mapped = eventOfLog(log);
  if ('skip' in mapped) {
    report.skipped++;
    logger.warn('chain watch: log skipped', { event_id: id, kind: log.kind, reason: mapped.skip });
    return;
  }
  const { event } = mapped;
  const result =
    event.type === 'batch.stage_changed'
      ? await applyChainEvent(deps.stageEvents, { webhookId: id, event })
      : await applyBuyerPayment(deps.buyerPayments, { webhookId: id, event });
  report.outcomes[result.outcome] = (report.outcomes[result.outcome] ?? 0) + 1;
}

/**
 * `applyLog`, with the poison-event policy: a failure is counted; below the allowed runs it is
 * thrown (the range fails, the cursor stays before it), at the limit the event is parked and passed.
 */
async function applyOrPark(deps: ChainWatchDeps, config: ChainWatchConfig, log: WatchedChainLog, report: ChainWatchReport): Promise<void> {
  try {
    await applyLog(deps, log, report);
  } catch (err) {
    // An outage (the provider, the ledger or the table unavailable: a 503-class error) is nobody's poison: retried, not counted.
    if (!deps.parking || isTransient(err)) throw err;
    const id = chainEventId(log.txHash, log.logIndex);
    const reason = (err as Error)?.message ?? String(err);
    const at = deps.now().toISOString();
    const attempts = await deps.parking.eventFailed(id, reason, at);
    if (attempts < (config.maxEventAttempts ?? DEFAULT_MAX_EVENT_ATTEMPTS)) throw err;
    const mapped = eventOfLog(log);
    await deps.parking.park(
      id,
      'event' in mapped ? (mapped.event as unknown as Record<string, unknown>) : { kind: log.kind },
      `parked after ${attempts} failed runs: ${reason}`,
      at,
    );
    report.parked = (report.parked ?? 0) + 1;
    deps.parkedMetric?.();
    logger.error('chain watch: an event failed in every allowed run; parked, the cursor moves past it', {
      alarm: CHAIN_EVENT_PARKED_ALARM,
      event_id: id,
      attempts,
      reason,
    });
  }
}

/** A temporarily unavailable dependency (PROVIDER_UNAVAILABLE, LEDGER_UNAVAILABLE, …) other than a deterministic refusal of the ledger. */
function isTransient(err: unknown): boolean {
  return err instanceof DomainError && isUnavailableCode(err.code) && !(err instanceof LedgerRefusedError);
}
