/**
 * Ports: the interfaces the use cases need from the outside world. Adapters in
 * `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { PayoutCreationLimits } from './payout-limits';
import type { DdsRecord, DueDiligenceStatement } from './dds';
import type { BuyerPayment, Deposit, DepositStatus, Loan, LoanStatus, PriceFeedSnapshot, Settlement } from './lending';
import type { EvidenceUpload } from './evidence-upload';
import type {
  AnchorLedgerTx,
  AuditAnchorRecord,
  AuditEntry,
  Batch,
  BatchLedgerTx,
  Cooperative,
  EvidencePinStatus,
  Farmer,
  Job,
  LedgerTx,
  Payout,
  PhoneChange,
  VaultLedgerTx,
  PayoutReason,
  PendingBatch,
  PurchaseOrder,
  Stage,
  StageHistoryEntry,
} from './records';
import type { AuditHead, BatchAnchor } from './anchoring';

export type Hex = `0x${string}`;

// ---------------------------------------------------------------- ledger (EVM)

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
  /** Broadcasts a kept signed transaction again (same bytes, same hash). */
  rebroadcast(rawTx: Hex, txHash: Hex): Promise<void>;
  /** Waits up to `timeoutMs` for the receipt; `null` when it is not there by then. */
  waitForReceipt(txHash: Hex, timeoutMs: number): Promise<LedgerReceipt | null>;
}

/** Custody stages as the trace log numbers them (DELIVERED=0 … SETTLED=6). */
type LedgerStage = 'DELIVERED' | 'GRADED' | 'MILLED' | 'WAREHOUSED' | 'COMMITTED' | 'EXPORTED' | 'SETTLED';

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

// ---------------------------------------------------------------- payout provider

/** A rate quote: `rate` is a decimal string, UGX per 1 USD. */
export interface RateQuote {
  quote_id: string;
  rate: string;
  expires_at: string;
}

export type ProviderOrderStatus = 'PENDING' | 'SETTLED' | 'FAILED';

/** An order at the payout provider (deposit channel: merchant balance USD; payout: mobile money UGX). */
export interface ProviderOrder {
  order_id: string;
  /** Our reference: `<payout_id>-A<attempt>`. */
  reference: string;
  status: ProviderOrderStatus;
  amount_usd_micro: number;
  amount_ugx: number;
  /** UGX per USD, decimal string, as applied to this order. */
  exchange_rate: string;
  recipient: { phone: string; name: string };
  mobile_money_transaction_id?: string;
  settled_at?: string;
  failure_reason?: string;
  created_at: string;
}

export interface CreateProviderOrderInput {
  reference: string;
  quote_id?: string;
  amount_usd_micro: number;
  recipient: { phone: string; name: string };
}

/**
 * The external payout provider's order API.
 * Errors: `ProviderUnavailableError` once the provider could not be reached after the configured
 * attempts (connection refused, timeout, 5xx); `ProviderRejectedError` when it answers that it will
 * not accept the order (4xx with a reason). `createOrder` is idempotent by `reference`: a second
 * call with the same reference returns the existing order, never a second one.
 */
export interface PayoutProvider {
  quote(input: { amount_usd_micro?: number; amount_ugx?: number }): Promise<RateQuote>;
  createOrder(input: CreateProviderOrderInput): Promise<ProviderOrder>;
  getOrder(orderId: string): Promise<ProviderOrder | null>;
  findOrderByReference(reference: string): Promise<ProviderOrder | null>;
}

/** Reading the provider's orders only (e.g. to confirm a webhook); same errors as PayoutProvider. */
export type PayoutOrderReader = Pick<PayoutProvider, 'findOrderByReference'>;

// ---------------------------------------------------------------- others

/** Publishes a notification (SNS in AWS) with string message attributes. */
export interface Notifier {
  /** To the cooperative managers' topic; `attributes.cooperative_id` lets each manager's subscription filter to its own cooperative. */
  publish(input: { subject: string; message: string; attributes: Record<string, string> }): Promise<{ messageId: string }>;
  /** An SMS to one phone number (E.164). */
  sendSms(input: { phone: string; message: string; attributes: Record<string, string> }): Promise<{ messageId: string }>;
}

/** Sends a message to a work queue (SQS). */
export interface WorkQueue<T> {
  send(body: T, opts?: { delaySeconds?: number; deduplicationId?: string }): Promise<void>;
}

/** Result of a forest check of a farm location (docs/api/registries.md#forest-check, docs/api/eudr.md#forest-check). */
export interface ForestCheckResult {
  status: 'CLEAR' | 'FLAGGED';
  checked_at: string;
  cutoff_date: string;
  dataset: { name: string; version: string };
  alerts: Array<{ date: string; confidence: string; area_ha: number }>;
}

/** A farm location: a point, and optionally a GeoJSON polygon ([lng, lat] order). */
export interface FarmLocation {
  gps: { lat: number; lng: number };
  polygon?: { type: 'Polygon'; coordinates: number[][][] };
  area_ha: number;
}

export interface ForestCheck {
  check(farm: FarmLocation): Promise<ForestCheckResult>;
}

// ---------------------------------------------------------------- stores (DynamoDB in AWS and locally)
// Implemented by shared/adapters/dynamodb/*. Every write is one conditional write or transaction:
// a failed write leaves nothing half-done.

/** A registration stored while the national registry did not answer, and the job that reports it. */
export interface PendingNationalCheck {
  farmer_id: string;
  job_id: string;
  registered_at: string;
}

