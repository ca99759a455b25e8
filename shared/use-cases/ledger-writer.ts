import { LedgerRefusedError, LedgerTransportError, TokenAlreadyMintedError } from '../domain/errors';
import { vaultCallOf } from '../domain/vault-calls';
import type { Hex } from 'viem';
import type { BatchStore, CustodyStore } from '../domain/ports/batches';
import type { Ledger, LedgerReceipt, LedgerWriteGroups, LedgerWriteMessage, LedgerWriteParking } from '../domain/ports/ledger';
import type { VaultLedger, VaultReader, VaultWriteStore } from '../domain/ports/lending';
import type { WorkQueue } from '../domain/ports/messaging';
import type { PayoutRequestMessage } from '../domain/ports/payouts';
import type { AnchorLedgerTx, Batch, BatchLedgerTx, LedgerTx, LedgerWriteGroup, VaultLedgerTx } from '../domain/records';
import type { AnchorWriteOutcomes } from './anchor-settlement';
import type { VaultWriteOutcomes } from './vault-writes';
import { logger } from '../runtime/logger';
import type { BatchWriterDeps, GroupPace } from './ledger-batch-deps';
import { formAheadEach, landInGroup } from './ledger-batch-writer';
import { checkSentGroup } from './ledger-receipt-step';

/**
 * The single ledger writer (docs/api/batches-and-custody.md#custody-trail): every ledger write — a BatchToken mint or a trace-log
 * record — is committed with its cause, then landed here, one at a time (a FIFO queue with one
 * message group), so the signer's nonces never collide.
 */

/** What the writer needs to land vault writes ahead of the backlog (`landVaultWriteAhead`): where the open ones are listed, and this container's pace. */
export interface VaultAhead {
  writes: Pick<VaultWriteStore, 'openVaultWrites'>;
  /** Per container: when the writer last looked for open vault writes (ms). */
  pace: { lastLookMs?: number };
}

/** The ports the ledger writer needs. */
export interface LedgerWriterDeps {
  custody: Pick<CustodyStore, 'getLedgerTx' | 'keepSigned' | 'confirm' | 'markFailed'>;
  ledger: Ledger;
  batches: Pick<BatchStore, 'getAny' | 'get' | 'confirmMint' | 'markMintFailed'>;
  payoutQueue: WorkQueue<PayoutRequestMessage>;
  now: () => Date;
  /** Vault writes (lending): the vault side of the ledger, its receipts read back, and who to tell. */
  vault?: {
    ledger: VaultLedger;
    reader: Pick<VaultReader, 'writeResult'>;
    outcomes: VaultWriteOutcomes;
    /** Given (pipelined), open vault writes are landed ahead of the queued backlog (`landVaultWriteAhead`, docs/ledger.md#vault-writes-ahead-of-the-backlog). */
    ahead?: VaultAhead;
  };
  /** Periodic anchors of audit logs (docs/api/anchoring.md#anchoring-of-the-audit-log): who settles a mined, already anchored or refused anchor. */
  anchors?: AnchorWriteOutcomes;
  /**
   * Batched transactions (docs/ledger.md#the-batched-writer): given, every pending mint and
   * trace-log record lands with the other pending writes of its kind in one transaction; without
   * it, for a write signed alone before, and while the configured contract has no batched
   * function (`batchedCallsDeployed`), one transaction per write.
   */
  groups?: LedgerWriteGroups;
  /**
   * The writer's own queue, sending into the receipt checks' message group (not the writes'). Given
   * (with `groups`), the batched writer is pipelined (docs/ledger.md#the-pipelined-writer): a group
   * is sent without waiting for its receipt, and a receipt check of it is queued here
   * (`receipt_check` messages, `checkLedgerGroupReceipt`), to run beside the writes.
   */
  receiptCheckQueue?: WorkQueue<LedgerWriteMessage>;
  /** Pipelined: this container's pace of groups (`GroupPace`: members' deliveries form the next group once a block). */
  groupPace?: GroupPace;
}

