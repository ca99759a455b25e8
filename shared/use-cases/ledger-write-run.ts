import { LEDGER_MESSAGE_MARGIN_MS, NEXT_GROUP_WAIT_MS } from '../domain/ledger-batching';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import type { BatchLedgerTx, LedgerTx, LedgerWriteGroup } from '../domain/records';
import { logger } from '../runtime/logger';
import { endIfHeldBySentGroup, formAheadEach } from './ledger-batch-writer';
import { batchWriterDeps, checkLedgerGroupReceipt, landOrPark } from './ledger-writer';
import { landVaultWriteAhead } from './vault-write-ahead';

/**
 * The single ledger writer over a batch of its queue's messages (docs/ledger.md#batches-of-queue-messages):
 * the messages of one FIFO message group, in queue order, each handled as its own delivery would
 * be, with two additions — the writes' member messages amortised (read in batch, no read each) and
 * a time budget (a message is not started when the invocation could not finish it).
 */

/** The ports of `landQueuedMessages`: the writer's with its parking (as `landOrPark` takes them). */
export type QueuedMessagesDeps = Parameters<typeof landOrPark>[0];

/** Options of `landQueuedMessages` (all ms, but `maxAttempts`). */
interface QueuedMessagesOptions {
  /** How long a vault write, an anchor, or a write landed alone waits for its receipt. */
  receiptWaitMs: number;
  /** How long a receipt check waits for its group's receipt. */
  receiptCheckWaitMs: number;
  /** Failed attempts before a write is parked (`landOrPark`). */
  maxAttempts: number;
  /** The invocation's time left. */
  remainingMs: () => number;
}

/**
 * What became of the messages: the first `handled` are done; the next one failed (`failure`, what
 * it threw; counted as a failed attempt by `landOrPark` where the policy counts it) or was not
 * started for lack of time (`deferred`, why; nothing read or counted). Either way it and the later
 * messages are to be returned to the queue, in order.
 */
interface QueuedMessagesOutcome {
  handled: number;
  failure?: { error: unknown };
  deferred?: string;
}

/** A write read ahead with the group it names. */
type Ahead = { tx: LedgerTx | null; group: LedgerWriteGroup | null };

/**
 * Lands the messages of one message group of the single writer's queue in order; the first one
 * that fails stops them (see `QueuedMessagesOutcome`).
 * - A receipt check → `checkLedgerGroupReceipt`, waiting up to `receiptCheckWaitMs`.
 * - A write → `landOrPark` (the poison-message policy around `writeLedgerTx`), except that before
 *   it, the writes of it and of every later write message up to the next receipt check are read in
 *   one go with their groups (`writesWithGroups`, two batch reads), and each write at the head of
 *   them that is settled already (CONFIRMED or FAILED) or held by a SENT or SETTLED group (the
 *   pipelined writer) ends with no further read, as its own delivery would end it: the group's
 *   receipt check queued again for its first member or when stale (`endIfHeldBySentGroup`), then
 *   the next group of each batched kind formed once when one is due (`formAheadEach`). The read is
 *   made again after any message that did work (it may have formed a group that claimed the next
 *   writes). When ending one cheaply fails, it is landed the ordinary way. Pipelined, each read is
 *   also followed by a look for the oldest open vault write (`landVaultWriteAhead`: paced, sent
 *   without waiting, never signed twice), so a backlog of member messages never holds it back.
 * - Time budget: a message that may wait is not started, unless it is the first of this call, when
 *   `remainingMs()` is below its wait (`receiptWaitMs` for a vault write, an anchor or a write landed
 *   alone; `NEXT_GROUP_WAIT_MS` for a pipelined batched write; `receiptCheckWaitMs` for a receipt
 *   check) plus LEDGER_MESSAGE_MARGIN_MS: it is deferred untouched (no attempt counted), so the
 *   queue hands it out again first. The first message is always started, so every call makes
 *   progress and a deferral never repeats for the same message.
 * Errors: none thrown (a failure is returned); a failed read ahead fails the message it was for.
 */
