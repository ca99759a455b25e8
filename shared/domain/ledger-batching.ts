/**
 * Batched ledger writes (docs/ledger.md#the-batched-writer): the single ledger writer gathers the
 * pending writes of a kind — BatchToken mints, trace-log records — into one transaction
 * (`BatchToken.mintBatch`, `TraceLog.recordStages`). The record caps below keep a transaction well
 * inside a block's gas (measured per record on the local chain, docs/ledger.md#gas-per-record):
 * 250 mints ≈ 2.7 M gas at about 10,900 per mint of consecutive token ids (the service's: a year's
 * batches are numbered in order), and 13.7 M even if every record opened a chunk of ids of its own
 * (about 54,600 per mint); 200 stage records ≈ 1.6 M gas; against 30 M gas per block (hardhat's
 * default; Base's blocks are larger).
 */

/** Most mint records in one `mintBatch` transaction. */
const MAX_MINTS_PER_TX = 250;

/** Most stage records in one `recordStages` transaction. */
const MAX_STAGE_RECORDS_PER_TX = 200;

/**
 * Batches whose members of one mined transaction are settled at the same time (each batch's own
 * members in record order): settling a member is a few table writes, about a second each on a
 * loaded machine, so a group of 100 settled one by one held the next group back by minutes.
 */
export const SETTLE_BATCHES_AT_ONCE = 16;

/**
 * The pipelined writer (docs/ledger.md#the-pipelined-writer) settles a group it finds mined right
 * after sending it (a chain that mines on arrival; on a chain with blocks, a send just before one)
 * in the same delivery only up to this many members (one round of `SETTLE_BATCHES_AT_ONCE`); a larger group is
 * settled by its receipt check, so the writes behind it never wait for its settling (185 members
 * settled in the delivery held the next group back 15 s on this 2-core machine under load).
 */
export const SETTLE_IN_DELIVERY_MAX_MEMBERS = 16;

/**
 * The pipelined writer (docs/ledger.md#the-pipelined-writer): a group's transaction is sent and the
 * writer goes on; its receipt is gathered apart. A kept transaction still not mined this many
 * blocks after it was sent (or last replaced) is replaced: the same call with the same nonce and
 * higher fees (on Base, 10 blocks = 20 s).
 */
export const STUCK_AFTER_BLOCKS = 10;

/**
 * A replacement's fees over the transaction it replaces, in percent (nodes refuse a replacement
 * below +10 %; the fees of the chain's next block are taken when they are higher).
 */
export const REPLACEMENT_FEE_BUMP_PERCENT = 25;

/**
 * How long one receipt check of a sent group waits for its receipt (ms) before it queues the next
 * check and lets the writes behind it go: two blocks on Base.
 */
export const RECEIPT_CHECK_WAIT_MS = 4_000;

/**
 * One transaction of a kind per block (docs/ledger.md#the-pipelined-writer): before a new group of
 * a kind is signed (claimed already), the writer waits up to this long (ms) for the receipt of the group of that kind
 * sent last, when that one is unmined and was sent in the latest block or the one before (it is
 * heading for the next block): one Base block of 2 s and a margin for the receipt look-up.
 */
export const NEXT_GROUP_WAIT_MS = 3_000;

/**
 * The gas limit of a batched transaction over the node's estimate made ahead (while the last group
 * of its kind heads for its block), in percent: the chain's state may change between the estimate
 * and the block (a mint then finds its chunk of ids opened, which costs less; a trace-log record
 * costs the same), and an unused limit is not paid for.
 */
export const BATCH_GAS_MARGIN_PERCENT = 20;

/**
 * A member's delivery forms the next group of its kind (everything pending) when the writer has not
 * looked for pending writes of the kind for this long (ms): a quarter of a Base block; at once after
 * it sent a group of the kind (the writes accepted while that one formed are pending). The group formed then is claimed while the last one heads for its block, and
 * signed once that block is in (`NEXT_GROUP_WAIT_MS`); so while the members' messages of a large
 * group are handled, a group leaves every block.
 */
export const FORM_AHEAD_AFTER_MS = 500;

/**
 * Groups a member's delivery forms one after the other while writes are pending (each signed a
 * block after the last): about four blocks of the writer's time (at most `NEXT_GROUP_WAIT_MS` and
 * the group's own work each), well inside the invocation's budget (`LEDGER_MESSAGE_MARGIN_MS`).
 */
export const FORM_AHEAD_ROUNDS = 4;

/**
 * A member's delivery that finds its group still in flight this long (ms) after it was sent queues
 * a receipt check of it (at most one per 5-minute window): its checks may have been lost (a purged
 * queue, a dead-lettered check) and the reconciler queued the member again.
 */
export const STALE_GROUP_CHECK_AFTER_MS = 60_000;

/**
 * What one queued ledger write or receipt check needs besides its receipt wait (ms): its table
 * writes and what follows a mined transaction (a group's members settled, a vault write's use case
 * told). A message is started only when the invocation has its wait and this left
 * (docs/ledger.md#batches-of-queue-messages).
 */
export const LEDGER_MESSAGE_MARGIN_MS = 10_000;

/**
 * The message groups of the single writer's two FIFO queues: the writes (formed into groups and sent
 * in order, one at a time) on the writes queue, and the receipt checks of sent groups (settling
 * mined groups beside the writer) on a queue of their own, so a batch never mixes the two (a batch
 * leaves its queue only when all of it is done: a long check would hold the writes back).
 */
export const LEDGER_QUEUE_MESSAGE_GROUPS = { writes: 'trace-log-writer', receiptChecks: 'ledger-receipt-checks' } as const;

/** The batched kinds of ledger writes. */
export type BatchedWriteKind = 'MINT' | 'TRACE_STAGE';

/** The record cap of a kind's batched transaction. */
export function maxRecordsPerTx(kind: BatchedWriteKind): number {
  return kind === 'MINT' ? MAX_MINTS_PER_TX : MAX_STAGE_RECORDS_PER_TX;
}

/** What became of one record of a mined batched transaction: written, or skipped with the contract's reason. */
export type BatchRecordOutcome = { written: true } | { written: false; reason: string };