/** Cooperatives, farmers and the cooperative holding balance (docs/api/registries.md#cooperatives-farmers-and-the-forest-check). */
export interface RegistryStore {
  /** Errors: COOPERATIVE_ALREADY_EXISTS (409) when the id is taken. */
  createCooperative(c: Cooperative): Promise<void>;
  getCooperative(id: string): Promise<Cooperative | null>;
  /** Applies the changed fields. Errors: COOPERATIVE_NOT_FOUND (404). */
  updateCooperative(id: string, patch: Partial<Omit<Cooperative, 'cooperative_id' | 'created_at'>>): Promise<Cooperative>;
  /** USDC (micro) held for the cooperative from payouts in manual review. */
  getHolding(cooperativeId: string): Promise<{ held_usd_micro: number; payouts_held: number; updated_at: string | null }>;
  /** The cooperative's farms the forest check flagged. */
  flaggedFarmers(cooperativeId: string): Promise<Farmer[]>;
  setForestCheck(
    farmerId: string,
    r: { status: Farmer['gfw_status']; checked_at: string; dataset: { name: string; version: string } },
  ): Promise<void>;
  /**
   * Stores a farmer; with `job`, a registration still waiting for the national registry, which is
   * then listed by `pendingNationalChecks` until settled. Errors: FARMER_ALREADY_REGISTERED (409).
   */
  createFarmer(f: Farmer, job?: Job): Promise<void>;
  /** Registrations waiting for the national registry, oldest first (at most `limit`). */
  pendingNationalChecks(limit: number): Promise<PendingNationalCheck[]>;
  /**
   * Completes a registration that waited for the national registry: the farmer's status and the
   * job, and its removal from the pending list, in one transaction (idempotent).
   */
  settleNationalCheck(farmerId: string, jobId: string, outcome: 'VERIFIED' | 'REJECTED', at: string): Promise<void>;
  getFarmer(id: string): Promise<Farmer | null>;
}

/** Phone corrections of farmers (PATCH /farmers/{id}, docs/api/payouts.md#manual-review), apart from RegistryStore so that only that route bundles them. */
export interface FarmerPhoneStore {
  /**
   * Sets the farmer's phone (E.164), `phone_updated_at` and `updated_by`, and appends `change` to
   * the farmer's `phone_changes` (its audit of phone changes), in one conditional update: the
   * farmer exists in `cooperative_id` and its phone is still `previous_phone` (none when null).
   * Returns the farmer as stored, or null when the condition failed.
   */
  updateFarmerPhone(input: {
    farmer_id: string;
    cooperative_id: string;
    phone: string;
    previous_phone: string | null;
    actor: string;
    at: string;
    change: PhoneChange;
  }): Promise<Farmer | null>;
}

/** Batches, their audit log and jobs (docs/api/batches-and-custody.md#custody-trail). */
export interface BatchStore {
  /** The next batch number of `year` (atomic counter, 1-based). */
  nextBatchNumber(year: number): Promise<number>;
  /** Stores a mint-pending batch with the ledger write that mints its BatchToken (and a job), in one transaction. */
  putPending(batch: Batch, mint: BatchLedgerTx, job?: Job): Promise<void>;
  /** The mint was refused by the ledger: the batch's mint FAILED (and its job). */
  markMintFailed(batchId: string, reason: string, jobId?: string, at?: string): Promise<void>;
  /**
   * The mint is mined: batch DELIVERED with its history entry, the first audit entry, the job
   * COMPLETE, in one transaction. Returns false when it was confirmed already (idempotent).
   */
  confirmMint(input: {
    batchId: string;
    txHash: string;
    entry: AuditEntry;
    history: StageHistoryEntry;
    jobId?: string;
    at: string;
  }): Promise<boolean>;
  /** A batch whatever its mint status (pending ones included). */
  getAny(batchId: string): Promise<PendingBatch | null>;
  /** A confirmed batch (mint CONFIRMED), else null. */
  get(batchId: string): Promise<Batch | null>;
  setPaymentStatus(batchId: string, status: Batch['payment_status']): Promise<void>;
  /** The batch's audit entries in sequence order. */
  auditEntries(batchId: string): Promise<AuditEntry[]>;
  /** Confirmed batches whose NET_COFFEE_PAYMENT payout does not exist yet, confirmed before `before` (ISO). */
  awaitingPayoutBefore(before: string, limit: number): Promise<string[]>;
  /**
   * The farmer's confirmed batches (mint CONFIRMED), at most `limit`, for the credit score. The
   * farmer's cooperative is passed because batches are indexed by cooperative (a bounded read of
   * that cooperative's batches, see the adapter).
   */
  listByFarmer(farmerId: string, cooperativeId: string, limit: number): Promise<Batch[]>;
  putJob(job: Job): Promise<void>;
  getJob(jobId: string): Promise<Job | null>;
}

/** What a settlement or failure report did. */
export type ApplyOutcome = 'APPLIED' | 'DUPLICATE_WEBHOOK' | 'IGNORED';

/** A settlement as the provider reports it (webhook or order read). */
export interface SettlementFacts {
  attempt: number;
  order_id: string;
  amount_ugx: number;
  exchange_rate: string;
  mobile_money_transaction_id: string;
  settled_at: string;
}

/** An inbound webhook's identity, remembered for replay detection. */
interface WebhookRef {
  source: string;
  id: string;
}

/**
 * Payouts (payment type FARMER_PAYOUT). Every status change is conditioned on the statuses the
 * domain's transition table allows (shared/domain/payout-lifecycle.ts) and on the attempt it
 * concerns, so replays, reordering and concurrent writers cannot pay twice or move a payout back.
 */