export async function landQueuedMessages(
  deps: QueuedMessagesDeps,
  msgs: readonly LedgerWriteMessage[],
  opts: QueuedMessagesOptions,
): Promise<QueuedMessagesOutcome> {
  const pipelined = Boolean(deps.groups && deps.receiptCheckQueue);
  let ahead: Ahead[] | undefined; // ahead[k] is msgs[from + k]
  let from = 0;
  for (let i = 0; i < msgs.length; i++) {
    const msg = msgs[i]!;
    if (msg.receipt_check) {
      const need = opts.receiptCheckWaitMs + LEDGER_MESSAGE_MARGIN_MS;
      if (i > 0 && opts.remainingMs() < need) return deferred(i, need, opts);
      try {
        await checkLedgerGroupReceipt(deps, msg.receipt_check, opts.receiptCheckWaitMs);
      } catch (err) {
        return { handled: i, failure: { error: err } };
      }
      ahead = undefined;
      continue;
    }
    if (deps.groups && !ahead) {
      const end = nextReceiptCheck(msgs, i);
      try {
        ahead = await deps.groups.writesWithGroups(msgs.slice(i, end).map((m) => m.ledger_tx_id));
      } catch (err) {
        return { handled: i, failure: { error: err } };
      }
      from = i;
      // The head of writes that end with no further read, then the next group of each kind formed once.
      const members = new Set<BatchLedgerTx['kind']>();
      while (i < end && (await endsCheaply(deps, ahead[i - from]!, msgs[i]!.ledger_tx_id, pipelined, members))) i++;
      const formed = members.size > 0 && (await formAheadEach(batchWriterDeps(deps, deps.groups), opts.remainingMs));
      // Then the oldest open vault write, ahead of its own message (paced; nothing waited for).
      if (pipelined)
        await landVaultWriteAhead(deps, { remainingMs: opts.remainingMs, reserveMs: opts.receiptWaitMs + LEDGER_MESSAGE_MARGIN_MS });
      if (formed || i === end) {
        // Formed ahead: the writes from i on are read again (the new group may hold them). At the
        // end of the writes: the loop moves on to the receipt check (or the end).
        ahead = undefined;
        i--;
        continue;
      }
    }
    const tx = ahead?.[i - from]?.tx;
    const need = waitOf(tx, pipelined, opts) + LEDGER_MESSAGE_MARGIN_MS;
    if (i > 0 && opts.remainingMs() < need) return deferred(i, need, opts);
    try {
      await landOrPark(deps, msgs[i]!.ledger_tx_id, { receiptWaitMs: opts.receiptWaitMs, maxAttempts: opts.maxAttempts });
    } catch (err) {
      return { handled: i, failure: { error: err } };
    }
    ahead = undefined;
  }
  return { handled: msgs.length };
}

/** The index of the first receipt check at or after `i`, or the messages' length. */
function nextReceiptCheck(msgs: readonly LedgerWriteMessage[], i: number): number {
  const k = msgs.slice(i).findIndex((m) => m.receipt_check);
  return k < 0 ? msgs.length : i + k;
}

/**
 * Whether the write read ahead ends here with no further read: settled already, or (pipelined) held
 * by a SENT or SETTLED group, whose receipt check is queued again as its own delivery would. Its
 * kind is added to `kinds` when its delivery would form the next groups (`formAheadEach`). False when it
 * is to be landed the ordinary way (also when ending it failed: logged).
 */
async function endsCheaply(
  deps: QueuedMessagesDeps,
  ahead: Ahead,
  id: string,
  pipelined: boolean,
  kinds: Set<BatchLedgerTx['kind']>,
): Promise<boolean> {
  const tx = ahead.tx;
  if (!tx || tx.ledger_tx_id !== id) return false;
  const batched = tx.kind === 'MINT' || tx.kind === 'TRACE_STAGE';
  if (tx.status === 'CONFIRMED' || tx.status === 'FAILED') {
    if (batched && tx.group_id && pipelined) kinds.add(tx.kind);
    return true;
  }
  if (!batched || !pipelined || !tx.group_id || !deps.groups) return false;
  try {
    const queue = batchWriterDeps(deps, deps.groups).queueReceiptCheck!;
    if (!(await endIfHeldBySentGroup(deps, tx, ahead.group, queue))) return false;
  } catch (err) {
    logger.warn('a write held by a sent group could not be ended from the batch read; landed the ordinary way', {
      ledger_tx_id: id,
      error: err as Error,
    });
    return false;
  }
  kinds.add(tx.kind);
  return true;
}

/** How long landing `tx` may wait for a receipt (ms); unknown (not read): the longest. */
function waitOf(tx: LedgerTx | null | undefined, pipelined: boolean, opts: QueuedMessagesOptions): number {
  if (tx && (tx.kind === 'MINT' || tx.kind === 'TRACE_STAGE') && pipelined && !tx.raw_tx) return NEXT_GROUP_WAIT_MS;
  return opts.receiptWaitMs;
}

function deferred(i: number, needMs: number, opts: QueuedMessagesOptions): QueuedMessagesOutcome {
  return { handled: i, deferred: `${opts.remainingMs()} ms left in the invocation, ${needMs} ms needed` };
}
