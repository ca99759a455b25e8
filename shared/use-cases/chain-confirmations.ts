import { CHAIN_EVENT_RETRY_AFTER_SECONDS, confirmationsMissing, type ChainDepthReader } from '../domain/chain-confirmations';
import { DomainError } from '../domain/errors';
import { logger } from '../runtime/logger';

/** What the confirmation check needs: the chain, and the watcher's confirmation depth. */
export interface ChainConfirmationDeps {
  chain: ChainDepthReader;
  /** Blocks a log must be buried under (CHAIN_WATCH_CONFIRMATIONS, the watcher's setting). */
  confirmations: number;
}

/**
 * Refuses a chain event whose transaction is not yet at the watcher's confirmation depth: its
 * block (read from the ledger, not the event's `block_number`) must have `confirmations` blocks
 * on top at the ledger's current block. Nothing is read from or written to the table first, so a
 * refused event changes nothing; the sender retries it later.
 * A transaction that is not mined passes through: the event's own check then answers MISMATCH.
 * Errors: 409 CHAIN_EVENT_NOT_CONFIRMED with `Retry-After` and `details` {tx_hash, block_number,
 * head_block, confirmations, missing}; 503 LEDGER_UNAVAILABLE when the ledger cannot be read.
 */
export async function requireConfirmations(deps: ChainConfirmationDeps, txHash: string): Promise<void> {
  if (deps.confirmations <= 0) return;
  let block: bigint | null;
  let head: bigint;
  try {
    [block, head] = await Promise.all([deps.chain.transactionBlock(txHash), deps.chain.headBlock()]);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw new DomainError(
      'LEDGER_UNAVAILABLE',
      `The ledger could not be read to check the chain event's confirmations: ${(err as Error).message}`,
    );
  }
  if (block === null) return;
  const missing = confirmationsMissing(block, head, deps.confirmations);
  if (missing === 0) return;
  logger.info('chain event not yet confirmed: refused for a retry', {
    tx_hash: txHash,
    block_number: Number(block),
    head_block: Number(head),
    confirmations: deps.confirmations,
    missing,
  });
  throw new DomainError(
    'CHAIN_EVENT_NOT_CONFIRMED',
    `The transaction ${txHash} in block ${block} has ${Number(head - block)} of the ${deps.confirmations} confirmations required; send the event again later.`,
    {
      details: [{ tx_hash: txHash, block_number: Number(block), head_block: Number(head), confirmations: deps.confirmations, missing }],
      retryAfterSeconds: CHAIN_EVENT_RETRY_AFTER_SECONDS,
    },
  );
}
