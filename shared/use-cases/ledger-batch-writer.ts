import type { Hex } from 'viem';
import { LedgerRefusedError, LedgerUnavailableError } from '../domain/errors';
import { maxRecordsPerTx, SETTLE_BATCHES_AT_ONCE, type BatchRecordOutcome } from '../domain/ledger-batching';
import { forEachLimited } from '../domain/purchase-order-limits';
import type { BatchedCall, Ledger, LedgerReceipt, LedgerWriteGroups } from '../domain/ports/ledger';
import type { BatchLedgerTx, LedgerWriteGroup } from '../domain/records';
import { logger } from '../runtime/logger';

/**
 * The batched writer (docs/ledger.md#the-batched-writer): the single ledger writer lands a pending
 * mint or trace-log record together with every other pending write of its kind, in one
 * `mintBatch` / `recordStages` transaction (at most `maxRecordsPerTx(kind)` records). One write
 * whose record cannot be built or simulated never holds the others back: it is not claimed, or it
 * is split out of its group before the group is signed (docs/ledger.md#one-bad-record-never-blocks-the-others).
 */

/** What the batched writer needs besides the writer's own ports: the groups, and how one member is settled. */
export interface BatchWriterDeps {
  groups: LedgerWriteGroups;
  ledger: Pick<
    Ledger,
    'mintBatchKept' | 'recordStagesKept' | 'batchOutcomes' | 'batchCallError' | 'simulateBatch' | 'rebroadcast' | 'waitForReceipt'
  >;
  getLedgerTx: (id: string) => Promise<BatchLedgerTx | null>;
  /** A member written on chain: confirmed exactly as a single write is (mint → DELIVERED; record → hash in the history). */
  written: (tx: BatchLedgerTx, txHash: Hex, blockNumber: number) => Promise<void>;
  /** A member the chain refused (skipped, or the whole transaction reverted): settled as refused. */
  refused: (tx: BatchLedgerTx, reason: string) => Promise<void>;
  now: () => Date;
}

/** Groups one delivery of a write may go through before it gives up (the queue retries): its own, then one it was moved to. */
const MAX_GROUPS_PER_DELIVERY = 3;

/**
 * Lands the pending write `tx` (MINT or TRACE_STAGE, never signed alone) in a batched transaction.
 * Unclaimed → its record is checked alone (`batchCallError`: a write that cannot be encoded throws
 * that error here, before anything is claimed, so it goes the way of a single write that cannot be
 * sent: retried by the queue, then parked), and a group is formed: `tx` claimed first, then the
 * other pending writes of its kind whose record encodes, oldest first, each with its own
 * conditioned write; the group sealed with the members claimed. Then the group is signed with the
 * signer's next nonce and kept before it is broadcast (a kept one is re-sent as the same bytes),
 * its receipt awaited, and each member settled from its own event: written → `written`, skipped →
 * `refused` with the contract's reason; a whole transaction reverted → every member `refused`.
 * A group that cannot be signed because of some members (encoding, or the call's simulation
 * reverts) is bisected with `simulateBatch`; the members that fail alone are split out (their
 * claims released) and the rest signed without them. When `tx` itself is split out, its error is
 * thrown after the others landed (a LedgerRefusedError: the writer settles it as refused). A write
 * still claimed by a group that split it out is released and grouped anew. Members settled before
 * are left alone, so redelivery, a crash between keeping and sending, or after sending, neither
 * signs twice nor confirms twice. Throws while the transaction is not mined within `receiptWaitMs`
 * (the queue retries), and for transport failures.
 */
export async function landInGroup(deps: BatchWriterDeps, tx: BatchLedgerTx, receiptWaitMs: number): Promise<void> {
  let current: BatchLedgerTx | null = tx;
  for (let round = 0; round < MAX_GROUPS_PER_DELIVERY; round++) {
    if (!current || !isOpen(current)) return;
    const groupId = await groupFor(deps, current);
    const splitOut = await landGroup(deps, groupId, receiptWaitMs);
    const own = splitOut.get(tx.ledger_tx_id);
    if (own) throw own;
    current = await deps.getLedgerTx(tx.ledger_tx_id);
  }
  if (current && isOpen(current))
    throw new Error(`ledger write ${tx.ledger_tx_id} is still open after ${MAX_GROUPS_PER_DELIVERY} batched transactions`);
}

