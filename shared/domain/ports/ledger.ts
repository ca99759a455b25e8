/**
 * Ports: The EVM ledger as the single ledger writer uses it: kept signed writes, receipts, the trace log read back, and
 * the parking of writes that kept failing.
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { Hex } from 'viem';
import type { BatchRecordOutcome } from '../ledger-batching';
import type { BatchLedgerTx, LedgerTx, LedgerWriteGroup } from '../records';

/** Receipt of a ledger transaction once mined. */
export interface LedgerReceipt {
  status: 'success' | 'reverted';
  blockNumber: bigint;
  txHash: Hex;
}

/**
 * The EVM ledger as the single ledger writer uses it: BatchToken (ERC-721) and TraceLog writes,
 * each signed once, kept, and re-sent as the same transaction until mined.
 * Errors: `LedgerUnavailableError` when the RPC endpoint cannot be reached or the send fails.
 */
export interface Ledger {
  /**
   * `BatchToken.mint(custodian, tokenId, batchId, auditHash)` as a kept signed transaction: signed
   * with the signer's next nonce, handed to `keep` to be stored durably, then broadcast. Minting an
   * existing token id is refused (TokenAlreadyMintedError), so a replayed mint cannot make a second token.
   */
  mintBatchTokenKept(
    input: { tokenId: bigint; batchId: string; auditHash: Hex },
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
  ): Promise<{ txHash: Hex }>;
  /**
   * `TraceLog.recordStage(tokenId, stageCode, evidenceCid, auditHash)` (event `StageRecorded`) as a
   * kept signed transaction, like mintBatchTokenKept. The chain does not check stage order (the
   * service does); stage codes DELIVERED=0 … SETTLED=6.
   */
  recordStageKept(
    input: { tokenId: bigint; stage: LedgerStage; evidenceCid: string; auditHash: Hex },
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
  ): Promise<{ txHash: Hex }>;
  /**
   * `AuditAnchor.anchor(root, headCount)` (docs/api/anchoring.md#anchoring-of-the-audit-log) as a kept signed transaction, like
   * mintBatchTokenKept. The contract refuses a root it has (AlreadyAnchored) and an empty anchor.
   */
  anchorAuditRootKept(
    input: { root: Hex; headCount: number },
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
  ): Promise<{ txHash: Hex }>;
  /**
   * `BatchToken.mintBatch(custodian, records)` as a kept signed transaction, like mintBatchTokenKept
   * (docs/ledger.md#the-batched-writer): one transaction for every record; a record the contract
   * would refuse is skipped with `MintSkipped`, never reverting the others.
   */
  mintBatchKept(
    records: MintRecord[],
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
    nonce?: number,
    gas?: bigint,
  ): Promise<{ txHash: Hex }>;
  /**
   * `TraceLog.recordStages(records)` as a kept signed transaction, like recordStageKept: one
   * transaction for every record; a record with an unknown stage code is skipped with `StageSkipped`.
   * Both batched calls are signed with `nonce` when given (the pipelined writer's, from its table),
   * else with the signer's next nonce; with `gas` as their gas limit when given (estimated ahead,
   * `estimateBatchGas`), else with the node's estimate made then.
   */
  recordStagesKept(
    records: StageRecord[],
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
    nonce?: number,
    gas?: bigint,
  ): Promise<{ txHash: Hex }>;
  /**
   * The node's gas estimate of the batched `call` from the signer (gas units; nothing signed).
   * Errors: RangeError when a record cannot be encoded; LedgerRefusedError when the call reverts;
   * LedgerUnavailableError / LedgerTransportError when the RPC fails.
   */
  estimateBatchGas(call: BatchedCall): Promise<bigint>;
  /**
   * What became of each of the `count` records of the mined, successful batched transaction
   * `txHash` (`mintBatch` for MINT, `recordStages` for TRACE_STAGE), in record order, read from its
   * own events (BatchMinted / MintSkipped, StageRecorded / StageSkipped) of the configured contract.
   * Errors: Error when the receipt does not hold exactly `count` such events; LedgerUnavailableError.
   */
  batchOutcomes(txHash: Hex, kind: 'MINT' | 'TRACE_STAGE', count: number): Promise<BatchRecordOutcome[]>;
  /**
   * Why the batched `call` could not be built, checked locally (nothing sent): the first record that
   * cannot be encoded (RangeError: an unknown stage, a bad token id or hash, a missing evidence CID),
   * or undefined when every record encodes (async only so the ledger can load lazily). The batched writer checks each write alone with it
   * before claiming it (docs/ledger.md#one-bad-record-never-blocks-the-others).
   */
  batchCallError(call: BatchedCall): Promise<Error | undefined>;
  /**
   * Simulates the batched `call` from the signer without signing it (an `eth_call`): resolves when
   * the chain would run it. Errors: what signing it would throw — RangeError when a record cannot
   * be encoded, LedgerRefusedError when the call reverts; LedgerUnavailableError /
   * LedgerTransportError when the RPC fails. The batched writer bisects a group it could not sign
   * with it, to find the members that cause the failure.
   */
  simulateBatch(call: BatchedCall): Promise<void>;
  /**
   * Whether the configured contract of `kind` has its batched function (`BatchToken.mintBatch` for
   * MINT, `TraceLog.recordStages` for TRACE_STAGE), read once from its deployed code: contracts
   * deployed before those functions existed do not, and the writer then sends one record per
   * transaction (docs/ledger.md#deploying-the-batched-contracts). Errors: LedgerUnavailableError.
   */
  batchedCallsDeployed(kind: 'MINT' | 'TRACE_STAGE'): Promise<boolean>;
  /** Broadcasts a kept signed transaction again (same bytes, same hash). */
  rebroadcast(rawTx: Hex, txHash: Hex): Promise<void>;
  /**
   * The signer's transaction counts (docs/ledger.md#the-pipelined-writer): `mined` (the nonce after
   * its last mined transaction) and `pending` (counting those the node holds unmined).
   * Errors: LedgerUnavailableError.
   */
  signerNonces(): Promise<{ mined: number; pending: number }>;
  /** The chain's latest block number. Errors: LedgerUnavailableError. */
  blockNumber(): Promise<number>;
  /** Whether the node knows the transaction `txHash` (in its mempool or mined). Errors: LedgerUnavailableError. */
  isKnown(txHash: Hex): Promise<boolean>;
  /**
   * Replaces the kept signed transaction `rawTx` (stuck unmined): the same call, gas and nonce
   * signed again with fees `REPLACEMENT_FEE_BUMP_PERCENT` above its own (or the chain's, when
   * higher), handed to `keep` before it is broadcast. Errors: LedgerUnavailableError; whatever
   * `keep` throws (nothing is broadcast then).
   */
  replaceKept(rawTx: Hex, keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>): Promise<{ txHash: Hex }>;
  /** Waits up to `timeoutMs` for the receipt; `null` when it is not there by then. */
  waitForReceipt(txHash: Hex, timeoutMs: number): Promise<LedgerReceipt | null>;
}

