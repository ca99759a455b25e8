/**
 * Confirmation depth of chain events: a log is acted on only once the block it is in has at least
 * `confirmations` blocks on top of it (the scheduled chain watcher's setting,
 * CHAIN_WATCH_CONFIRMATIONS), so a log that a reorganisation may still drop changes nothing. The
 * watcher reads only up to the safe head; the chain-events webhook refuses, retryably, an event
 * that is not that deep yet.
 */

/** The newest block whose logs are deep enough at `head`: head − confirmations. */
export function safeHead(head: bigint, confirmations: number): bigint {
  return head - BigInt(confirmations);
}

/** Blocks still missing before a log in `block` is deep enough at `head` (0 when it is). */
export function confirmationsMissing(block: bigint, head: bigint, confirmations: number): number {
  const missing = block - safeHead(head, confirmations);
  return missing > 0n ? Number(missing) : 0;
}

/** Seconds a chain-event sender is asked to wait (`Retry-After`) before sending a not yet deep enough event again. */
export const CHAIN_EVENT_RETRY_AFTER_SECONDS = 30;

/**
 * Where a transaction is on the chain (no signing key). Errors: LedgerUnavailableError when the
 * ledger cannot be read.
 */
export interface ChainDepthReader {
  /** The block of the mined transaction `txHash`, or null when it is not mined (or unknown). */
  transactionBlock(txHash: string): Promise<bigint | null>;
  /** The chain's current block number. */
  headBlock(): Promise<bigint>;
}