function isOpen(tx: BatchLedgerTx): boolean {
  return tx.status !== 'CONFIRMED' && tx.status !== 'FAILED';
}

/** The group that lands `tx`: the one that claimed it and still holds it, else a new one (its claim on a group that let it go released first). */
async function groupFor(deps: BatchWriterDeps, tx: BatchLedgerTx): Promise<string> {
  if (tx.group_id) {
    const group = await deps.groups.getGroup(tx.group_id);
    const holds = group && (group.status === 'CLAIMING' ? group.candidates : (group.members ?? [])).includes(tx.ledger_tx_id);
    if (holds) return tx.group_id;
    await deps.groups.release(tx.group_id, tx.ledger_tx_id);
  }
  const problem = await deps.ledger.batchCallError(callOf(tx.kind, [tx]));
  if (problem) throw problem;
  return formGroup(deps, tx);
}

/** A new group for `tx`'s kind with `tx` first among its candidates (the others only when their record encodes); its id. */
async function formGroup(deps: BatchWriterDeps, tx: BatchLedgerTx): Promise<string> {
  const max = maxRecordsPerTx(tx.kind);
  const others: BatchLedgerTx[] = [];
  for (const w of await deps.groups.pendingOfKind(tx.kind, max)) {
    if (w.ledger_tx_id === tx.ledger_tx_id) continue;
    const problem = await deps.ledger.batchCallError(callOf(w.kind, [w]));
    if (!problem) others.push(w);
    else
      logger.warn('pending ledger write left out of a batched transaction: its record cannot be built', {
        ledger_tx_id: w.ledger_tx_id,
        reason: problem.message,
      });
  }
  const at = deps.now();
  const group: LedgerWriteGroup = {
    group_id: `${tx.kind}-${at.getTime()}-${tx.ledger_tx_id}`,
    kind: tx.kind,
    status: 'CLAIMING',
    candidates: [tx.ledger_tx_id, ...others.map((w) => w.ledger_tx_id)].slice(0, max),
    created_at: at.toISOString(),
  };
  await deps.groups.create(group);
  return group.group_id;
}

/**
 * Claims (when still CLAIMING), signs and keeps, sends, waits for and settles one group. The
 * members split out before it was signed, with the error each fails with alone.
 */
async function landGroup(deps: BatchWriterDeps, groupId: string, receiptWaitMs: number): Promise<Map<string, Error>> {
  let group = await deps.groups.getGroup(groupId);
  if (!group) throw new Error(`ledger write group ${groupId} not found`);
  if (group.status === 'SETTLED') return new Map();
  if (group.status === 'CLAIMING') {
    const claimed: string[] = [];
    for (const id of group.candidates) if (await deps.groups.claim(groupId, id)) claimed.push(id);
    await deps.groups.seal(groupId, claimed, deps.now().toISOString());
    group = (await deps.groups.getGroup(groupId))!;
  }
  let members = (await Promise.all((group.members ?? []).map((id) => deps.getLedgerTx(id)))).filter((m): m is BatchLedgerTx => m !== null);
  let splitOut = new Map<string, Error>();
  let txHash = group.tx_hash as Hex | undefined;
  if (group.raw_tx && txHash) {
    await deps.ledger.rebroadcast(group.raw_tx as Hex, txHash);
  } else {
    const signed = await signSplitting(deps, group, members.filter(isOpen));
    splitOut = signed.splitOut;
    members = signed.members;
    txHash = signed.txHash;
    if (!txHash) {
      await deps.groups.settle(groupId, undefined, deps.now().toISOString());
      return splitOut;
    }
  }
  const receipt = await deps.ledger.waitForReceipt(txHash, receiptWaitMs);
  if (!receipt) throw new Error(`batched ${group.kind} transaction ${txHash} of group ${groupId} not mined yet`);
  await settleMembers(deps, group, members, txHash, receipt);
  await deps.groups.settle(groupId, Number(receipt.blockNumber), deps.now().toISOString());
  return splitOut;
}

/**
 * Signs and keeps the group's batched call over `open` (its members not settled yet; the group's
 * member list is brought to them first, so member i stays record i). When signing fails for a
 * reason its members may cause (anything but a transport failure or the keeping itself), the
 * members that fail alone are found by bisection (`simulateBatch` on halves), split out — the
 * group's members set without them (conditioned: still unsigned), then each claim released — and
 * the rest signed again. No transaction when every member was split out.
 */