/** Custody stages as the trace log numbers them (DELIVERED=0 … SETTLED=6). */
type LedgerStage = 'DELIVERED' | 'GRADED' | 'MILLED' | 'WAREHOUSED' | 'COMMITTED' | 'EXPORTED' | 'SETTLED';

/** One record of `BatchToken.mintBatch`: the token id, its batch id and the audit entry's hash. */
export interface MintRecord {
  tokenId: bigint;
  batchId: string;
  auditHash: Hex;
}

/** One record of `TraceLog.recordStages`: the token id, the stage, the evidence CID and the audit entry's hash. */
export interface StageRecord {
  tokenId: bigint;
  stage: LedgerStage;
  evidenceCid: string;
  auditHash: Hex;
}

/** A batched ledger call: the records of one `mintBatch` (MINT) or one `recordStages` (TRACE_STAGE), in record order. */
export type BatchedCall = { kind: 'MINT'; records: MintRecord[] } | { kind: 'TRACE_STAGE'; records: StageRecord[] };

/** A TraceLog `StageRecorded(tokenId, stage, evidenceCid, auditHash, recorder)` log in a mined block. */
export interface RecordedStage {
  tokenId: bigint;
  /** Stage code (`STAGE_CODES`: DELIVERED=0 … SETTLED=6). */
  stage: number;
  evidenceCid: string;
  auditHash: Hex;
  /** The block the transaction was mined in. */
  blockNumber: bigint;
}

/**
 * Reads the trace log back (no signing key): what a chain event claims is checked against it.
 * `stageRecordedAt(txHash, logIndex)`: the `StageRecorded` log at block-level `logIndex` of the
 * mined, successful transaction `txHash`, emitted by the configured TraceLog contract; `null` when
 * there is no such transaction (or it is not mined, or reverted), or that log is missing, comes
 * from another contract or is not a StageRecorded log.
 * Errors: `LedgerUnavailableError` when the ledger cannot be read (or is another chain).
 */
export interface TraceLogReader {
  stageRecordedAt(txHash: Hex, logIndex: number): Promise<RecordedStage | null>;
}

/**
 * Ledger writes that kept failing (the single ledger writer's poison-message policy): each failed
 * attempt is counted on the write; after the allowed attempts the write is parked — FAILED with
 * its reason, out of the open index (so neither the queue nor the reconciler sends it again) and
 * in the parked index, listed for operators who retry or discard it (`npm run ledger-parked`).
 */
export interface LedgerWriteParking {
  /** Counts one failed attempt of an open write (its reason kept as `last_error`); the attempts so far, 0 when the write is no longer open. */
  recordFailedAttempt(id: string, reason: string, at: string): Promise<number>;
  /** Parks an open write: FAILED with `reason`, `parked_at`, in the parked index. False when it was confirmed or failed meanwhile. */
  park(id: string, reason: string, at: string): Promise<boolean>;
  /** Parked writes, oldest parked first. */
  parked(limit: number): Promise<LedgerTx[]>;
  /** A parked write open again (SENT when it was signed, else PENDING; attempts reset, back in the open index). Null when it is not parked. */
  unpark(id: string, at: string): Promise<LedgerTx | null>;
  /** A parked write leaves the parked index (it was discarded: its cause settled as refused). False when it was not parked. */
  discard(id: string, reason: string, at: string): Promise<boolean>;
  /** The oldest write not yet confirmed, failed nor parked (its `created_at` is the commit time), or null. */
  oldestOpen(): Promise<LedgerTx | null>;
}