/**
 * Makes one ledger write land. A write that was signed before is broadcast again as the same
 * signed transaction; otherwise it is signed with the signer's next nonce, kept, then broadcast.
 * Once mined, the write is confirmed: a mint makes its batch DELIVERED (first audit entry, payout
 * request), a trace-log record gets its transaction hash into the batch's stage history; a job
 * waiting on it completes.
 *
 * A deterministic refusal settles the write as refused, wherever it shows: a revert found when the
 * write is simulated or its gas estimated (`LedgerRefusedError`, nothing signed), or a mined
 * transaction with status reverted — the same settlement for both (`settleRefused`: a mint's batch
 * mint FAILED, a trace-log record's job FAILED, a vault write's use case told, an anchor
 * abandoned; the write FAILED with its reason). A mint of a token id that exists although we never
 * signed it is refused the same way. An anchor of a root the chain already holds settles as
 * anchored at the block that holds it. Throws for anything else (transport failures, a transaction
 * not mined within `receiptWaitMs`), so the queue retries it.
 */
export async function writeLedgerTx(deps: LedgerWriterDeps, id: string, receiptWaitMs: number): Promise<void> {
  const tx = await deps.custody.getLedgerTx(id);
  if (!tx) throw new Error(`ledger write ${id} not found`);
  if (tx.status === 'CONFIRMED' || tx.status === 'FAILED') {
    // A member settled already by its group's receipt check: still the writer's turn to form the next group.
    if ((tx.kind === 'MINT' || tx.kind === 'TRACE_STAGE') && tx.group_id && deps.groups && deps.receiptCheckQueue)
      await formAheadEach(batchWriterDeps(deps, deps.groups));
    return;
  }
  try {
    if (tx.kind === 'VAULT') return await writeVaultTx(deps, tx, receiptWaitMs);
    if (tx.kind === 'ANCHOR') return await writeAnchorTx(deps, tx, receiptWaitMs);
    if (deps.groups && !tx.raw_tx && (await deps.ledger.batchedCallsDeployed(tx.kind)))
      return await writeInGroup(deps, deps.groups, tx, receiptWaitMs);
    return await writeBatchTx(deps, tx, receiptWaitMs);
  } catch (err) {
    if (err instanceof TokenAlreadyMintedError && tx.kind === 'MINT') {
      // Never signed by us (nothing was kept), yet the id exists: refuse rather than guess.
      return settleRefused(deps, tx, `token ${tx.token_id} already exists on the ledger`);
    }
    if (!(err instanceof LedgerRefusedError)) throw err;
    if (tx.kind === 'ANCHOR' && err.reason === 'AlreadyAnchored' && (await settleAnchoredRoot(deps, tx))) return;
    return settleRefused(deps, tx, err.message);
  }
}

/** A mint or trace-log record: signed (simulated first), kept, sent, waited for; a mined revert is refused. */
async function writeBatchTx(deps: LedgerWriterDeps, tx: BatchLedgerTx, receiptWaitMs: number): Promise<void> {
  const sign =
    tx.kind === 'MINT'
      ? (keep: Keep) =>
          deps.ledger.mintBatchTokenKept({ tokenId: BigInt(tx.token_id), batchId: tx.batch_id, auditHash: `0x${tx.audit_hash}` }, keep)
      : (keep: Keep) =>
          deps.ledger.recordStageKept(
            { tokenId: BigInt(tx.token_id), stage: tx.stage, evidenceCid: tx.evidence_cid!, auditHash: `0x${tx.audit_hash}` },
            keep,
          );
  const { txHash, receipt } = await landKept(deps, tx, sign, receiptWaitMs, tx.kind === 'MINT' ? 'mint' : 'trace-log');
  if (receipt.status !== 'success') {
    await settleRefused(deps, tx, `${tx.kind === 'MINT' ? 'mint' : 'trace-log'} transaction ${txHash} reverted`);
    return;
  }
  await confirmWritten(deps, tx, txHash, Number(receipt.blockNumber));
}