export interface PayoutStore {
  /**
   * A PENDING payout and its (batch, reason) guard in one transaction, advancing the batch's payout
   * sequence from `expectedSeq`. With `limits`, the same transaction adds `payout.counted_ugx` to the
   * batch's running total on the condition that it stays within `batch_value_ugx`, and (when
   * `payout.manual_day` is set) the payout's micro-USDC to the cooperative's total of that day on the
   * condition that it stays within `daily_limit_usd_micro`.
   * Errors: DUPLICATE_PAYOUT (409); DAILY_PAYOUT_LIMIT_REACHED (422); PAYOUT_EXCEEDS_BATCH_VALUE (422)
   * when the store can tell; PayoutSequenceConflict (retry: the batch, its sequence or its total moved).
   */
  createPending(payout: Payout, expectedSeq: number, limits?: PayoutCreationLimits): Promise<void>;
  /**
   * Removes a payout whose order never reached the provider, with its guard (the caller may retry),
   * and takes back what it counted against its batch's value and its cooperative's day, in one transaction.
   * Only while it is PENDING and unchanged since `payout.updated_at` (a retry that claimed it meanwhile wins).
   */
  discardUnsent(payout: Payout): Promise<void>;
  /** A PENDING payout whose first order is unknown (see `Payout.order_unknown`) is marked so; returns it as stored. */
  markOrderUnknown(payout: Payout, at: string): Promise<Payout>;
  /**
   * The PENDING, order-unknown payout for (batch, reason), claimed for one retry (the mark removed,
   * `updated_at` = `at`), or null when there is none or another request claimed it first.
   */
  claimOrderUnknown(batchId: string, reason: PayoutReason, at: string): Promise<Payout | null>;
  /** PENDING → PROCESSING with the provider order. */
  markProcessing(payout: Payout, order: { order_id: string; amount_ugx: number; exchange_rate: string }, at: string): Promise<Payout>;
  /** The first order was rejected: FAILED, so the retry path starts. */
  markFirstOrderRejected(payout: Payout, reason: string, at: string): Promise<Payout>;
  /** Registers attempt N and its task token; returns the payout when the attempt cannot start (null when registered). */
  registerAttempt(payoutId: string, attempt: number, token: string, at: string): Promise<Payout | null>;
  setAttemptOrder(payoutId: string, attempt: number, orderId: string): Promise<void>;
  /** COMPLETED with the settlement facts, audit entry and webhook receipt in one transaction. */
  recordSettlement(payout: Payout, s: SettlementFacts, at: string, webhook?: WebhookRef): Promise<ApplyOutcome>;
  /** FAILED for `attempt`, once; same replay and ordering rules as recordSettlement. */
  recordFailure(payout: Payout, attempt: number, reason: string, at: string, webhook?: WebhookRef): Promise<ApplyOutcome>;
  /** FAILED → RETRY_n. Errors: PayoutTransitionRejected when the status no longer allows it. */
  scheduleRetry(payout: Payout, retry: 1 | 2 | 3, at: string): Promise<Payout>;
  /** MANUAL_REVIEW, the USDC added to the cooperative's holding balance; false when it was already. */
  markManualReview(payout: Payout, at: string): Promise<boolean>;
  markManagerNotified(payoutId: string, at: string): Promise<void>;
  /** Payouts not final whose last activity is older than `before` (ISO), oldest first. */
  openBefore(before: string, limit: number): Promise<Payout[]>;
  get(payoutId: string): Promise<Payout | null>;
  /** The batch's payments oldest first; `nextToken` as returned before. Errors: VALIDATION_ERROR for a foreign token. */
  listByBatch(batchId: string, limit: number, nextToken?: string): Promise<{ items: Payout[]; total: number; next_token?: string }>;
}

/**
 * Manual-review resolutions of payouts (docs/api/payouts.md#manual-review), apart from PayoutStore so that only the
 * resolve route bundles them.
 */
export interface PayoutResolutionStore {
  /**
   * Manual review closed as paid in cash at the office (docs/api/payouts.md#manual-review), in one transaction on the
   * condition that the payout is still in MANUAL_REVIEW: COMPLETED, settlement_channel
   * CASH_AT_OFFICE, the receipt and paid_at; the cooperative's holding balance less the payout's
   * USDC; the batch's payment PAYMENT_CONFIRMED for a NET_COFFEE_PAYMENT; audit PAYOUT_PAID_IN_CASH.
   * Returns the payout as stored. Errors: PayoutTransitionRejected when it is no longer in MANUAL_REVIEW.
   */
  resolvePaidInCash(payout: Payout, cash: { receipt_number: string; paid_at: string; actor: string }, at: string): Promise<Payout>;
  /**
   * Manual review closed by a new round of attempts (docs/api/payouts.md#manual-review), in one transaction on the
   * condition that the payout is still in MANUAL_REVIEW: PROCESSING at the round's first attempt
   * (`attempt`), retry_count 0, the farmer's current phone and name, resolution_round = `round`,
   * manager_notified_at removed, back in the open-payouts index; the holding balance less the
   * payout's USDC; the batch's payment INITIATED for a NET_COFFEE_PAYMENT; audit PAYOUT_RETRY_REQUESTED.
   * Errors: PayoutTransitionRejected when it is no longer in MANUAL_REVIEW.
   */
  resolveRetry(
    payout: Payout,
    retry: { round: number; attempt: number; phone: string; recipient_name: string; actor: string },
    at: string,
  ): Promise<Payout>;
}

/** Custody trail writes: stage changes with their ledger writes, and purchase orders (docs/api/batches-and-custody.md#custody-trail). */
export interface CustodyStore {
  /**
   * Commits a stage change: stage, history, audit entry and the trace-log write to make, in one
   * transaction conditional on the stage it moves from; `outturnKg` (MILLED) is kept on the batch
   * as its green-coffee weight. Errors: StageConflictError.
   */
  commitStage(input: {
    batchId: string;
    tokenId: string;
    from: Stage;
    to: Stage;
    at: string;
    actor: string;
    evidenceCid: string;
    payload: Record<string, unknown>;
    outturnKg?: number;
  }): Promise<{ entry: AuditEntry; ledgerTx: BatchLedgerTx }>;
  getLedgerTx(id: string): Promise<LedgerTx | null>;
  /** Keeps a signed transaction (raw bytes, hash, nonce) before it is broadcast. */
  keepSigned(id: string, signed: { rawTx: string; txHash: string; nonce: number }, at: string): Promise<void>;
  /** The ledger write is mined: CONFIRMED, its hash into the batch's history, its job COMPLETE. */
  confirm(tx: LedgerTx, txHash: string, blockNumber: number, at: string): Promise<void>;
  /** Attaches a job to a write not yet confirmed; false when it was confirmed meanwhile. */
  attachJob(tx: LedgerTx, job: Job): Promise<boolean>;
  markFailed(id: string, reason: string, at: string): Promise<void>;
  /** Ledger writes not confirmed, created before `before` (ISO), oldest first. */
  openLedgerTxsBefore(before: string, limit: number): Promise<LedgerTx[]>;
  /** Errors: VALIDATION_ERROR when a batch is on another purchase order already. */
  createPurchaseOrder(po: PurchaseOrder): Promise<void>;
  getPurchaseOrder(id: string): Promise<PurchaseOrder | null>;
  /** DRAFT → CONFIRMED (false when it was confirmed already). */
  confirmPurchaseOrder(po: PurchaseOrder, actor: string, at: string): Promise<boolean>;
}

