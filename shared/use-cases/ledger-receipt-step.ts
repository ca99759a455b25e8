import type { Hex } from 'viem';
import { SETTLE_BATCHES_AT_ONCE, STUCK_AFTER_BLOCKS, type BatchRecordOutcome } from '../domain/ledger-batching';
import { forEachLimited } from '../domain/purchase-order-limits';
import type { LedgerReceipt } from '../domain/ports/ledger';
import type { BatchLedgerTx, LedgerWriteGroup } from '../domain/records';
import { logger } from '../runtime/logger';
import type { BatchWriterDeps } from './ledger-batch-deps';

/**
 * The pipelined writer's receipt step (docs/ledger.md#recovery-of-a-sent-transaction): the groups
 * in flight settled from their mined transactions, beside the writer (receipt checks), and the
 * members of a group settled from its own events.
 */

/** Whether the write is still to be settled (neither CONFIRMED nor FAILED). */
export function isOpen(tx: BatchLedgerTx): boolean {
  return tx.status !== 'CONFIRMED' && tx.status !== 'FAILED';
}

/** The group's members as stored now (a member gone from the table is left out). */
export async function readMembers(deps: BatchWriterDeps, group: LedgerWriteGroup): Promise<BatchLedgerTx[]> {
  return (await Promise.all((group.members ?? []).map((id) => deps.getLedgerTx(id)))).filter((m): m is BatchLedgerTx => m !== null);
}

/** Each member from its own event (member i ↔ record i); members settled before are skipped. */
export async function settleMembers(
  deps: BatchWriterDeps,
  group: LedgerWriteGroup,
  members: BatchLedgerTx[],
  txHash: Hex,
  receipt: LedgerReceipt,
): Promise<void> {
  const block = Number(receipt.blockNumber);
  let outcomes: BatchRecordOutcome[];
  if (receipt.status !== 'success') {
    logger.error('batched ledger transaction reverted as a whole: every member refused', { group_id: group.group_id, tx_hash: txHash });
    outcomes = members.map(() => ({ written: false, reason: `batched ${group.kind} transaction ${txHash} reverted` }));
  } else {
    outcomes = await deps.ledger.batchOutcomes(txHash, group.kind, members.length);
  }
  // Members of different batches are independent; one batch's members keep their record order.
  const byBatch = new Map<string, number[]>();
  for (const [i, member] of members.entries()) byBatch.set(member.batch_id, [...(byBatch.get(member.batch_id) ?? []), i]);
  await forEachLimited([...byBatch.values()], SETTLE_BATCHES_AT_ONCE, async (indexes) => {
    for (const i of indexes) {
      const fresh = await deps.getLedgerTx(members[i]!.ledger_tx_id);
      if (!fresh || !isOpen(fresh)) continue;
      const outcome = outcomes[i]!;
      if (outcome.written) await deps.written(fresh, txHash, block);
      else await deps.refused(fresh, outcome.reason);
    }
  });
}

/** The log key (`alarm`) of a nonce gap the writer cannot close itself (docs/ledger.md#a-nonce-gap). */
const LEDGER_NONCE_GAP_ALARM = 'LEDGER_NONCE_GAP';

/**
 * A receipt check of the sent group `groupId` (a `receipt_check` message of the writer's queue):
 * the receipt step (`gatherReceipts`) waiting up to `waitMs` for this group's receipt; when it is
 * still in flight, the next check is queued. Errors: LedgerUnavailableError (the queue retries).
 */
export async function checkSentGroup(deps: BatchWriterDeps, groupId: string, waitMs: number): Promise<void> {
  const left = await gatherReceipts(deps, waitMs, groupId);
  const group = left.find((g) => g.group_id === groupId);
  if (group && deps.queueReceiptCheck) await deps.queueReceiptCheck(group, `check-${deps.now().getTime()}`);
}

/**
 * The receipt step of the pipelined writer (docs/ledger.md#recovery-of-a-sent-transaction): every
 * group in flight, lowest nonce first, in any order of mining —
 * 1. mined under its hash or one it replaced → each member settled from that transaction's own
 *    events (members settled before are left alone), the group SETTLED;
 * 2. its nonce used by another transaction (the chain's mined count, read before the receipts are
 *    looked up, is past it, and no hash of it is mined) → abandoned: its open members released to be grouped anew (the reconciler queues them);
 * 3. lost (the node knows neither it nor a receipt) → broadcast again, the same bytes;
 * 4. stuck (`STUCK_AFTER_BLOCKS` blocks since it was sent) → replaced: same call and nonce, higher
 *    fees, kept before it is sent, the old hash remembered;
 * then a nonce gap below the groups still in flight is reported (`LEDGER_NONCE_GAP`). Waits up to
 * `waitMs` for the receipt of `focus` only. The groups still in flight.
 */
