import type { Hex } from 'viem';
import { LedgerRefusedError, LedgerUnavailableError } from '../domain/errors';
import {
  BATCH_GAS_MARGIN_PERCENT,
  FORM_AHEAD_AFTER_MS,
  FORM_AHEAD_ROUNDS,
  LEDGER_MESSAGE_MARGIN_MS,
  maxRecordsPerTx,
  NEXT_GROUP_WAIT_MS,
  SETTLE_IN_DELIVERY_MAX_MEMBERS,
  STALE_GROUP_CHECK_AFTER_MS,
} from '../domain/ledger-batching';
import type { BatchedCall } from '../domain/ports/ledger';
import type { BatchLedgerTx, LedgerWriteGroup } from '../domain/records';
import { logger } from '../runtime/logger';
import type { BatchWriterDeps } from './ledger-batch-deps';
import { isOpen, minedTx, readMembers, settleMembers, settleMined } from './ledger-receipt-step';

/**
 * The batched writer (docs/ledger.md#the-batched-writer): the single ledger writer lands a pending
 * mint or trace-log record together with every other pending write of its kind, in one
 * `mintBatch` / `recordStages` transaction (at most `maxRecordsPerTx(kind)` records). One write
 * whose record cannot be built or simulated never holds the others back: it is not claimed, or it
 * is split out of its group before the group is signed (docs/ledger.md#one-bad-record-never-blocks-the-others).
 */

/** Groups one delivery of a write may go through before it gives up (the queue retries): its own, then one it was moved to. */
const MAX_GROUPS_PER_DELIVERY = 3;

/**
 * Lands the pending write `tx` (MINT or TRACE_STAGE, never signed alone) in a batched transaction.
 * Unclaimed → its record is checked alone (`batchCallError`: a write that cannot be encoded throws
 * that error here, before anything is claimed, so it goes the way of a single write that cannot be
 * sent: retried by the queue, then parked), and a group is formed: `tx` claimed first, then the
 * other pending writes of its kind whose record encodes, oldest first, each with its own
 * conditioned write (`claimAll`; member i stays candidate order); its members are the ones
 * claimed. Then the group is signed with the signer's next nonce and kept with its members before
 * it is broadcast (a kept one is re-sent as the same bytes), its receipt awaited, and each member
 * settled from its own event: written → `written`, skipped → `refused` with the contract's reason;
 * a whole transaction reverted → every member `refused`. A group that cannot be signed because of
 * some members (encoding, or the call's simulation reverts) is bisected with `simulateBatch`; the
 * members that fail alone are split out (their claims released) and the rest signed without them.
 * When `tx` itself is split out, its error is thrown after the others landed (a
 * LedgerRefusedError: the writer settles it as refused). A write still claimed by a group that
 * split it out is released and grouped anew. Members settled before are left alone, so
 * redelivery, a crash between keeping and sending, or after sending, neither signs twice nor
 * confirms twice. Throws while the transaction is not mined within `receiptWaitMs` (the queue
 * retries), and for transport failures.
 *
 * Pipelined (`queueReceiptCheck` given; docs/ledger.md#the-pipelined-writer): a write whose group
 * holds it and is SENT or SETTLED ends at once (one read of the group; the receipt check settles
 * it), forming the next group of its kind first when one is due (`formAhead`). A new group of a
 * kind takes everything pending and claims it at once; before it is signed it waits up to
 * `NEXT_GROUP_WAIT_MS` for the receipt of the last group of that kind while that one is heading for
 * the next block (one transaction of a kind per block, the wait overlapping the claims); it is
 * signed with the next nonce (`nextNonce`) and sent, its
 * receipt looked up once (a chain that mines on arrival has it: the group is settled in this
 * delivery) and otherwise its receipt check queued; mined groups are settled by receipt checks only.
 */