/** Due diligence statements: one per batch, filed once (docs/api/eudr.md#due-diligence-statements). */
export interface DdsStore {
  /** Stores a new DDS; returns the batch's existing DDS id instead when it has one (else null). */
  create(dds: DdsRecord): Promise<string | null>;
  get(id: string): Promise<DdsRecord | null>;
  markSubmitted(id: string, uuid: string, at: string): Promise<void>;
  /** SUBMITTED → AVAILABLE; false when it was not SUBMITTED. */
  markAvailable(id: string, reference: string, verification: string, at: string): Promise<boolean>;
  markRejected(id: string, reason: string, at: string): Promise<boolean>;
}

/** Receipts of inbound webhooks whose effect is not one transaction (replay detection). */
export interface WebhookReceiptStore {
  hasWebhook(source: string, id: string): Promise<boolean>;
  /** True the first time `(source, id)` is claimed, false when a receipt existed. */
  claimWebhook(source: string, id: string, at: string): Promise<boolean>;
}

/** What claiming an `Idempotency-Key` found. */
export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'in-progress' }
  | { kind: 'mismatch' };

/** `Idempotency-Key` records (24 h): claimed with a conditional put, completed with the response to replay, released on failure. */
export interface IdempotencyStore {
  claim(scope: string, key: string, requestHash: string, at: Date): Promise<IdempotencyClaim>;
  complete(scope: string, key: string, status: number, body: unknown): Promise<void>;
  release(scope: string, key: string): Promise<void>;
}

// ---------------------------------------------------------------- workflow, queues

