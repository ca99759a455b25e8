import { DynamoChainCursorStore } from '../adapters/dynamodb/chain-cursor';
import { DynamoChainEventParking } from '../adapters/dynamodb/chain-event-parking';
import { readCooperative, readFarmer } from '../adapters/dynamodb/registry-repo';
import { createChainLogSourceFromEnv } from '../adapters/ledger/chain-log-source';
import { createTraceLogReaderFromEnv } from '../adapters/ledger/trace-log-reader';
import { envOr, requireEnv } from '../config';
import type { ChainDepthReader } from '../domain/chain-confirmations';
import type { ChainCursorStore, ChainEventParking, ChainLogSource } from '../domain/ports/chain-watch';
import type { TraceLogReader } from '../domain/ports/ledger';
import { metrics } from '../runtime/metrics';
import type { ChainConfirmationDeps } from '../use-cases/chain-confirmations';
import type { ChainEventDeps } from '../use-cases/chain-events';
import { DEFAULT_MAX_EVENT_ATTEMPTS, type ChainWatchConfig, type ChainWatchDeps } from '../use-cases/chain-watch';
import { settlementDeps } from './lending';
import { once, onFirstUse } from './once';
import { payoutCreationDeps } from './payouts';
import { now, webhookReceipts } from './platform';

/**
 * Chain events: what the ledger's contracts emitted, acted on once buried deep enough — a stage
 * recorded on the trace log (it may start the batch's payout) and a buyer's purchase-order payment
 * on the vault (its settlement). They arrive by the chain-events webhook (functions/chain-events-webhook)
 * or the scheduled watcher (functions/chain-event-watcher), both checked against the chain read
 * from LEDGER_RPC_URL / LEDGER_CHAIN_ID / TRACE_LOG_ADDRESS / BATCH_TOKEN_ADDRESS /
 * LENDING_VAULT_ADDRESS (no signing key), built on first use.
 */

/** The trace log read back: a claimed stage checked against it, and the depth of a transaction. */
const traceLogReader = (): TraceLogReader & ChainDepthReader =>
  once(traceLogReader, () => onFirstUse<TraceLogReader & ChainDepthReader>(() => createTraceLogReaderFromEnv()));

/** Ports of the chain-event webhook: those of payouts, the webhook receipts, and the trace log to check events against. */
export function chainEventDeps(): ChainEventDeps {
  return {
    ...payoutCreationDeps(),
    registry: { getFarmer: readFarmer, getCooperative: readCooperative },
    receipts: webhookReceipts(),
    traceLog: traceLogReader(),
  };
}

/** Ports of the chain-events webhook's confirmation check: the ledger (read only) and the watcher's depth. */
export function chainConfirmationDeps(): ChainConfirmationDeps {
  return { chain: traceLogReader(), confirmations: chainConfirmations() };
}

/** The chain's logs (one per container: it caches token → batch ids). */
const chainLogSource = (): ChainLogSource => once(chainLogSource, () => onFirstUse<ChainLogSource>(() => createChainLogSourceFromEnv()));
/** Where the watcher is up to (the single table). */
const chainCursor = (): ChainCursorStore => once(chainCursor, () => new DynamoChainCursorStore(Number(requireEnv('LEDGER_CHAIN_ID'))));
/** Events the watcher gave up on. */
const chainEventParking = (): ChainEventParking =>
  once(chainEventParking, () => new DynamoChainEventParking(Number(requireEnv('LEDGER_CHAIN_ID'))));

/** Ports of a watcher run: the chain, the cursor, the parked events, and the webhook's own deps for the events. */
export function chainWatchDeps(): ChainWatchDeps {
  return {
    source: chainLogSource(),
    cursor: chainCursor(),
    parking: chainEventParking(),
    parkedMetric: () => metrics.count('ChainEventsParked'),
    stageEvents: chainEventDeps(),
    buyerPayments: settlementDeps(),
    now,
  };
}

/**
 * Blocks a chain log must be buried under before anything acts on it: CHAIN_WATCH_CONFIRMATIONS,
 * the one setting the scheduled watcher and the chain-events webhook both use (5 in AWS by default,
 * 0 locally). Throws naming it when missing or malformed.
 */
function chainConfirmations(): number {
  return count('CHAIN_WATCH_CONFIRMATIONS', requireEnv('CHAIN_WATCH_CONFIRMATIONS'), 0);
}

/** A non-negative integer variable; throws naming it when malformed. */
function count(name: string, text: string, min: number): number {
  if (!/^\d{1,15}$/.test(text.trim()) || Number(text) < min) throw new Error(`Environment variable ${name} must be an integer ≥ ${min}`);
  return Number(text);
}

/**
 * The watcher's tuning: CHAIN_WATCH_CONFIRMATIONS (blocks a log must be buried under; 5 in AWS by
 * default, 0 locally), CHAIN_WATCH_START_BLOCK (where a new cursor starts: the contracts'
 * deployment block), and the optional CHAIN_WATCH_MAX_BLOCK_RANGE (default 1000 blocks per
 * eth_getLogs), CHAIN_WATCH_MAX_RANGES_PER_RUN (default 20) and CHAIN_WATCH_MAX_EVENT_ATTEMPTS
 * (default 5: runs in which one event may fail before it is parked). `leaseMs`: the caller's (longer
 * than the function may run). Throws naming a missing or malformed variable.
 */
export function chainWatchConfig(leaseMs: number): ChainWatchConfig {
  return {
    confirmations: chainConfirmations(),
    startBlock: BigInt(count('CHAIN_WATCH_START_BLOCK', requireEnv('CHAIN_WATCH_START_BLOCK'), 0)),
    maxBlocksPerRange: count('CHAIN_WATCH_MAX_BLOCK_RANGE', envOr('CHAIN_WATCH_MAX_BLOCK_RANGE', '1000'), 1),
    maxRangesPerRun: count('CHAIN_WATCH_MAX_RANGES_PER_RUN', envOr('CHAIN_WATCH_MAX_RANGES_PER_RUN', '20'), 1),
    leaseMs,
    maxEventAttempts: count(
      'CHAIN_WATCH_MAX_EVENT_ATTEMPTS',
      envOr('CHAIN_WATCH_MAX_EVENT_ATTEMPTS', String(DEFAULT_MAX_EVENT_ATTEMPTS)),
      1,
    ),
  };
}