/** A mint or trace-log record on chain: a mint's batch DELIVERED (`confirmBatchMint`), then the write CONFIRMED. */
async function confirmWritten(deps: LedgerWriterDeps, tx: BatchLedgerTx, txHash: Hex, blockNumber: number): Promise<void> {
  if (tx.kind === 'MINT') {
    const fresh = await deps.custody.getLedgerTx(tx.ledger_tx_id);
    await confirmBatchMint(deps, { batch_id: tx.batch_id, tx_hash: txHash, ...(fresh?.job_id ? { job_id: fresh.job_id } : {}) });
  }
  await deps.custody.confirm(tx, txHash, blockNumber, deps.now().toISOString());
}

/** A mint or trace-log record landed in a batched transaction with the other pending writes of its kind (`landInGroup`). */
function writeInGroup(deps: LedgerWriterDeps, groups: LedgerWriteGroups, tx: BatchLedgerTx, receiptWaitMs: number): Promise<void> {
  return landInGroup(batchWriterDeps(deps, groups), tx, receiptWaitMs);
}

/** The batched writer's ports from the writer's; pipelined when the writer has its queue. */
export function batchWriterDeps(deps: LedgerWriterDeps, groups: LedgerWriteGroups): BatchWriterDeps {
  const queue = deps.receiptCheckQueue;
  return {
    groups,
    ledger: deps.ledger,
    getLedgerTx: async (id) => {
      const found = await deps.custody.getLedgerTx(id);
      return found && (found.kind === 'MINT' || found.kind === 'TRACE_STAGE') ? found : null;
    },
    written: (member, txHash, blockNumber) => confirmWritten(deps, member, txHash, blockNumber),
    refused: (member, reason) => settleRefused(deps, member, reason),
    now: deps.now,
    ...(queue
      ? {
          ...(deps.groupPace ? { pace: deps.groupPace } : {}),
          queueReceiptCheck: (group: LedgerWriteGroup, key: string) =>
            queue.send(
              { ledger_tx_id: group.members?.[0] ?? group.candidates[0]!, receipt_check: group.group_id },
              { deduplicationId: `${group.group_id}-${key}`.slice(0, 128) },
            ),
        }
      : {}),
  };
}

/**
 * A `receipt_check` message of the pipelined writer (docs/ledger.md#the-pipelined-writer): the
 * receipt step over every group in flight, waiting up to `waitMs` for group `groupId`'s receipt
 * (`checkSentGroup`: mined groups settled, lost ones rebroadcast, stuck ones replaced; the next
 * check queued while the group is in flight). Errors: Error without the batched writer's groups;
 * LedgerUnavailableError (the queue retries).
 */
export function checkLedgerGroupReceipt(deps: LedgerWriterDeps, groupId: string, waitMs: number): Promise<void> {
  if (!deps.groups) throw new Error(`receipt check of group ${groupId}: this writer has no batched transactions configured`);
  return checkSentGroup(batchWriterDeps(deps, deps.groups), groupId, waitMs);
}

/**
 * A vault write (lending): signed once and kept like the others, re-sent until mined. Mined and
 * successful → its effect read from the receipt and handed to the use case that asked for it
 * (`outcomes.mined`), then the write is confirmed; reverted → refused (`settleRefused`). Both
 * callbacks are idempotent, so a crash between them and the confirmation is repaired by the
 * queue's retry.
 */
async function writeVaultTx(deps: LedgerWriterDeps, tx: VaultLedgerTx, receiptWaitMs: number): Promise<void> {
  if (!deps.vault) throw new Error(`ledger write ${tx.ledger_tx_id} is a vault write, and this writer has no vault configured`);
  const { ledger } = deps.vault;
  const { txHash, receipt } = await landKept(
    deps,
    tx,
    (keep) => ledger.vaultCallKept(vaultCallOf(tx.vault_call), keep),
    receiptWaitMs,
    'vault',
  );
  await settleVaultReceipt(deps, tx, txHash, receipt);
}

