import { DynamoChainCursorStore } from '../adapters/dynamodb/chain-cursor';
import { DynamoChainEventParking } from '../adapters/dynamodb/chain-event-parking';
import { metrics } from '../runtime/metrics';
import { createChainLogSourceFromEnv, type EvmChainLogSource } from '../adapters/ledger/chain-log-source';
import { createTraceLogReaderFromEnv, type EvmTraceLogReader } from '../adapters/ledger/trace-log-reader';
import { envOr, requireEnv } from '../config';
import type { ChainCursorStore, ChainEventParking, ChainLogSource } from '../domain/ports/chain-watch';
import type { ChainConfirmationDeps } from '../use-cases/chain-confirmations';
import { DEFAULT_MAX_EVENT_ATTEMPTS, type ChainWatchConfig, type ChainWatchDeps } from '../use-cases/chain-watch';
import { chainEventDeps } from './index';
import { now } from './repos';
import { settlementDeps } from './settlement';

/**
 * The scheduled chain watcher (functions/chain-event-watcher): the chain read from LEDGER_RPC_URL /
 * LEDGER_CHAIN_ID / TRACE_LOG_ADDRESS / BATCH_TOKEN_ADDRESS / LENDING_VAULT_ADDRESS (no signing
 * key), the cursor in the table, and the chain-events webhook's own deps for the events.
 */

let source: EvmChainLogSource | undefined;
let cursor: ChainCursorStore | undefined;
let parking: ChainEventParking | undefined;

/** The chain's logs, built on first use (one per container: it caches token → batch ids). */
function chainLogSource(): ChainLogSource {
  return {
    headBlock: () => (source ??= createChainLogSourceFromEnv()).headBlock(),
    logsIn: (from, to) => (source ??= createChainLogSourceFromEnv()).logsIn(from, to),
  };
}

/** Ports of a watcher run. */
export function chainWatchDeps(): ChainWatchDeps {
  cursor ??= new DynamoChainCursorStore(Number(requireEnv('LEDGER_CHAIN_ID')));
  parking ??= new DynamoChainEventParking(Number(requireEnv('LEDGER_CHAIN_ID')));
  return {
    source: chainLogSource(),
    cursor,
    parking,
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

let depthReader: EvmTraceLogReader | undefined;

/** Ports of the chain-events webhook's confirmation check: the ledger (read only) and the watcher's depth. */
export function chainConfirmationDeps(): ChainConfirmationDeps {
  return {
    chain: {
      transactionBlock: (txHash) => (depthReader ??= createTraceLogReaderFromEnv()).transactionBlock(txHash),
      headBlock: () => (depthReader ??= createTraceLogReaderFromEnv()).headBlock(),
    },
    confirmations: chainConfirmations(),
  };
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