export async function landInGroup(deps: BatchWriterDeps, tx: BatchLedgerTx, receiptWaitMs: number): Promise<void> {
  const queue = deps.queueReceiptCheck;
  if (queue && tx.group_id && (await endIfHeldBySentGroup(deps, tx, await deps.groups.getGroup(tx.group_id), queue))) {
    await formAheadEach(deps);
    return;
  }
  let current: BatchLedgerTx | null = tx;
  for (let round = 0; round < MAX_GROUPS_PER_DELIVERY; round++) {
    if (!current || !isOpen(current)) return;
    const { splitOut, inFlight } = await landGroup(deps, await groupFor(deps, current), receiptWaitMs, tx.ledger_tx_id);
    const own = splitOut.get(tx.ledger_tx_id);
    if (own) throw own;
    if (inFlight.includes(tx.ledger_tx_id)) return;
    current = await deps.getLedgerTx(tx.ledger_tx_id);
  }
  if (current && isOpen(current))
    throw new Error(`ledger write ${tx.ledger_tx_id} is still open after ${MAX_GROUPS_PER_DELIVERY} batched transactions`);
}

/**
 * Pipelined: whether `tx`'s group (`group`, read already; null when it has none) holds it and is
 * SENT or SETTLED, so its delivery ends here (no member read, no chain call). A SENT group's receipt
 * check is queued again when `tx` is its first member (the delivery that sent it, redelivered after
 * a crash before its check was queued; deduplicated by the queue) or when the group has been in
 * flight for `STALE_GROUP_CHECK_AFTER_MS` (its checks may be lost; once per 5-minute window).
 * False, nothing done.
 */
export async function endIfHeldBySentGroup(
  deps: Pick<BatchWriterDeps, 'now'>,
  tx: BatchLedgerTx,
  group: LedgerWriteGroup | null,
  queueReceiptCheck: NonNullable<BatchWriterDeps['queueReceiptCheck']>,
): Promise<boolean> {
  if (!group || (group.status !== 'SENT' && group.status !== 'SETTLED') || !(group.members ?? []).includes(tx.ledger_tx_id)) return false;
  if (group.status === 'SENT') {
    const now = deps.now().getTime();
    if (group.members?.[0] === tx.ledger_tx_id) await queueReceiptCheck(group, 'sent');
    else if (group.sent_at && now - Date.parse(group.sent_at) >= STALE_GROUP_CHECK_AFTER_MS)
      await queueReceiptCheck(group, `stale-${Math.floor(now / STALE_CHECK_WINDOW_MS)}`);
  }
  return true;
}

/**
 * Pipelined, in a member's delivery, settled already or not (docs/ledger.md#the-pipelined-writer):
 * once `FORM_AHEAD_AFTER_MS` have passed since this container last looked for pending writes of
 * `kind` (at once after it sent a group of the kind: the writes accepted meanwhile are pending), the oldest pending write of the kind is landed as its own message would land it — a new
 * group with everything pending, signed after the last group's block — so a backlog of members' messages
 * never holds the next group back. A failure here is logged and left to the writes' own messages
 * (it is never this delivery's failure). True when it tried to form a group (writes may have been
 * claimed since they were last read).
 */
async function formAhead(deps: BatchWriterDeps, kind: 'MINT' | 'TRACE_STAGE', paced: boolean): Promise<'landed' | 'failed' | 'none'> {
  const pace = deps.pace;
  const now = deps.now().getTime();
  const last = pace?.lastLookMs[kind];
  if (!pace || (paced && last !== undefined && now - last < FORM_AHEAD_AFTER_MS)) return 'none';
  pace.lastLookMs[kind] = now;
  try {
    const pending = await deps.groups.pendingOfKind(kind, maxRecordsPerTx(kind));
    const next = pending[0];
    if (!next) return 'none';
    await landGroup(deps, await groupFor(deps, next, pending), 0, next.ledger_tx_id);
    return 'landed';
  } catch (err) {
    logger.warn('next batched transaction not formed ahead; the pending writes’ own messages form it', { kind, error: err as Error });
    return 'failed';
  }
}

