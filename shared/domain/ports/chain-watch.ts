/**
 * Ports: The chain watcher: the logs it follows, its block cursor and the events it parks.
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { Hex } from 'viem';

/**
 * A log the chain watcher follows, decoded (shared/use-cases/chain-watch.ts):
 * - TraceLog `StageRecorded(tokenId, stage, …)` with the batch id the BatchToken holds for the
 *   token (`batchId` null when it holds none);
 * - LendingVault `PurchaseOrderPaid(poRef, payer, amount)` with the purchase order id of `poRef`
 *   (`purchaseOrderId` null when the bytes32 is not an id).
 * `blockNumber`/`logIndex` place it in chain order; only mined, non-removed logs are given.
 */
export type WatchedChainLog =
  | { kind: 'StageRecorded'; blockNumber: bigint; logIndex: number; txHash: Hex; tokenId: bigint; stage: number; batchId: string | null }
  | {
      kind: 'PurchaseOrderPaid';
      blockNumber: bigint;
      logIndex: number;
      txHash: Hex;
      purchaseOrderId: string | null;
      payer: Hex;
      amountUsdMicro: bigint;
    };

/** The chain as the watcher reads it (eth_blockNumber, eth_getLogs). Errors: LedgerUnavailableError. */
export interface ChainLogSource {
  /** The latest block number the endpoint knows. */
  headBlock(): Promise<bigint>;
  /** The followed logs of blocks [fromBlock, toBlock] (inclusive), in chain order (block, then log index). */
  logsIn(fromBlock: bigint, toBlock: bigint): Promise<WatchedChainLog[]>;
}

/**
 * The chain watcher's block cursor: one item holding the next block to read and a lease, so that
 * two overlapping runs never process the same blocks. Errors: StoreUnavailableError.
 */
export interface ChainCursorStore {
  /**
   * Takes the lease for `owner` until `leaseUntil` when nobody holds an unexpired one (a
   * conditional update); creates the cursor at `startBlock` when there is none. Returns the next
   * block to read, or null when another run holds the lease.
   */
  claim(owner: string, now: Date, leaseUntil: Date, startBlock: bigint): Promise<{ nextBlock: bigint } | null>;
  /**
   * Moves the cursor from `fromBlock` to `nextBlock` when `owner` still holds the lease and the
   * cursor is still at `fromBlock` (a conditional update); false otherwise (nothing changed).
   */
  advance(owner: string, fromBlock: bigint, nextBlock: bigint): Promise<boolean>;
  /** Gives the lease up when `owner` holds it (a no-op otherwise). */
  release(owner: string): Promise<void>;
}

/**
 * Chain events the watcher could not apply (its poison-event policy): failed runs counted per event;
 * after the allowed runs the event is parked — kept with its reason for operators — and the cursor
 * moves past it, so one event that always fails no longer holds every later one.
 */
export interface ChainEventParking {
  /** Counts one failed application of event `eventId` (the reason kept); the failures so far. */
  eventFailed(eventId: string, reason: string, at: string): Promise<number>;
  /** Parks the event: kept with `event` (its body as the webhook would carry it) and `reason`, listed for operators. Idempotent. */
  park(eventId: string, event: Record<string, unknown>, reason: string, at: string): Promise<void>;
  /** Parked events, oldest first. */
  parked(
    limit: number,
  ): Promise<Array<{ event_id: string; event: Record<string, unknown>; reason: string; attempts: number; parked_at: string }>>;
  /** An operator settled a parked event by hand: it leaves the parked list. False when it was not parked. */
  discard(eventId: string, reason: string, at: string): Promise<boolean>;
}