async function signSplitting(
  deps: BatchWriterDeps,
  group: LedgerWriteGroup,
  open: BatchLedgerTx[],
): Promise<{ txHash?: Hex; members: BatchLedgerTx[]; splitOut: Map<string, Error> }> {
  const splitOut = new Map<string, Error>();
  let members = open;
  if (members.length !== (group.members ?? []).length)
    await deps.groups.setMembers(group.group_id, ids(members), [], deps.now().toISOString());
  while (members.length > 0) {
    let keeping = false;
    const keep = (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => {
      keeping = true;
      return deps.groups.keepSigned(group.group_id, signed, deps.now().toISOString());
    };
    try {
      const { txHash } =
        group.kind === 'MINT'
          ? await deps.ledger.mintBatchKept(mintRecords(members), keep)
          : await deps.ledger.recordStagesKept(stageRecords(members), keep);
      return { txHash, members, splitOut };
    } catch (err) {
      if (keeping || isRpcFailure(err)) throw err;
      const bad = await failingAlone(deps, group.kind, members);
      if (bad.size === 0) throw err;
      members = members.filter((m) => !bad.has(m.ledger_tx_id));
      const out = [...bad].map(([id, e]) => ({ ledger_tx_id: id, reason: e.message }));
      await deps.groups.setMembers(group.group_id, ids(members), out, deps.now().toISOString());
      for (const [id, e] of bad) {
        await deps.groups.release(group.group_id, id);
        splitOut.set(id, e);
        logger.warn('ledger write split out of its batched transaction: its record cannot be built or simulated', {
          group_id: group.group_id,
          ledger_tx_id: id,
          reason: e.message,
        });
      }
    }
  }
  return { members, splitOut };
}

/**
 * The members whose record fails on its own, with that error: bisection with `simulateBatch` (a
 * part that simulates is fine as a whole; one that fails is halved until single members are left).
 * Transport failures are thrown.
 */
async function failingAlone(deps: BatchWriterDeps, kind: 'MINT' | 'TRACE_STAGE', members: BatchLedgerTx[]): Promise<Map<string, Error>> {
  const bad = new Map<string, Error>();
  const walk = async (part: BatchLedgerTx[]): Promise<void> => {
    try {
      await deps.ledger.simulateBatch(callOf(kind, part));
      return;
    } catch (err) {
      if (isRpcFailure(err)) throw err;
      if (part.length === 1) {
        bad.set(part[0]!.ledger_tx_id, err instanceof Error ? err : new Error(String(err)));
        return;
      }
    }
    const mid = Math.ceil(part.length / 2);
    await walk(part.slice(0, mid));
    await walk(part.slice(mid));
  };
  await walk(members);
  return bad;
}

/** The ledger's endpoint failed (unreachable or an RPC error): no member is to blame. A refusal (a revert) is not one. */
function isRpcFailure(err: unknown): boolean {
  return err instanceof LedgerUnavailableError && !(err instanceof LedgerRefusedError);
}

function ids(members: BatchLedgerTx[]): string[] {
  return members.map((m) => m.ledger_tx_id);
}

/** The batched call of `kind` over `writes`, record i = write i. */
function callOf(kind: 'MINT' | 'TRACE_STAGE', writes: BatchLedgerTx[]): BatchedCall {
  return kind === 'MINT' ? { kind, records: mintRecords(writes) } : { kind, records: stageRecords(writes) };
}

function mintRecords(writes: BatchLedgerTx[]): Extract<BatchedCall, { kind: 'MINT' }>['records'] {
  return writes.map((m) => ({ tokenId: toTokenId(m.token_id), batchId: m.batch_id, auditHash: `0x${m.audit_hash}` as Hex }));
}

function stageRecords(writes: BatchLedgerTx[]): Extract<BatchedCall, { kind: 'TRACE_STAGE' }>['records'] {
  return writes.map((m) => ({
    tokenId: toTokenId(m.token_id),
    stage: m.stage,
    evidenceCid: m.evidence_cid!,
    auditHash: `0x${m.audit_hash}` as Hex,
  }));
}

/** A stored token id as a bigint; -1n (refused by the encoder) when it is not an integer. */
function toTokenId(id: string): bigint {
  try {
    return BigInt(id);
  } catch {
    return -1n;
  }
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