/** The batched kinds, each of which a member's delivery may form the next group of. */
const BATCHED_KINDS = ['MINT', 'TRACE_STAGE'] as const;

/**
 * `formAhead` for each batched kind, whatever the kind of the member whose delivery it is: the
 * members' messages of one kind (a burst of mints) never hold back the next group of the other
 * (stage records accepted meanwhile). Given the invocation's time left (`remainingMs`, ms), while a
 * round lands a group another round follows at once, unpaced, up to `FORM_AHEAD_ROUNDS` and while
 * a round's wait and `LEDGER_MESSAGE_MARGIN_MS` are left: each new group is claimed while
 * the last one heads for its block and signed after it, so writes keep leaving once a block without
 * waiting for the members' next messages. True when it tried to form a group of either.
 */
export async function formAheadEach(deps: BatchWriterDeps, remainingMs?: () => number): Promise<boolean> {
  let tried = false;
  const rounds = remainingMs ? FORM_AHEAD_ROUNDS : 1;
  for (let round = 0; round < rounds; round++) {
    if (round > 0 && remainingMs!() < NEXT_GROUP_WAIT_MS + LEDGER_MESSAGE_MARGIN_MS) break;
    let landed = false;
    for (const kind of BATCHED_KINDS) {
      const outcome = await formAhead(deps, kind, round === 0);
      tried ||= outcome !== 'none';
      landed ||= outcome === 'landed';
    }
    if (!landed) break;
  }
  return tried;
}

/** The window of a stale group's extra receipt check (the FIFO queue's deduplication window). */
const STALE_CHECK_WINDOW_MS = 300_000;

/**
 * A group just formed: its item as it is being stored (`stored` settles once it is; the claims go
 * out beside it: a write claimed for a group that is then never stored is released by its own
 * message, which finds no group holding it).
 */
interface NewGroup {
  group: LedgerWriteGroup;
  stored: Promise<void>;
  /** Its candidates' writes as read when it was formed, in candidate order. */
  writes: BatchLedgerTx[];
}

/**
 * The group that lands `tx`: the id of the one that claimed it and still holds it, else a new one
 * (its claim on a group that let it go released first; its other candidates from `pending` when
 * given, the pending writes of its kind read just now).
 */
async function groupFor(deps: BatchWriterDeps, tx: BatchLedgerTx, pending?: BatchLedgerTx[]): Promise<string | NewGroup> {
  if (tx.group_id) {
    const group = await deps.groups.getGroup(tx.group_id);
    const holds = group && (group.status === 'CLAIMING' ? group.candidates : (group.members ?? [])).includes(tx.ledger_tx_id);
    if (holds) return tx.group_id;
    await deps.groups.release(tx.group_id, tx);
  }
  const problem = await deps.ledger.batchCallError(callOf(tx.kind, [tx]));
  if (problem) throw problem;
  return formGroup(deps, tx, pending);
}

/**
 * One transaction of a kind per block (docs/ledger.md#the-pipelined-writer), just before a claimed
 * group is signed: when the group of `kind` sent last is unmined and was sent in the chain's latest
 * block or the one before (a block may come between reading the block number and the broadcast), it
 * is heading for the next block: its receipt is awaited up to `NEXT_GROUP_WAIT_MS` so the next group
 * goes into a later block. A
 * group unmined for longer (stuck: the receipt checks replace it) holds nothing back.
 */
async function awaitLastGroupsBlock(deps: BatchWriterDeps, kind: 'MINT' | 'TRACE_STAGE'): Promise<void> {
  const last = (await deps.groups.inFlight()).filter((g) => g.kind === kind && g.tx_hash).at(-1);
  if (!last) return;
  const block = await deps.ledger.blockNumber();
  if (last.sent_block !== undefined && last.sent_block < block - 1) return;
  await deps.ledger.waitForReceipt(last.tx_hash as Hex, NEXT_GROUP_WAIT_MS);
}

