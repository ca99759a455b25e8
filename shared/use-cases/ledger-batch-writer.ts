import type { Hex } from 'viem';
import { maxRecordsPerTx, type BatchRecordOutcome } from '../domain/ledger-batching';
import type { LedgerReceipt, LedgerWriteGroups } from '../domain/ports/ledger';
import type { BatchLedgerTx, LedgerWriteGroup } from '../domain/records';
import { logger } from '../runtime/logger';

/**
 * The batched writer (docs/ledger.md#the-batched-writer): the single ledger writer lands a pending
 * mint or trace-log record together with every other pending write of its kind, in one
 * `mintBatch` / `recordStages` transaction (at most `maxRecordsPerTx(kind)` records).
 */

/** What the batched writer needs besides the writer's own ports: the groups, and how one member is settled. */
export interface BatchWriterDeps {
  groups: LedgerWriteGroups;
  ledger: {
    mintBatchKept: import('../domain/ports/ledger').Ledger['mintBatchKept'];
    recordStagesKept: import('../domain/ports/ledger').Ledger['recordStagesKept'];
    batchOutcomes: import('../domain/ports/ledger').Ledger['batchOutcomes'];
    rebroadcast: import('../domain/ports/ledger').Ledger['rebroadcast'];
    waitForReceipt: import('../domain/ports/ledger').Ledger['waitForReceipt'];
  };
  getLedgerTx: (id: string) => Promise<BatchLedgerTx | null>;
  /** A member written on chain: confirmed exactly as a single write is (mint → DELIVERED; record → hash in the history). */
  written: (tx: BatchLedgerTx, txHash: Hex, blockNumber: number) => Promise<void>;
  /** A member the chain refused (skipped, or the whole transaction reverted): settled as refused. */
  refused: (tx: BatchLedgerTx, reason: string) => Promise<void>;
  now: () => Date;
}

/**
 * Lands the pending write `tx` (MINT or TRACE_STAGE, never signed alone) in a batched transaction.
 * Unclaimed → a group is formed: `tx` claimed first, then the other pending writes of its kind,
 * oldest first, each with its own conditioned write; the group sealed with the members claimed.
 * Then the group is signed with the signer's next nonce and kept before it is broadcast (a kept
 * one is re-sent as the same bytes), its receipt awaited, and each member settled from its own
 * event: written → `written`, skipped → `refused` with the contract's reason; a whole transaction
 * reverted → every member `refused`. Members settled before are left alone, so redelivery, a crash
 * between keeping and sending, or after sending, neither signs twice nor confirms twice.
 * Throws while the transaction is not mined within `receiptWaitMs` (the queue retries).
 */
export async function landInGroup(deps: BatchWriterDeps, tx: BatchLedgerTx, receiptWaitMs: number): Promise<void> {
  const groupId = tx.group_id ?? (await formGroup(deps, tx));
  await landGroup(deps, groupId, receiptWaitMs);
  const after = await deps.getLedgerTx(tx.ledger_tx_id);
  // `tx` was claimed by another group meanwhile (not by this writer, which claims it first): land that one.
  if (after && (after.status === 'PENDING' || after.status === 'SENT') && after.group_id && after.group_id !== groupId)
    await landGroup(deps, after.group_id, receiptWaitMs);
}

/** A new group for `tx`'s kind with `tx` first among its candidates; its id. */
async function formGroup(deps: BatchWriterDeps, tx: BatchLedgerTx): Promise<string> {
  const max = maxRecordsPerTx(tx.kind);
  const others = (await deps.groups.pendingOfKind(tx.kind, max)).filter((id) => id !== tx.ledger_tx_id);
  const at = deps.now();
  const group: LedgerWriteGroup = {
    group_id: `${tx.kind}-${at.getTime()}-${tx.ledger_tx_id}`,
    kind: tx.kind,
    status: 'CLAIMING',
    candidates: [tx.ledger_tx_id, ...others].slice(0, max),
    created_at: at.toISOString(),
  };
  await deps.groups.create(group);
  return group.group_id;
}

/** Claims (when still CLAIMING), signs and keeps, sends, waits for and settles one group. */
async function landGroup(deps: BatchWriterDeps, groupId: string, receiptWaitMs: number): Promise<void> {
  let group = await deps.groups.getGroup(groupId);
  if (!group) throw new Error(`ledger write group ${groupId} not found`);
  if (group.status === 'SETTLED') return;
  if (group.status === 'CLAIMING') {
    const claimed: string[] = [];
    for (const id of group.candidates) if (await deps.groups.claim(groupId, id)) claimed.push(id);
    await deps.groups.seal(groupId, claimed, deps.now().toISOString());
    group = (await deps.groups.getGroup(groupId))!;
  }
  const members = (await Promise.all((group.members ?? []).map((id) => deps.getLedgerTx(id)))).filter(
    (m): m is BatchLedgerTx => m !== null,
  );
  const open = members.filter((m) => m.status !== 'CONFIRMED' && m.status !== 'FAILED');
  if (open.length === 0 && !group.raw_tx) {
    await deps.groups.settle(groupId, undefined, deps.now().toISOString());
    return;
  }
  let txHash = group.tx_hash as Hex | undefined;
  if (group.raw_tx && txHash) {
    await deps.ledger.rebroadcast(group.raw_tx as Hex, txHash);
  } else {
    const keep = (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => deps.groups.keepSigned(groupId, signed, deps.now().toISOString());
    ({ txHash } = await signGroup(deps, group.kind, members, keep));
  }
  const receipt = await deps.ledger.waitForReceipt(txHash, receiptWaitMs);
  if (!receipt) throw new Error(`batched ${group.kind} transaction ${txHash} of group ${groupId} not mined yet`);
  await settleMembers(deps, group, members, txHash, receipt);
  await deps.groups.settle(groupId, Number(receipt.blockNumber), deps.now().toISOString());
}

/** The group's batched call over its members, in member order, signed and kept. */
function signGroup(
  deps: BatchWriterDeps,
  kind: 'MINT' | 'TRACE_STAGE',
  members: BatchLedgerTx[],
  keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
): Promise<{ txHash: Hex }> {
  if (kind === 'MINT')
    return deps.ledger.mintBatchKept(
      members.map((m) => ({ tokenId: BigInt(m.token_id), batchId: m.batch_id, auditHash: `0x${m.audit_hash}` as Hex })),
      keep,
    );
  return deps.ledger.recordStagesKept(
    members.map((m) => ({
      tokenId: BigInt(m.token_id),
      stage: m.stage,
      evidenceCid: m.evidence_cid!,
      auditHash: `0x${m.audit_hash}` as Hex,
    })),
    keep,
  );
}

/** Each member from its own event (member i ↔ record i); members settled before are skipped. */
async function settleMembers(
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
  for (const [i, member] of members.entries()) {
    const fresh = await deps.getLedgerTx(member.ledger_tx_id);
    if (!fresh || fresh.status === 'CONFIRMED' || fresh.status === 'FAILED') continue;
    const outcome = outcomes[i]!;
    if (outcome.written) await deps.written(fresh, txHash, block);
    else await deps.refused(fresh, outcome.reason);
  }
}