/**
 * A vault write's mined transaction settled: successful → its effect read from the receipt and
 * handed to its use case (`outcomes.mined`), then the write CONFIRMED; reverted → refused
 * (`settleRefused`). Idempotent (both callbacks are). Errors: Error without a vault configured.
 */
export async function settleVaultReceipt(
  deps: LedgerWriterDeps,
  tx: VaultLedgerTx,
  txHash: Hex,
  receipt: Pick<LedgerReceipt, 'status' | 'blockNumber'>,
): Promise<void> {
  if (!deps.vault) throw new Error(`ledger write ${tx.ledger_tx_id} is a vault write, and this writer has no vault configured`);
  if (receipt.status !== 'success') {
    await settleRefused(deps, tx, `vault transaction ${txHash} (${tx.vault_call.kind} ${tx.vault_call.ref}) reverted`);
    return;
  }
  await deps.vault.outcomes.mined(tx, txHash, await deps.vault.reader.writeResult(txHash));
  await deps.custody.confirm(tx, txHash, Number(receipt.blockNumber), deps.now().toISOString());
}

/**
 * A periodic anchor (docs/api/anchoring.md#anchoring-of-the-audit-log): `AuditAnchor.anchor(root, headCount)` signed once and kept,
 * re-sent until mined. Before it is signed, a root the chain already holds settles the anchor with
 * the block that holds it (nothing is sent). Mined → the anchor settled (`anchors.mined`: proofs
 * stored, markers cleared), then the write confirmed; reverted → the chain asked again (another
 * transaction may have anchored the root first), else refused: the anchor abandoned (its markers go
 * into the next one) and the write FAILED. All idempotent, as for vault writes.
 */
async function writeAnchorTx(deps: LedgerWriterDeps, tx: AnchorLedgerTx, receiptWaitMs: number): Promise<void> {
  if (!deps.anchors) throw new Error(`ledger write ${tx.ledger_tx_id} is an audit anchor, and this writer has no anchoring configured`);
  if (!(tx.raw_tx && tx.tx_hash) && (await settleAnchoredRoot(deps, tx))) return;
  const { txHash, receipt } = await landKept(
    deps,
    tx,
    (keep) => deps.ledger.anchorAuditRootKept({ root: tx.root as Hex, headCount: tx.head_count }, keep),
    receiptWaitMs,
    'anchor',
  );
  if (receipt.status !== 'success') {
    if (await settleAnchoredRoot(deps, tx)) return;
    await settleRefused(deps, tx, `anchor transaction ${txHash} (root ${tx.root}) reverted`);
    return;
  }
  await deps.anchors.mined(tx, txHash, Number(receipt.blockNumber));
  await deps.custody.confirm(tx, txHash, Number(receipt.blockNumber), deps.now().toISOString());
}

/** An anchor whose root the chain holds: settled and its write confirmed with that block. False when the chain does not hold it. */
async function settleAnchoredRoot(deps: LedgerWriterDeps, tx: AnchorLedgerTx): Promise<boolean> {
  const onChain = await deps.anchors?.settleIfAnchored(tx);
  if (!onChain) return false;
  await deps.custody.confirm(tx, onChain.tx_hash, onChain.block_number, deps.now().toISOString());
  return true;
}

/**
 * Settles a write the chain refused (or that an operator discarded), for every kind: a mint → the
 * batch's mint FAILED (its job FAILED); a trace-log record → its job FAILED (the stage change stays
 * committed, without a chain transaction); a vault write → the deposit or loan use case told
 * (`outcomes.refused`); an anchor → abandoned (its markers go into the next one). Then the write is
 * FAILED with `reason` (its job too). Idempotent.
 */