/**
 * A new group for `tx`'s kind with `tx` first among its candidates (the others only when their
 * record encodes), being stored; the other candidates from `read` when given (the pending writes of
 * the kind read just now), else read.
 */
async function formGroup(deps: BatchWriterDeps, tx: BatchLedgerTx, read?: BatchLedgerTx[]): Promise<NewGroup> {
  const max = maxRecordsPerTx(tx.kind);
  const pending = (read ?? (await deps.groups.pendingOfKind(tx.kind, max))).filter((w) => w.ledger_tx_id !== tx.ledger_tx_id);
  // Their records encoded together first; only when that fails, one by one to find which.
  if (pending.length === 0 || !(await deps.ledger.batchCallError(callOf(tx.kind, pending)))) return createGroup(deps, tx, pending, max);
  const others: BatchLedgerTx[] = [];
  for (const w of pending) {
    const problem = await deps.ledger.batchCallError(callOf(w.kind, [w]));
    if (!problem) others.push(w);
    else
      logger.warn('pending ledger write left out of a batched transaction: its record cannot be built', {
        ledger_tx_id: w.ledger_tx_id,
        reason: problem.message,
      });
  }
  return createGroup(deps, tx, others, max);
}

/** The new CLAIMING group of `tx` and `others` (at most `max` candidates, `tx` first), its storing begun. */
function createGroup(deps: BatchWriterDeps, tx: BatchLedgerTx, others: BatchLedgerTx[], max: number): NewGroup {
  const at = deps.now();
  const group: LedgerWriteGroup = {
    group_id: `${tx.kind}-${at.getTime()}-${tx.ledger_tx_id}`,
    kind: tx.kind,
    status: 'CLAIMING',
    candidates: [tx.ledger_tx_id, ...others.map((w) => w.ledger_tx_id)].slice(0, max),
    created_at: at.toISOString(),
  };
  const stored = deps.groups.create(group);
  stored.catch(() => undefined); // awaited beside the claims; a failure there is the delivery's
  return { group, stored, writes: [tx, ...others].slice(0, max) };
}

/**
 * Claims (when still CLAIMING: the candidates' conditioned claims at once, `claimAll`, its members
 * the claimed ones in candidate order, beside the storing of a group formed just now, which is not
 * read again), signs and keeps with its members, sends, waits for and settles one group;
 * pipelined, it does not wait: sent now, its receipt is looked up once (mined → settled here) and
 * otherwise a receipt check queued (mined already, it is settled here only up to
 * `SETTLE_IN_DELIVERY_MAX_MEMBERS` members: a larger one's settling is its receipt check's, so it
 * never holds the next group back); sent before, a receipt check is queued when `own` is its first
 * member (a redelivery after a crash). Its members are returned as in flight (a group sent before
 * is not broadcast again here: the receipt step rebroadcasts a lost one). The members split out
 * before it was signed, with the error each fails with alone.
 */