/** The payout lifecycle state machine (Step Functions): one execution per payout, named after it. */
export interface PayoutWorkflow {
  /**
   * Starts the execution (a no-op when it is running or ran). `round` > 0: the execution of the
   * round-th resolution retry, named `<payout_id>-R<round>`, running attempts 4·round+1 … (docs/api/payouts.md#manual-review).
   */
  start(payoutId: string, round?: number): Promise<void>;
  /** SendTaskSuccess for a parked attempt (a stale token is ignored). */
  resume(token: string, output: Record<string, unknown>): Promise<void>;
  /** SendTaskFailure with an ASL error name (e.g. `OrderFailed`). */
  fail(token: string, error: string, cause: string): Promise<void>;
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

/** Where an audit root stands on AuditAnchor: the block and transaction that anchored it, or null when never. */
export type AnchoredRootLookup = (root: Hex) => Promise<{ block_number: number; tx_hash: string } | null>;

/** Ledger-write queue (FIFO, one writer): make this ledger write land. */
export interface LedgerWriteMessage {
  ledger_tx_id: string;
}

/**
 * Payout-request queue: start the NET_COFFEE_PAYMENT payout of a confirmed batch (`batch_id`), or
 * the LOAN_DISBURSEMENT of a loan whose BatchToken is locked (`loan_id`).
 */
export type PayoutRequestMessage = { batch_id: string; loan_id?: undefined } | { loan_id: string; batch_id?: undefined };

/** DDS filing queue: file this statement with the EU Information System. */
export interface DdsFilingMessage {
  dds_id: string;
}

// ---------------------------------------------------------------- IPFS

/** One entry of a UnixFS directory: `size` is the file's size in bytes (0 for a subdirectory). */
export interface PinStoreEntry {
  name: string;
  cid: string;
  size: number;
}

// ---------------------------------------------------------------- registries

/** Result of a national farmer registry look-up: only an ACTIVE farmer counts as found. */
export type FarmerRegistryLookup = { found: true; farmer_id: string; full_name: string; district: string } | { found: false };

/** The national farmer registry (MAAIF). */
export interface NationalFarmerRegistry {
  /** Looks up a national farmer ID. Errors: NationalRegistryUnavailableError when the registry does not answer. */
  lookup(farmerId: string): Promise<FarmerRegistryLookup>;
}

/** Lifecycle status of a filed DDS, as this service tracks it. */
type DdsRegistryStatus = 'SUBMITTED' | 'AVAILABLE' | 'REJECTED';

/** What the EU Information System reports about one filed DDS. */
export interface DdsRegistryStatusInfo {
  /** AVAILABLE always carries both `reference_number` and `verification_number`. */
  status: DdsRegistryStatus;
  /** E.g. `26DEPDGY8NTUH2` (year, member state, 10 characters); at most 14 characters. */
  reference_number?: string;
  /** 5–35 characters (the sandbox gives 8). */
  verification_number?: string;
  /** The registry's reason when REJECTED. */
  rejection_reason?: string;
  /** The registry's own status word (`eudrCommon:EudrStatusType`, e.g. `GROUPED`) when it says more than `status`. */
  registry_status?: string;
}

/**
 * Filing due diligence statements with the EU Information System (docs/api/eudr.md#due-diligence-statements). Filing returns
 * only the DDS identifier (a UUID); reference and verification numbers come later via `status`.
 * Implementation: `SoapDdsRegistry` (shared/adapters/eudr), which also talks to the local sandbox.
 */
export interface DdsRegistry {
  /**
   * Files one `dds:SubmitDdsRequest` document (as `DdsDocuments.submitRequestXml` gives it).
   * Never retried here: the registry creates a new DDS on every accepted call.
   * Errors: DdsRegistryRejectedError (a SOAP Fault), DdsRegistryUnavailableError.
   */
  submit(xmlBody: string, opts: { internalReference: string }): Promise<{ uuid: string }>;
  /** Current status of a filed DDS by its UUID; read-only. Errors as for `submit`. */
  status(uuid: string): Promise<DdsRegistryStatusInfo>;
}

/** The EU Information System's document format for a DDS (SubmitDdsRequest XML, V3). */
export interface DdsDocuments {
  /** The `dds:SubmitDdsRequest` XML of a statement (the SOAP body content). */
  submitRequestXml(statement: DueDiligenceStatement): string;
}

// ---------------------------------------------------------------- audit verification

/** Reads a BatchToken's trail from the ledger (mint and TraceLog events). Errors: any read failure. */
export type ChainTrailReader = (tokenId: bigint) => Promise<ChainTrail>;

/** A decoded `BatchToken.BatchMinted(tokenId, batchId, auditHash)` event. */
export interface ChainMint {
  tokenId: bigint;
  batchId: string;
  auditHash: Hex;
  txHash: Hex;
  /** The block it was mined in (the entry's anchor), when the reader gives it. */
  blockNumber?: bigint;
}

/** A decoded `TraceLog.StageRecorded(tokenId, stage, evidenceCid, auditHash, recorder)` event. */
export interface ChainStage {
  tokenId: bigint;
  /** Stage code (`STAGE_CODES`). */
  stage: number;
  evidenceCid: string;
  auditHash: Hex;
  txHash: Hex;
  logIndex: number;
  /** The block it was mined in (the entry's anchor), when the reader gives it. */
  blockNumber?: bigint;
}

/**
 * The block at which AuditAnchor committed `root` (`anchoredAtBlock`), null when it never did
 * (docs/api/anchoring.md#anchoring-of-the-audit-log). Errors: any read failure.
 */
export type AnchorRootReader = (root: Hex) => Promise<bigint | null>;

/** The ledger events of one batch token (see `readChainTrail`). */
export interface ChainTrail {
  mints: ChainMint[];
  stages: ChainStage[];
}

/**
 * Fetches an evidence directory by CID: its files (flat names, exact bytes), or `null` when the
 * content is not available. May throw; the failure is reported as an `evidence_cid` check.
 */
export type EvidenceFetcher = (cid: string) => Promise<{ files: Array<{ path: string; bytes: Uint8Array }> } | null>;

// ---------------------------------------------------------------- lending (docs/api/lending.md#lending-mfi-deposits-and-credit-score)

/**
 * A write to the lending vault (LendingVault.sol), signed and landed by the single ledger writer
 * like mints and trace-log records (one signer, so one writer keeps the nonces in order). `ref` is
 * the service's id of what the write is for (LOAN-…, DEP-…, PO-…), at most 32 ASCII bytes,
 * carried on chain as a right-zero-padded bytes32 so events name it readably.
 *  - VAULT_DEPOSIT: the treasury (the signer) deposits `assetsUsdMicro` USDC it received from the
 *    on-ramp, shares to the MFI's shareholder address (`vaultShareholder(mfiId)`);
 *  - VAULT_REVERSE_DEPOSIT: an on-ramp reversal — the deposit's shares are redeemed back to the treasury;
 *  - LOCK_COLLATERAL: the BatchToken moves from the custodian into the vault, the loan is recorded
 *    and its principal leaves the vault to the treasury that funds the payout provider (reverts if
 *    the token is locked already or the vault lacks the liquidity);
 *  - CANCEL_LOAN: the disbursement was never sent — principal back, token unlocked;
 *  - WRITE_OFF_LOAN: a loan unpaid long past its due date is written off — DEFAULTED in the vault,
 *    its principal no longer counted in total assets (the token stays with the vault);
 *  - REPAY_LOAN: the loan repaid from the purchase order's buyer payment (principal + interest),
 *    the token unlocked back to the custodian;
 *  - RELEASE_REMAINDER: what is left of a buyer payment after its loans, to the cooperative's address;
 *  - REFUND_PAYMENT: an unapplied buyer payment (`paymentTxHash`/`paymentLogIndex`) back to its
 *    payer `to` from the purchase order's escrow; `ref` is the refund id (`refundIdOf`), once per payment.
 */
export type VaultCall =
  | { kind: 'VAULT_DEPOSIT'; ref: string; mfiId: string; assetsUsdMicro: bigint }
  | { kind: 'VAULT_REVERSE_DEPOSIT'; ref: string; mfiId: string; shares: bigint }
  | { kind: 'LOCK_COLLATERAL'; ref: string; tokenId: bigint; principalUsdMicro: bigint }
  | { kind: 'CANCEL_LOAN'; ref: string }
  | { kind: 'WRITE_OFF_LOAN'; ref: string }
  | { kind: 'REPAY_LOAN'; ref: string; purchaseOrderRef: string; amountUsdMicro: bigint }
  | { kind: 'RELEASE_REMAINDER'; ref: string; cooperativeId: string; amountUsdMicro: bigint }
  | {
      kind: 'REFUND_PAYMENT';
      ref: string;
      purchaseOrderRef: string;
      to: string;
      amountUsdMicro: bigint;
      paymentTxHash: string;
      paymentLogIndex: number;
    };

/** The vault side of the ledger: writes as kept signed transactions (see `Ledger`). Errors: LedgerUnavailableError. */
export interface VaultLedger {
  vaultCallKept(call: VaultCall, keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>): Promise<{ txHash: Hex }>;
}

/** The vault's figures (micro-USDC; shares in the vault's own units, 12 decimals: VAULT_SHARE_DECIMALS). */
export interface VaultState {
  total_assets_usd_micro: bigint;
  total_shares: bigint;
  /** Principal of loans not yet repaid, cancelled or written off (counted in total assets). */
  loans_outstanding_usd_micro: bigint;
  /** Principal of loans written off (DEFAULTED; no longer in total assets). */
  loans_written_off_usd_micro: bigint;
  /** USDC in the vault available to lend (buyer payments not yet applied excluded). */
  idle_usd_micro: bigint;
}

/** A buyer's payment of a purchase order into the vault (`PurchaseOrderPaid` log). */
export interface PurchaseOrderPayment {
  purchaseOrderId: string;
  payer: Hex;
  amountUsdMicro: bigint;
  txHash: Hex;
  logIndex: number;
  blockNumber: bigint;
}

/** What one mined vault write did, read from its receipt's logs (null when the transaction has no such log). */
export interface VaultWriteResult {
  /** VAULT_DEPOSIT: shares minted; VAULT_REVERSE_DEPOSIT: shares burned. */
  shares?: bigint;
  /** USDC moved by the write (deposit, redemption, principal, repayment, release). */
  assetsUsdMicro?: bigint;
}

/** Reads the vault (no signing key). Errors: LedgerUnavailableError. */
export interface VaultReader {
  state(): Promise<VaultState>;
  /** Shares held for an MFI and what they are worth now (micro-USDC). */
  mfiPosition(mfiId: string): Promise<{ shares: bigint; value_usd_micro: bigint }>;
  /** The effect of a mined vault write (see VaultWriteResult); null when its receipt has no vault log. */
  writeResult(txHash: Hex): Promise<VaultWriteResult | null>;
  /** PurchaseOrderPaid logs in blocks [fromBlock, toBlock]. */
  purchaseOrderPayments(fromBlock: bigint, toBlock: bigint): Promise<PurchaseOrderPayment[]>;
  /** PurchaseOrderPaid logs of one mined transaction (a chain event is checked against them); [] when none or not mined. */
  purchaseOrderPaymentsInTx(txHash: Hex): Promise<PurchaseOrderPayment[]>;
  /** The vault's own record of a loan. */
  loan(
    ref: string,
  ): Promise<{ status: 'NONE' | 'ACTIVE' | 'REPAID' | 'CANCELLED' | 'DEFAULTED'; tokenId: bigint; principalUsdMicro: bigint }>;
}

/** The coffee price feed (docs/api/lending.md#price-feed). Errors: Error when the source cannot be read or is malformed. */
export interface PriceFeed {
  latest(): Promise<PriceFeedSnapshot>;
}

/** A fiat on-ramp order (MFI deposits). */
export interface OnRampOrder {
  ramp_payment_id: string;
  /** Our reference: the deposit's payment id (DEP-…). */
  reference: string;
  status: 'PENDING' | 'COMPLETED' | 'FAILED' | 'REVERSED';
  source_currency: string;
  source_amount: number;
  /** USDC delivered to the destination address (0 until COMPLETED). */
  usdc_amount_usd_micro: number;
  destination_address: Hex;
  /** The on-ramp's USDC transfer to the destination. */
  transfer_tx_hash?: string;
  failure_reason?: string;
  completed_at?: string;
  reversed_at?: string;
}

/** The fiat on-ramp's API. Errors: a 503 domain error when it cannot be reached; ProviderRejectedError when it refuses the order. */
export interface OnRamp {
  /** Idempotent by `reference`. */
  createOrder(input: { reference: string; source_currency: string; source_amount: number; destination_address: Hex }): Promise<OnRampOrder>;
  getOrder(rampPaymentId: string): Promise<OnRampOrder | null>;
}

/** Loans (docs/api/lending.md#loans). */
export interface LoanStore {
  /**
   * Creates a PENDING loan, the batch's one-active-loan guard and the ledger write that locks its
   * BatchToken in the vault, in one transaction (the loan number taken by the caller).
   * Errors: BATCH_HAS_ACTIVE_LOAN (409) when the batch's guard exists.
   */
  createPending(loan: Loan, lockWrite: VaultLedgerTx): Promise<void>;
  /** Next `n` of `LOAN-<year>-<n>` (atomic counter). */
  nextLoanNumber(year: number): Promise<number>;
  get(loanId: string): Promise<Loan | null>;
  /** The batch's loan that holds its guard (PENDING or ACTIVE), or null. */
  activeForBatch(batchId: string): Promise<Loan | null>;
  /** Moves a loan from one of `from` to `to` with the fields given, conditionally; false when it was not in `from`. */
  transition(loanId: string, from: LoanStatus[], to: LoanStatus, set: Partial<Loan>, at: string): Promise<boolean>;
  /** The farmer's loans, newest first (credit score). */
  listByFarmer(farmerId: string, limit: number): Promise<Loan[]>;
  /** PENDING loans created before `before` (ISO), oldest first (reconciliation). */
  pendingBefore(before: string, limit: number): Promise<Loan[]>;
  /**
   * Loans stored ACTIVE whose `due_at` is at or before `dueBy` (ISO), earliest due first, all of
   * them (paged internally; write-offs and the portfolio at risk).
   */
  activeDueBy(dueBy: string): Promise<Loan[]>;
}

/** MFI deposits (payment type MFI_DEPOSIT). */
export interface DepositStore {
  create(deposit: Deposit): Promise<void>;
  nextDepositNumber(year: number): Promise<number>;
  get(paymentId: string): Promise<Deposit | null>;
  /** Moves a deposit from one of `from` to `to` with the fields given, conditionally; false when it was not in `from`. */
  transition(paymentId: string, from: DepositStatus[], to: DepositStatus, set: Partial<Deposit>, at: string): Promise<boolean>;
}

/**
 * Hands a vault write to the single ledger writer: the write is stored (a ledger write of kind
 * `VAULT`, keyed by `id`) and queued; storing the same `id` again is a no-op, so callers may
 * retry. When it is mined the writer calls back the use case that asked for it, by `call.kind`
 * (see shared/use-cases/vault-writes.ts). Errors: StoreUnavailableError.
 */
export interface VaultWriteQueue {
  request(id: string, call: VaultCall, at: string): Promise<void>;
}

/** Stores vault writes for the single ledger writer. */
export interface VaultWriteStore {
  /** Stores the write (PENDING, open for reconciliation) unless one with its id exists; false when it existed. */
  putVaultWrite(tx: VaultLedgerTx): Promise<boolean>;
}

/** Settlements of purchase orders on their buyer payments (exactly one per purchase order). */
export interface SettlementStore {
  /**
   * Stores the settlement unless the purchase order has one, in one transaction with the order's
   * `settled_at` — on condition that its `paid_usd_micro` still equals the settlement's
   * `amount_usd_micro` and it is not settled — and a SETTLEMENT_STARTED audit entry (`actor`) on
   * each of `batchIds`. False when the order was settled meanwhile or another payment counted
   * (read again). Errors: StoreUnavailableError.
   */
  start(settlement: Settlement, batchIds: string[], actor: string): Promise<boolean>;
  /**
   * Keeps a buyer payment once (by purchase order, tx hash and log index) with a
   * BUYER_PAYMENT_RECEIVED audit entry on each of `batchIds`. A COUNTED payment adds its amount
   * to the order's `paid_usd_micro` in the same transaction, on condition that the order is
   * CONFIRMED and not settled; when that fails it is kept UNAPPLIED (AFTER_SETTLEMENT) instead.
   * Returns the payment as stored, and whether this call stored it (false: kept before).
   */
  recordPayment(payment: BuyerPayment, batchIds: string[]): Promise<{ payment: BuyerPayment; created: boolean }>;
  /** The purchase order's buyer payments (known order or not), in transaction-hash order. */
  payments(purchaseOrderId: string): Promise<BuyerPayment[]>;
  getPayment(purchaseOrderId: string, txHash: string, logIndex: number): Promise<BuyerPayment | null>;
  /** Records the order's `amount_due_usd_micro` unless it has one. */
  recordAmountDue(purchaseOrderId: string, amountDueUsdMicro: number): Promise<void>;
  /**
   * UNAPPLIED or REFUND_REFUSED → REFUND_REQUESTED (refund id, who, when), with a
   * PAYMENT_REFUND_REQUESTED audit entry on each of `batchIds`, in one transaction. False when
   * the payment is in another status (read it again).
   */
  requestRefund(
    payment: BuyerPayment,
    refund: { refund_id: string; refund_requested_by: string; refund_requested_at: string },
    batchIds: string[],
  ): Promise<boolean>;
  /**
   * REFUND_REQUESTED → REFUNDED (its tx, PAYMENT_REFUNDED audit entry on the order's batches) or
   * REFUND_REFUSED; a no-op when the payment is not REFUND_REQUESTED (applied already).
   */
  recordRefund(
    purchaseOrderId: string,
    txHash: string,
    logIndex: number,
    outcome: { status: 'REFUNDED' | 'REFUND_REFUSED'; tx_hash?: string },
    at: string,
  ): Promise<void>;
  get(purchaseOrderId: string): Promise<Settlement | null>;
  /**
   * Records a loan's repayment as mined (REPAID, its tx) or refused (REFUSED), then marks the
   * settlement COMPLETED when no repayment is REQUESTED and the remainder is not REQUESTED.
   */
  recordRepayment(
    purchaseOrderId: string,
    loanId: string,
    outcome: { status: 'REPAID' | 'REFUSED'; tx_hash?: string },
    at: string,
  ): Promise<void>;
  /** Records the remainder as RELEASED (its tx) or REFUSED, then completes the settlement as above. */
  recordRemainder(purchaseOrderId: string, outcome: { status: 'RELEASED' | 'REFUSED'; tx_hash?: string }, at: string): Promise<void>;
}

// ---------------------------------------------------------------- chain watch (issue 12)

/**
 * A log the chain watcher follows, decoded (shared/use-cases/chain-watch.ts):
 * - TraceLog `StageRecorded(tokenId, stage, …)` with the batch id the BatchToken holds for the
 *   token (`batchId` null when it holds none);
 * - LendingVault `PurchaseOrderPaid(poRef, payer, amount)` with the purchase order id of `poRef`
 *   (`purchaseOrderId` null when the bytes32 is not an id).
 * `blockNumber`/`logIndex` place it in chain order; only mined, non-removed logs are given.
 */
export type WatchedChainLog =
  | { kind: 'StageRecorded'; blockNumber: bigint; logIndex: number; txHash: Hex; tokenId: bigint; stage: number; batchId: string | null }
  | {
      kind: 'PurchaseOrderPaid';
      blockNumber: bigint;
      logIndex: number;
      txHash: Hex;
      purchaseOrderId: string | null;
      payer: Hex;
      amountUsdMicro: bigint;
    };

/** The chain as the watcher reads it (eth_blockNumber, eth_getLogs). Errors: LedgerUnavailableError. */
export interface ChainLogSource {
  /** The latest block number the endpoint knows. */
  headBlock(): Promise<bigint>;
  /** The followed logs of blocks [fromBlock, toBlock] (inclusive), in chain order (block, then log index). */
  logsIn(fromBlock: bigint, toBlock: bigint): Promise<WatchedChainLog[]>;
}

/**
 * The chain watcher's block cursor: one item holding the next block to read and a lease, so that
 * two overlapping runs never process the same blocks. Errors: StoreUnavailableError.
 */
export interface ChainCursorStore {
  /**
   * Takes the lease for `owner` until `leaseUntil` when nobody holds an unexpired one (a
   * conditional update); creates the cursor at `startBlock` when there is none. Returns the next
   * block to read, or null when another run holds the lease.
   */
  claim(owner: string, now: Date, leaseUntil: Date, startBlock: bigint): Promise<{ nextBlock: bigint } | null>;
  /**
   * Moves the cursor from `fromBlock` to `nextBlock` when `owner` still holds the lease and the
   * cursor is still at `fromBlock` (a conditional update); false otherwise (nothing changed).
   */
  advance(owner: string, fromBlock: bigint, nextBlock: bigint): Promise<boolean>;
  /** Gives the lease up when `owner` holds it (a no-op otherwise). */
  release(owner: string): Promise<void>;
}

/**
 * Chain events the watcher could not apply (its poison-event policy): failed runs counted per event;
 * after the allowed runs the event is parked — kept with its reason for operators — and the cursor
 * moves past it, so one event that always fails no longer holds every later one.
 */
export interface ChainEventParking {
  /** Counts one failed application of event `eventId` (the reason kept); the failures so far. */
  eventFailed(eventId: string, reason: string, at: string): Promise<number>;
  /** Parks the event: kept with `event` (its body as the webhook would carry it) and `reason`, listed for operators. Idempotent. */
  park(eventId: string, event: Record<string, unknown>, reason: string, at: string): Promise<void>;
  /** Parked events, oldest first. */
  parked(
    limit: number,
  ): Promise<Array<{ event_id: string; event: Record<string, unknown>; reason: string; attempts: number; parked_at: string }>>;
  /** An operator settled a parked event by hand: it leaves the parked list. False when it was not parked. */
  discard(eventId: string, reason: string, at: string): Promise<boolean>;
}

// ---------------------------------------------------------------- evidence archive and pinning (docs/api/evidence.md#evidence-on-ipfs)

/**
 * The service's own copy of evidence packages and DDS documents: one CARv1 file per root CID
 * (in AWS an S3 bucket, `car/<cid>.car`). Written before the stage change commits, so nothing a
 * committed CID names is ever lost; `/ipfs/{cid}` is served from it whatever the pin status.
 */
export interface EvidenceArchive {
  /**
   * Stores the CAR of `root` and, when given, each file of its directory by name (so a large file
   * can be handed out by URL). Idempotent: a root CID always names the same bytes. Rejects when the
   * store fails.
   */
  putCar(root: string, car: Uint8Array, files?: ReadonlyArray<{ path: string; bytes: Uint8Array }>): Promise<void>;
  /** The CAR of `root`, or null when it is not archived. */
  getCar(root: string): Promise<Uint8Array | null>;
  /** A short-lived URL (about 5 minutes) that GETs the exact bytes of file `path` of `root` as stored by `putCar`. */
  fileUrl(root: string, path: string): Promise<string>;
}

/** A pinning service that imports a CAR and pins its root (an S3-compatible IPFS pinning API, Kubo / IPFS Cluster `dag/import`). */
export interface CarPinner {
  /**
   * Uploads `car` and has the service pin its root. Resolves once the service answered the root
   * CID and it equals `root`. Errors: PinRootMismatchError when the service reports another root
   * (naming both CIDs); any other Error when the service refuses or cannot be reached.
   */
  pinCar(input: { root: string; car: Uint8Array; name: string; meta?: Record<string, string> }): Promise<void>;
}

/**
 * One pin job of the evidence pin queue: what to pin and where its status is recorded. `DDS` jobs
 * are only those queued before statements became private: the pinner closes them unpinned.
 */
export type EvidencePinMessage =
  | { kind: 'STAGE'; cid: string; batch_id: string; stage: Stage; history_index: number }
  | { kind: 'DDS'; cid: string; batch_id: string; dds_id: string };

/** Where pin statuses are recorded: a batch's stage-history entry, a DDS. */
export interface EvidencePinStatusStore {
  /**
   * Sets `stage_history[historyIndex].evidence_pin_status` of the batch when that entry still names
   * `cid` and is not PINNED already; false when nothing changed.
   */
  setStagePinStatus(batchId: string, historyIndex: number, cid: string, status: EvidencePinStatus, at: string): Promise<boolean>;
  /**
   * Closes the pin job of `msg` (written with the commit that named its CID): it leaves the
   * reconciliation index. Closing a closed or unknown job is a no-op.
   */
  closePinJob(msg: EvidencePinMessage, at: string): Promise<void>;
  /** Open pin jobs queued (or last re-queued) before `before` (ISO), oldest first, at most `limit`, with their re-queue count. */
  stalePinJobs(before: string, limit: number): Promise<Array<{ message: EvidencePinMessage; requeues: number }>>;
  /**
   * Marks an open job re-queued at `at` (it moves to the end of the index, its count + 1), or
   * closes it with `giveUp`; false when the job was closed meanwhile (nothing to do).
   */
  markPinJobRequeued(msg: EvidencePinMessage, at: string, opts?: { giveUp?: boolean }): Promise<boolean>;
}

// ---------------------------------------------------------------- evidence photos by upload URL (docs/api/evidence.md#evidence-photos-by-upload-url)

/** Upload records of evidence photos (the single table). Errors: StoreUnavailableError. */
export interface EvidenceUploadStore {
  /** Stores a new upload (conditional on its id being new). */
  create(upload: EvidenceUpload): Promise<void>;
  get(uploadId: string): Promise<EvidenceUpload | null>;
  /**
   * Marks the upload attached to `stage` of its batch (a conditional update: unattached, or
   * attached to this same stage already, so a retried stage update may use it again). False when
   * it is attached to another stage (nothing changed).
   */
  consume(uploadId: string, stage: Stage, at: string): Promise<boolean>;
}

/** Object storage of uploads (an S3 bucket): presigned PUTs out, bounded reads in. */
export interface EvidenceUploadObjects {
  /**
   * A presigned PUT of `key` valid `expiresInSeconds`, bound to exactly `contentType` and
   * `sizeBytes` (both signed). Returns the URL and the headers the client must send with it.
   */
  presignPut(input: {
    key: string;
    contentType: string;
    sizeBytes: number;
    expiresInSeconds: number;
  }): Promise<{ url: string; headers: Record<string, string> }>;
}

/** Reads uploaded objects back. */
export interface EvidenceUploadReader {
  /**
   * The object at `key`: null when there is none; `{sizeBytes}` without bytes when it is larger
   * than `maxBytes` (nothing more is read); else its bytes.
   */
  read(key: string, maxBytes: number): Promise<{ sizeBytes: number; bytes?: Uint8Array } | null>;
}

/** The due diligence statement of a batch, if it has one (the public trace page, docs/api/trace-page.md#public-trace-page). */
export interface DdsOfBatchReader {
  /** The batch's statement (one per batch), else null. */
  ofBatch(batchId: string): Promise<DdsRecord | null>;
}

// ---------------------------------------------------------------- anchoring (docs/api/anchoring.md#anchoring-of-the-audit-log)

/**
 * Periodic anchors of audit logs. Every audit append also writes a pending marker (the batches it
 * appended to) in the same transaction; an anchor takes the markers, commits the batches' heads,
 * and removes the markers once its transaction is mined. Errors: StoreUnavailableError.
 */
export interface AuditAnchorStore {
  /** Pending markers, oldest first, at most `limit`: their ids and the batches they name. */
  pendingMarkers(limit: number): Promise<Array<{ marker_id: string; batch_ids: string[] }>>;
  /** The current audit heads of `batchIds` (sequence number and hash of each batch's newest entry). */
  heads(batchIds: string[]): Promise<AuditHead[]>;
  /**
   * Which of `heads` a mined anchor already covers (a batch anchor stored at exactly that head),
   * as `<batch_id>#<sequence_number>` keys.
   */
  anchoredHeads(heads: AuditHead[]): Promise<Set<string>>;
  /**
   * Stale markers leave the pending index without an anchor of their own: every batch they name
   * has its current head anchored already, so their entries are covered. Idempotent.
   */
  clearStaleMarkers(markerIds: string[], at: string): Promise<void>;
  /** The anchor built and not yet settled (at most one at a time), or null. */
  openAnchor(): Promise<AuditAnchorRecord | null>;
  /**
   * Stores `anchor` with its ledger write and makes it the open anchor, in one transaction;
   * false (nothing stored) when another anchor is open.
   */
  open(anchor: AuditAnchorRecord, write: AnchorLedgerTx): Promise<boolean>;
  /**
   * The anchor was mined: every batch's anchor (with its proof) stored, the anchor's markers
   * removed, the anchor ANCHORED and no longer open. Idempotent.
   */
  finish(
    anchor: AuditAnchorRecord,
    batchAnchors: Array<BatchAnchor & { batch_id: string }>,
    mined: { tx_hash: string; block_number: number },
    at: string,
  ): Promise<void>;
  /** The anchor's transaction was refused: FAILED and no longer open (its markers stay for the next anchor). Idempotent. */
  abandon(anchorId: string, reason: string, at: string): Promise<void>;
  get(anchorId: string): Promise<AuditAnchorRecord | null>;
  /** A batch's periodic anchors, by head sequence number. */
  ofBatch(batchId: string): Promise<BatchAnchor[]>;
}