async function settleRefused(
  deps: Pick<LedgerWriterDeps, 'custody' | 'batches' | 'now' | 'vault' | 'anchors'>,
  tx: LedgerTx,
  reason: string,
): Promise<void> {
  const at = deps.now().toISOString();
  switch (tx.kind) {
    case 'MINT': {
      const fresh = await deps.custody.getLedgerTx(tx.ledger_tx_id);
      logger.error('BatchToken mint refused by the ledger', { ledger_tx_id: tx.ledger_tx_id, batch_id: tx.batch_id, reason });
      await deps.batches.markMintFailed(tx.batch_id, reason, fresh?.job_id);
      break;
    }
    case 'TRACE_STAGE':
      logger.error('trace-log record refused by the ledger', {
        ledger_tx_id: tx.ledger_tx_id,
        batch_id: tx.batch_id,
        stage: tx.stage,
        reason,
      });
      break;
    case 'VAULT':
      if (!deps.vault) throw new Error(`ledger write ${tx.ledger_tx_id} is a vault write, and this writer has no vault configured`);
      logger.error('vault write refused by the ledger', {
        ledger_tx_id: tx.ledger_tx_id,
        kind: tx.vault_call.kind,
        ref: tx.vault_call.ref,
        reason,
      });
      await deps.vault.outcomes.refused(tx, reason);
      break;
    case 'ANCHOR':
      if (!deps.anchors) throw new Error(`ledger write ${tx.ledger_tx_id} is an audit anchor, and this writer has no anchoring configured`);
      await deps.anchors.refused(tx, reason);
      break;
  }
  await deps.custody.markFailed(tx.ledger_tx_id, reason, at);
}