async function landGroup(
  deps: BatchWriterDeps,
  groupOrId: string | NewGroup,
  receiptWaitMs: number,
  own: string,
): Promise<{ splitOut: Map<string, Error>; inFlight: string[] }> {
  const groupId = typeof groupOrId === 'string' ? groupOrId : groupOrId.group.group_id;
  const found = typeof groupOrId === 'string' ? await deps.groups.getGroup(groupId) : groupOrId.group;
  if (!found) throw new Error(`ledger write group ${groupId} not found`);
  let group: LedgerWriteGroup = found;
  if (group.status === 'SETTLED') return { splitOut: new Map(), inFlight: [] };
  let members: BatchLedgerTx[];
  // Pipelined: the wait for the last group of its kind to be mined starts now, beside the claims
  // (it reads what is in flight and the chain, nothing of this group).
  const lastBlock = deps.queueReceiptCheck && !group.raw_tx ? awaitLastGroupsBlock(deps, group.kind) : undefined;
  lastBlock?.catch(() => undefined); // awaited below; a failure there is this delivery's
  // A group formed just now: its gas estimated over its candidates (a limit for its members, which
  // are among them) and, once that block is in, the next nonce read, both beside the claims too.
  const fresh = lastBlock && typeof groupOrId !== 'string' ? groupOrId : undefined;
  const gasEarly = fresh ? gasAhead(deps, group.kind, fresh.writes) : undefined;
  const nonceEarly = fresh ? lastBlock!.then(() => nextNonce(deps)) : undefined;
  nonceEarly?.catch(() => undefined); // awaited when signing
  if (group.status === 'CLAIMING') {
    const [claims] = await Promise.all([
      deps.groups.claimAll(groupId, group.candidates, typeof groupOrId === 'string' ? undefined : groupOrId.writes),
      typeof groupOrId === 'string' ? undefined : groupOrId.stored,
    ]);
    // Each claim answers the write as it stands: nothing read again. Not sealed apart: its members
    // are written with its signed transaction (`keepSigned`), or with a split (`setMembers`).
    members = claims.filter((c): c is BatchLedgerTx => c !== null);
    group = { ...group, members: ids(members) };
  } else {
    members = await readMembers(deps, group);
  }
  let splitOut = new Map<string, Error>();
  let txHash = group.tx_hash as Hex | undefined;
  const sentBefore = Boolean(group.raw_tx && txHash);
  if (sentBefore && !deps.queueReceiptCheck) {
    await deps.ledger.rebroadcast(group.raw_tx as Hex, txHash!);
  } else if (!sentBefore) {
    // Claimed while the last group of its kind heads for its block, its gas estimated
    // meanwhile; signed after that block.
    const open = members.filter(isOpen);
    const gas = gasEarly ?? (deps.queueReceiptCheck && open.length > 0 ? gasAhead(deps, group.kind, open) : undefined);
    await lastBlock;
    const signed = await signSplitting(deps, group, open, await gas, nonceEarly);
    splitOut = signed.splitOut;
    members = signed.members;
    txHash = signed.txHash;
    if (!txHash) {
      await deps.groups.settle(groupId, undefined, deps.now().toISOString());
      return { splitOut, inFlight: [] };
    }
  }
  if (deps.queueReceiptCheck) {
    if (sentBefore) {
      if (group.members?.[0] === own) await deps.queueReceiptCheck(group, 'sent');
      return { splitOut, inFlight: ids(members) };
    }
    // Sent: the next delivery looks for the writes accepted meanwhile at once (`formAhead`).
    if (deps.pace) delete deps.pace.lastLookMs[group.kind];
    // Sent now (the group as kept: SENT with these members and this hash). Mined already (a chain that
    // mines each transaction on arrival) and small, it is settled in this delivery with no receipt
    // check; else its check is queued (settling is the checks' alone).
    const sent: LedgerWriteGroup = { ...group, status: 'SENT', members: ids(members), tx_hash: txHash };
    const mined = members.length <= SETTLE_IN_DELIVERY_MAX_MEMBERS ? await minedTx(deps, sent, 0) : null;
    if (mined) await settleMined(deps, sent, mined);
    else await deps.queueReceiptCheck(sent, 'sent');
    return { splitOut, inFlight: ids(members) };
  }
  const receipt = await deps.ledger.waitForReceipt(txHash!, receiptWaitMs);
  if (!receipt) throw new Error(`batched ${group.kind} transaction ${txHash} of group ${groupId} not mined yet`);
  await settleMembers(deps, group, members, txHash!, receipt);
  await deps.groups.settle(groupId, Number(receipt.blockNumber), deps.now().toISOString());
  return { splitOut, inFlight: [] };
}

/**
 * The gas limit of the batched call over `members`: the node's estimate plus
 * `BATCH_GAS_MARGIN_PERCENT`, made while the writer waits for the last group's block; undefined
 * when the estimate fails (signing then estimates again itself, and a failure there is dealt with
 * as any signing failure: a refusal bisected, a transport failure thrown).
 */