/** Ledger-write queue (FIFO, one writer): make this ledger write land. */
export interface LedgerWriteMessage {
  ledger_tx_id: string;
  /**
   * A receipt check of the sent group with this id (docs/ledger.md#the-pipelined-writer), not a
   * write to land: its members settled once its transaction is mined (`ledger_tx_id` is one of them).
   */
  receipt_check?: string;
}

/**
 * The batched transactions of the single ledger writer (docs/ledger.md#the-batched-writer): a
 * group claims pending writes of one kind, each with its own conditioned write (never one
 * transaction over the group), keeps its signed transaction before it is broadcast, and is settled
 * once every member is confirmed or refused from the receipt.
 */
export interface LedgerWriteGroups {
  /**
   * Open writes of `kind` still PENDING, unsigned, unclaimed and not parked, oldest first, at most
   * `limit` (whole writes: the writer checks each record before claiming it).
   */
  pendingOfKind(kind: 'MINT' | 'TRACE_STAGE', limit: number): Promise<BatchLedgerTx[]>;
  /** Stores a new group (CLAIMING with its candidates). */
  create(group: LedgerWriteGroup): Promise<void>;
  getGroup(id: string): Promise<LedgerWriteGroup | null>;
  /**
   * The writes `ids` as stored now, each with the group its `group_id` names (null when it has none,
   * or either is gone), in the order of `ids`: read in batch (consistent reads; two round trips
   * whatever the number of writes), so a queued batch of writes is looked at in one go.
   */
  writesWithGroups(ids: readonly string[]): Promise<Array<{ tx: LedgerTx | null; group: LedgerWriteGroup | null }>>;
  /**
   * Claims writes for the group: each one's `group_id` set when it is PENDING, unsigned, unclaimed
   * and not parked, or already claimed by this group (idempotent), each with its own condition (one
   * write that is not claimable never holds the others back). Each write as it stands once claimed,
   * in the order of `ledgerTxIds`; null for one that was not claimable. `known`, when given, holds
   * the writes as the caller read them (same order; their records never change): a claimed one is
   * answered as that copy with `group_id` set, with no read back.
   */
  claimAll(groupId: string, ledgerTxIds: readonly string[], known?: readonly BatchLedgerTx[]): Promise<Array<BatchLedgerTx | null>>;
  /**
   * Gives a write's claim back: `group_id` removed only while it names this group and the write is
   * still PENDING and unsigned (a conditioned write). `write` as the caller read it (its id, kind
   * and creation time, which never change). False when it did not (nothing changed).
   */
  release(groupId: string, write: Pick<BatchLedgerTx, 'ledger_tx_id' | 'kind' | 'created_at'>): Promise<boolean>;
  /**
   * The members of a group that has not been signed yet (CLAIMING or SEALED), replaced (record
   * order), and the group SEALED: its members fixed, the ones split out listed with their reason
   * (`split_out`; their claims are released next, so a CLAIMING group's candidates no longer
   * count). Error when the group was signed.
   */
  setMembers(groupId: string, members: string[], splitOut: Array<{ ledger_tx_id: string; reason: string }>, at: string): Promise<void>;
  /**
   * Keeps the group's signed transaction before it is broadcast (once: a second signing is
   * refused), with `sentBlock` (the chain's block then) and its `members` (record order: the group,
   * CLAIMING or SEALED, is SENT with them), in one transaction with the signer's nonce
   * record: its next nonce becomes `signed.nonce + 1` (refused when it is above `signed.nonce`
   * already: that nonce is kept by another transaction) and the group is in flight.
   */
  keepSigned(
    groupId: string,
    signed: { rawTx: string; txHash: string; nonce: number },
    at: string,
    sentBlock: number | undefined,
    members: string[],
  ): Promise<void>;
  /**
   * Keeps a replacement of the group's transaction (same nonce) before it is broadcast: conditioned
   * on the group still SENT with `oldHash`, which joins `replaced_hashes`.
   */
  keepReplacement(
    groupId: string,
    oldHash: string,
    signed: { rawTx: string; txHash: string },
    sentBlock: number,
    at: string,
  ): Promise<void>;
  /** The signer's next nonce as the table keeps it (one past the highest kept group), undefined before the first. */
  nextNonce(): Promise<number | undefined>;
  /** The groups sent and not settled yet (in flight), lowest nonce first. */
  inFlight(): Promise<LedgerWriteGroup[]>;
  /** The group is SETTLED (its members confirmed or refused; no longer in flight), with the block of its transaction when it was mined. */
  settle(groupId: string, blockNumber: number | undefined, at: string): Promise<void>;
}