async function gatherReceipts(deps: BatchWriterDeps, waitMs: number, focus?: string): Promise<LedgerWriteGroup[]> {
  const inFlight = await deps.groups.inFlight();
  if (inFlight.length === 0) return [];
  const left: LedgerWriteGroup[] = [];
  // The signer's counts read BEFORE any receipt is looked up: a nonce mined by then is one whose
  // receipt the look-ups below find when it is one of the group's hashes. Read after, a group mined
  // between its look-up and this read would look taken by another transaction and be abandoned,
  // its members grouped anew and refused by the contract as minted already.
  const chain = await deps.ledger.signerNonces();
  let block: number | undefined;
  for (const group of inFlight) {
    const mined = await minedTx(deps, group, group.group_id === focus ? waitMs : 0);
    if (mined) {
      await settleMined(deps, group, mined);
      continue;
    }
    if (group.nonce !== undefined && chain.mined > group.nonce) {
      await abandon(deps, group);
      continue;
    }
    block ??= await deps.ledger.blockNumber();
    await unstick(deps, group, block);
    left.push(group);
  }
  if (left.length > 0) reportNonceGap(left, chain);
  return left;
}

/** The group's members settled from the mined transaction's own events (members settled before left alone), the group SETTLED with its block. */
export async function settleMined(
  deps: BatchWriterDeps,
  group: LedgerWriteGroup,
  mined: { txHash: Hex; receipt: LedgerReceipt },
): Promise<void> {
  await settleMembers(deps, group, await readMembers(deps, group), mined.txHash, mined.receipt);
  await deps.groups.settle(group.group_id, Number(mined.receipt.blockNumber), deps.now().toISOString());
}

/** The mined transaction of `group` (its current hash, else one it replaced) with its receipt; waits up to `waitMs` for the current one. */
export async function minedTx(
  deps: BatchWriterDeps,
  group: LedgerWriteGroup,
  waitMs: number,
): Promise<{ txHash: Hex; receipt: LedgerReceipt } | null> {
  const hashes = [group.tx_hash, ...(group.replaced_hashes ?? [])].filter((h): h is string => Boolean(h)) as Hex[];
  for (const txHash of hashes) {
    const receipt = await deps.ledger.waitForReceipt(txHash, 0);
    if (receipt) return { txHash, receipt };
  }
  if (waitMs <= 0 || !group.tx_hash) return null;
  const receipt = await deps.ledger.waitForReceipt(group.tx_hash as Hex, waitMs);
  return receipt ? { txHash: group.tx_hash as Hex, receipt } : null;
}

/** A lost transaction broadcast again; a stuck one replaced with higher fees (kept first, conditioned on its hash). */
async function unstick(deps: BatchWriterDeps, group: LedgerWriteGroup, block: number): Promise<void> {
  const txHash = group.tx_hash as Hex;
  if (!(await deps.ledger.isKnown(txHash))) {
    logger.warn('kept ledger transaction lost (neither mined nor known to the node): broadcast again', {
      group_id: group.group_id,
      tx_hash: txHash,
      nonce: group.nonce,
    });
    await deps.ledger.rebroadcast(group.raw_tx as Hex, txHash);
    return;
  }
  if (group.sent_block === undefined || block - group.sent_block < STUCK_AFTER_BLOCKS) return;
  const { txHash: replacement } = await deps.ledger.replaceKept(group.raw_tx as Hex, (signed) =>
    deps.groups.keepReplacement(group.group_id, txHash, signed, block, deps.now().toISOString()),
  );
  logger.warn('ledger transaction stuck: replaced with the same nonce and higher fees', {
    group_id: group.group_id,
    nonce: group.nonce,
    stuck_hash: txHash,
    replacement,
    blocks: block - group.sent_block,
  });
}

/** A group whose nonce another transaction took: its open members released (grouped anew), the group SETTLED without a block. */
async function abandon(deps: BatchWriterDeps, group: LedgerWriteGroup): Promise<void> {
  logger.error('ledger group abandoned: its nonce was used by another transaction; its writes are grouped anew', {
    group_id: group.group_id,
    nonce: group.nonce,
  });
  for (const id of group.members ?? []) {
    const member = await deps.getLedgerTx(id);
    if (member && isOpen(member)) await deps.groups.release(group.group_id, member);
  }
  await deps.groups.settle(group.group_id, undefined, deps.now().toISOString());
}

/**
 * Nonces below the highest group in flight that neither the node holds (at or past its pending
 * count) nor a group in flight covers: every group above waits on them (docs/ledger.md#a-nonce-gap).
 */
function reportNonceGap(left: LedgerWriteGroup[], chain: { mined: number; pending: number }): void {
  const kept = new Set(left.map((g) => g.nonce));
  const highest = Math.max(...left.map((g) => g.nonce ?? -1));
  const gap: number[] = [];
  for (let n = Math.max(chain.pending, chain.mined); n < highest && gap.length < 10; n++) if (!kept.has(n)) gap.push(n);
  if (gap.length > 0)
    logger.error('nonce gap: sent ledger transactions wait on nonces no kept transaction covers', {
      alarm: LEDGER_NONCE_GAP_ALARM,
      missing_nonces: gap,
      chain_mined: chain.mined,
      chain_pending: chain.pending,
    });
}