async function gasAhead(deps: BatchWriterDeps, kind: 'MINT' | 'TRACE_STAGE', members: BatchLedgerTx[]): Promise<bigint | undefined> {
  try {
    const estimate = await deps.ledger.estimateBatchGas(callOf(kind, members));
    return (estimate * BigInt(100 + BATCH_GAS_MARGIN_PERCENT)) / 100n;
  } catch {
    return undefined;
  }
}

/**
 * Signs and keeps the group's batched call over `open` (its members not settled yet; a SEALED
 * group's member list is brought to them first, and the members signed are kept with the
 * transaction, so member i stays record i), with `gas` as its limit while
 * its members are still `open` (estimated ahead, `gasAhead`), and the nonce read ahead (`nonce`)
 * for its first signing (pipelined; the block it is sent at is read as it is signed). When signing fails for a
 * reason its members may cause (anything but a transport failure or the keeping itself), the
 * members that fail alone are found by bisection (`simulateBatch` on halves), split out — the
 * group's members set without them (conditioned: still unsigned), then each claim released — and
 * the rest signed again. No transaction when every member was split out.
 */
async function signSplitting(
  deps: BatchWriterDeps,
  group: LedgerWriteGroup,
  open: BatchLedgerTx[],
  gas?: bigint,
  nonceAhead?: Promise<number>,
): Promise<{ txHash?: Hex; members: BatchLedgerTx[]; splitOut: Map<string, Error> }> {
  const splitOut = new Map<string, Error>();
  let members = open;
  if (group.status === 'SEALED' && members.length !== (group.members ?? []).length)
    await deps.groups.setMembers(group.group_id, ids(members), [], deps.now().toISOString());
  while (members.length > 0) {
    let keeping = false;
    // Pipelined: the chain's block number read as the transaction is signed, kept with it.
    const sentBlock = deps.queueReceiptCheck ? deps.ledger.blockNumber() : undefined;
    sentBlock?.catch(() => undefined); // awaited when keeping
    const nonce = deps.queueReceiptCheck ? await (members === open && nonceAhead ? nonceAhead : nextNonce(deps)) : undefined;
    const keep = async (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => {
      keeping = true;
      return deps.groups.keepSigned(group.group_id, signed, deps.now().toISOString(), await sentBlock, ids(members));
    };
    try {
      const limit = members === open ? gas : undefined;
      const { txHash } =
        group.kind === 'MINT'
          ? await deps.ledger.mintBatchKept(mintRecords(members), keep, nonce, limit)
          : await deps.ledger.recordStagesKept(stageRecords(members), keep, nonce, limit);
      return { txHash, members, splitOut };
    } catch (err) {
      if (keeping || isRpcFailure(err)) throw err;
      const bad = await failingAlone(deps, group.kind, members);
      if (bad.size === 0) throw err;
      const byId = new Map(members.map((m) => [m.ledger_tx_id, m]));
      members = members.filter((m) => !bad.has(m.ledger_tx_id));
      const out = [...bad].map(([id, e]) => ({ ledger_tx_id: id, reason: e.message }));
      await deps.groups.setMembers(group.group_id, ids(members), out, deps.now().toISOString());
      for (const [id, e] of bad) {
        await deps.groups.release(group.group_id, byId.get(id)!);
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

/**
 * The nonce of the next group (docs/ledger.md#the-pipelined-writer): one past the highest nonce the
 * table keeps (groups sent, mined or not), or the chain's pending count when that is higher (a
 * single write signed since, or the first group). Read once the last group is kept: only this
 * writer, one delivery at a time, signs new nonces.
 */
async function nextNonce(deps: BatchWriterDeps): Promise<number> {
  const [kept, chain] = await Promise.all([deps.groups.nextNonce(), deps.ledger.signerNonces()]);
  return Math.max(kept ?? 0, chain.pending);
}