type Keep = (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>;

/**
 * Lands a kept write: re-sends its signed transaction when it has one, else signs it with `sign`
 * (kept before broadcast); then waits for the receipt. Throws while it is not mined (the queue retries).
 */
async function landKept(
  deps: LedgerWriterDeps,
  tx: LedgerTx,
  sign: (keep: Keep) => Promise<{ txHash: Hex }>,
  receiptWaitMs: number,
  what: string,
): Promise<{ txHash: Hex; receipt: NonNullable<Awaited<ReturnType<LedgerWriterDeps['ledger']['waitForReceipt']>>> }> {
  let txHash = tx.tx_hash as Hex | undefined;
  if (tx.raw_tx && txHash) {
    await deps.ledger.rebroadcast(tx.raw_tx as Hex, txHash);
  } else {
    ({ txHash } = await sign((signed) => deps.custody.keepSigned(tx.ledger_tx_id, signed, deps.now().toISOString())));
  }
  const receipt = await deps.ledger.waitForReceipt(txHash, receiptWaitMs);
  if (!receipt) throw new Error(`${what} transaction ${txHash} of ${tx.ledger_tx_id} not mined yet`);
  return { txHash, receipt };
}

/**
 * Records a mined BatchToken: batch DELIVERED, first audit entry, job COMPLETE — one transaction,
 * idempotent — then requests the batch's NET_COFFEE_PAYMENT payout through the payout-request
 * queue (a lost request is found by reconciliation: the batch stays in the awaiting-payout index).
 * Errors: Error when the batch does not exist or is not confirmed afterwards.
 */
async function confirmBatchMint(
  deps: Pick<LedgerWriterDeps, 'batches' | 'payoutQueue' | 'now'>,
  msg: { batch_id: string; tx_hash: string; job_id?: string },
): Promise<Batch> {
  const pending = await deps.batches.getAny(msg.batch_id);
  if (!pending) throw new Error(`batch ${msg.batch_id} not found`);
  if (pending.mint_status === 'PENDING') {
    const entry = pending.pending_audit_entry;
    if (!entry) throw new Error(`batch ${msg.batch_id} has no pending audit entry`);
    const at = deps.now().toISOString();
    const applied = await deps.batches.confirmMint({
      batchId: msg.batch_id,
      txHash: msg.tx_hash,
      entry,
      history: {
        stage: 'DELIVERED',
        at: entry.at,
        actor: entry.actor,
        chain_tx_hash: msg.tx_hash,
        audit_log_sequence_number: String(entry.sequence_number),
        evidence_ipfs_cid: null,
      },
      ...(msg.job_id ? { jobId: msg.job_id } : {}),
      at,
    });
    if (applied) {
      try {
        await deps.payoutQueue.send({ batch_id: msg.batch_id });
      } catch (err) {
        logger.error('payout request could not be queued; the batch stays INITIATED for reconciliation', {
          batch_id: msg.batch_id,
          error: err as Error,
        });
      }
    }
  }
  const batch = await deps.batches.get(msg.batch_id);
  if (!batch) throw new Error(`batch ${msg.batch_id} is not confirmed (mint ${pending.mint_status})`);
  return batch;
}

/** The FIFO queue's deduplication window (SQS: 5 minutes): a write is queued again by the reconciler at most once per window. */
const REQUEUE_DEDUP_WINDOW_MS = 300_000;

/**
 * Reconciliation of the ledger writes (the scheduled ledger-write-reconciler): writes still open
 * after `staleAfterSeconds` are queued again for the single writer (a lost queue message, or one
 * that went to the DLQ while the ledger was down); parked ones are not (they left the open index).
 * The message's deduplication id names the write and the 5-minute window, so a backlog behind a
 * slow write is not multiplied by every run while it waits (the FIFO queue drops the repeats).
 * Returns how many were queued.
 */
export async function requeueStaleLedgerWrites(
  deps: { custody: Pick<CustodyStore, 'openLedgerTxsBefore'>; ledgerQueue: WorkQueue<LedgerWriteMessage>; now: () => Date },
  staleAfterSeconds: number,
): Promise<number> {
  const cutoff = new Date(deps.now().getTime() - staleAfterSeconds * 1000).toISOString();
  const stale = await deps.custody.openLedgerTxsBefore(cutoff, 100);
  const window = Math.floor(deps.now().getTime() / REQUEUE_DEDUP_WINDOW_MS);
  for (const tx of stale)
    await deps.ledgerQueue.send({ ledger_tx_id: tx.ledger_tx_id }, { deduplicationId: `${tx.ledger_tx_id}-${window}` });
  return stale.length;
}

/** The log key (`alarm`) of a parked ledger write: a metric filter and an alarm watch it (infra/stack/observability.ts). */
export const LEDGER_WRITE_PARKED_ALARM = 'LEDGER_WRITE_PARKED';

/** Failed attempts of one ledger write before it is parked, unless LEDGER_WRITE_MAX_ATTEMPTS says otherwise. */
export const DEFAULT_LEDGER_WRITE_MAX_ATTEMPTS = 8;

/** What landing one queued write did. */
export type LandOutcome = 'LANDED' | 'PARKED';

/**
 * The single ledger writer's poison-message policy around `writeLedgerTx`: a write that throws is
 * retried by the queue, and each failed attempt is counted on the write — except transport
 * failures of the ledger's endpoint (`LedgerTransportError`: the ledger is down for every write, so
 * parking would only reshuffle them). When the count reaches `maxAttempts` the write is parked:
 * FAILED with its last error, out of the open index (the reconciler does not send it again), in
 * the parked index for operators (`retryParkedWrite`, `discardParkedWrite`), an error logged with
 * `alarm: LEDGER_WRITE_PARKED` and the LedgerWritesParked metric counted — and the message is
 * consumed, so the writes queued behind it (one FIFO message group) proceed. The cause of a parked
 * write (batch mint, job, deposit, loan) stays pending until the operator decides; a parked anchor
 * is abandoned by the next anchorer run (its markers go into the next anchor).
 * `maxAttempts` must stay below the queue's maxReceiveCount, so parking comes before the dead-letter
 * queue. Errors: what `writeLedgerTx` throws while the write is below its attempts.
 */
export async function landOrPark(
  deps: LedgerWriterDeps & { parking: Pick<LedgerWriteParking, 'recordFailedAttempt' | 'park'>; parkedMetric?: () => void },
  id: string,
  opts: { receiptWaitMs: number; maxAttempts: number },
): Promise<LandOutcome> {
  try {
    await writeLedgerTx(deps, id, opts.receiptWaitMs);
    return 'LANDED';
  } catch (err) {
    if (err instanceof LedgerTransportError) throw err;
    const reason = (err as Error)?.message ?? String(err);
    const at = deps.now().toISOString();
    const attempts = await deps.parking.recordFailedAttempt(id, reason, at);
    if (attempts < opts.maxAttempts) throw err;
    if (!(await deps.parking.park(id, `parked after ${attempts} failed attempts: ${reason}`, at))) return 'LANDED';
    deps.parkedMetric?.();
    logger.error('ledger write parked: it failed every allowed attempt; the writes behind it proceed (npm run ledger-parked -- list)', {
      alarm: LEDGER_WRITE_PARKED_ALARM,
      ledger_tx_id: id,
      attempts,
      reason,
    });
    return 'PARKED';
  }
}

/**
 * An operator retries a parked write (`npm run ledger-parked -- retry <id>`): it is open again
 * (SENT with its kept signed transaction, which is re-sent as is, or PENDING), its attempts reset,
 * and it is queued for the single writer. Errors: Error when it is not parked, or is an anchor
 * (anchors are not retried: the next anchorer run covers their entries; discard it instead).
 */
export async function retryParkedWrite(
  deps: {
    custody: Pick<CustodyStore, 'getLedgerTx'>;
    parking: Pick<LedgerWriteParking, 'unpark'>;
    ledgerQueue: WorkQueue<LedgerWriteMessage>;
    now: () => Date;
  },
  id: string,
): Promise<LedgerTx> {
  const tx = await deps.custody.getLedgerTx(id);
  if (!tx?.parked_at) throw new Error(`ledger write ${id} is not parked`);
  if (tx.kind === 'ANCHOR')
    throw new Error(
      `ledger write ${id} is an audit anchor: anchors are not retried (the next anchorer run covers its entries); discard it`,
    );
  const open = await deps.parking.unpark(id, deps.now().toISOString());
  if (!open) throw new Error(`ledger write ${id} is not parked`);
  await deps.ledgerQueue.send({ ledger_tx_id: id }, { deduplicationId: `${id}-retry-${deps.now().getTime()}` });
  logger.info('parked ledger write retried by an operator', { ledger_tx_id: id });
  return open;
}

/**
 * An operator discards a parked write (`npm run ledger-parked -- discard <id> [reason]`): its cause
 * is settled as refused exactly like a chain refusal (`settleRefused`: a mint's batch mint FAILED,
 * a stage record's job FAILED, a deposit or loan told, an anchor abandoned), then it leaves the
 * parked index. Errors: Error when it is not parked.
 */
export async function discardParkedWrite(
  deps: Pick<LedgerWriterDeps, 'custody' | 'batches' | 'now' | 'vault' | 'anchors'> & { parking: Pick<LedgerWriteParking, 'discard'> },
  id: string,
  reason: string,
): Promise<void> {
  const tx = await deps.custody.getLedgerTx(id);
  if (!tx?.parked_at) throw new Error(`ledger write ${id} is not parked`);
  const why = `discarded by an operator: ${reason}`;
  await settleRefused(deps, tx, why);
  await deps.parking.discard(id, why, deps.now().toISOString());
  logger.warn('parked ledger write discarded by an operator', { ledger_tx_id: id, reason });
}

/**
 * Age of the oldest ledger write still open (not confirmed, failed nor parked), in seconds, 0 when
 * none: the stuck-writer signal that the reconciler reports as LedgerOldestPendingAge.
 */
export async function oldestPendingLedgerWriteAgeSeconds(deps: {
  parking: Pick<LedgerWriteParking, 'oldestOpen'>;
  now: () => Date;
}): Promise<number> {
  const oldest = await deps.parking.oldestOpen();
  if (!oldest) return 0;
  return Math.max(0, Math.round((deps.now().getTime() - Date.parse(oldest.created_at)) / 1000));
}
