/**
 * Ports: Batches and their custody trail: the batch store (audit log, jobs) and stage changes with their ledger
 * writes (docs/api/batches-and-custody.md).
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { AuditEntry, Batch, BatchLedgerTx, Job, LedgerTx, PendingBatch, PurchaseOrder, Stage, StageHistoryEntry } from '../records';

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
  /** Minted batches of `batchIds` in their order, null where none: batched reads (BatchGetItem), for a large order's steps. */
  getMany(batchIds: readonly string[]): Promise<Array<Batch | null>>;
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

/** Custody trail writes: stage changes with their ledger writes, and purchase orders (docs/api/batches-and-custody.md#custody-trail). */
/**
 * A message of the order work queue (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): the
 * per-batch work of a purchase order above one transaction's size, done by the order worker off
 * the request path. CONFIRM: confirm its batches from `confirmed_batch_count` on; SETTLE: its
 * payments' and settlement's audit fan-out, the settlement's vault writes, and its batches
 * recorded SETTLED from `settled_batch_count` on; CREATE: bind its batches from `bound_batch_count`
 * on (or release them after a failed binding). Any of them may arrive any number of times.
 */
export interface OrderWorkMessage {
  purchase_order_id: string;
  work: 'CREATE' | 'CONFIRM' | 'SETTLE';
}

/** A large order in the order-work index whose work has not moved since `moved_at` (ISO). */
export interface StalledOrder {
  purchase_order_id: string;
  /** CREATING or RELEASING: CREATE work; CONFIRMING: CONFIRM work; any other: SETTLE work. */
  status: PurchaseOrder['status'];
  moved_at: string;
  /** How often the reconciler has queued its work again so far. */
  requeues: number;
}

/**
 * The index of large purchase orders with work for the order worker
 * (docs/api/batches-and-custody.md#resuming-stalled-orders). CREATE and CONFIRM work are in it
 * from the write that begins them to the write that finishes them (the custody store's own writes
 * move it with each recorded step); SETTLE work is marked here.
 */
export interface OrderWorkIndex {
  /** SETTLE work asked for a large order (before its message is queued): in the index from `at`, its mark counted. */
  markSettleWork(id: string, at: string): Promise<void>;
  /** A SETTLE run's work moved at `at` (false when the order is not in the index). */
  touchWork(id: string, at: string): Promise<boolean>;
  /**
   * A SETTLE run found nothing left: the order leaves the index, on condition that no CREATE or
   * CONFIRM work holds it (CREATING, RELEASING, CONFIRMING: their last write removes it) and no
   * SETTLE work was marked since the run read the order (`seq`: its `order_work_seq` then).
   */
  finishSettleWork(id: string, seq: number | undefined): Promise<boolean>;
  /** Up to `limit` orders whose work last moved before `before` (ISO), longest stalled first. */
  stalled(before: string, limit: number): Promise<StalledOrder[]>;
  /**
   * Records that the work of `order` is queued again at `at` (its progress moved to `at`, the
   * re-queues counted), on condition that it has not moved since it was read: false when it has.
   */
  requeued(order: StalledOrder, at: string): Promise<boolean>;
}

/** What one step of a large order's creation found (`bindPurchaseOrderStep`). */
export type BindStepResult =
  /** The step's batches are bound and `bound_batch_count` advanced (DRAFT after the last step). */
  | { kind: 'BOUND' }
  /** Another run recorded this step first (or the order is no longer CREATING): nothing written. */
  | { kind: 'ALREADY' }
  /** This batch of the step is on another purchase order: nothing of the step written. */
  | { kind: 'CONFLICT'; batch_id: string };

export interface CustodyStore {
  /**
   * Commits a stage change: stage, history, audit entry and the trace-log write to make, in one
   * transaction conditional on the stage it moves from; `outturnKg` (MILLED) is kept on the batch
   * as its green-coffee weight. `head`: the batch as just read (its audit head), used instead of
   * reading it again; a stale one only costs a second attempt. Errors: StageConflictError.
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
    head?: Batch;
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
  /**
   * An order of at most ORDER_TRANSACTION_MAX_BATCHES batches: puts it DRAFT and binds its batches,
   * one transaction; `heads`, the batches as just read in `batch_ids` order, are bound on instead
   * of read again (a stale one is read anew). Errors: VALIDATION_ERROR when a batch is on another
   * purchase order already.
   */
  createPurchaseOrder(po: PurchaseOrder, heads?: readonly Batch[]): Promise<void>;
  /**
   * An order above one transaction's size: put CREATING with `bound_batch_count` 0 (on condition
   * that the id is new); its batches are bound later, step by step (`bindPurchaseOrderStep`).
   */
  beginPurchaseOrderCreation(po: PurchaseOrder): Promise<void>;
  /**
   * One step of a CREATING order's creation, one transaction: `step` (the order's batches in
   * binding order from `from`) bound to the order, each with its PURCHASE_ORDER_CREATED audit
   * entry, on condition that none is on a purchase order, and `bound_batch_count` from → from +
   * step length (DRAFT when that is every batch), on condition that the order is CREATING at
   * `from`. `heads`: the step's batches as just read (null: read it), used instead of reading them again.
   */
  bindPurchaseOrderStep(
    po: PurchaseOrder,
    from: number,
    step: readonly string[],
    heads: readonly (Batch | null)[],
  ): Promise<BindStepResult>;
  /**
   * CREATING at `boundCount` → RELEASING with `creation_error`; false when the order was not so
   * (another run moved it first).
   */
  failPurchaseOrderCreation(id: string, boundCount: number, error: NonNullable<PurchaseOrder['creation_error']>): Promise<boolean>;
  /**
   * A RELEASING order's bound batches (`bound`) each get PURCHASE_ORDER_WITHDRAWN (once) and are
   * released (only from this order), then the order is FAILED. Idempotent: safe to run again after a crash.
   */
  releasePurchaseOrderBatches(po: PurchaseOrder, bound: readonly string[]): Promise<void>;
  getPurchaseOrder(id: string): Promise<PurchaseOrder | null>;
  /** DRAFT → CONFIRMED (false when it was confirmed already). */
  confirmPurchaseOrder(po: PurchaseOrder, actor: string, at: string): Promise<boolean>;
  /**
   * An order above one transaction's size: DRAFT → CONFIRMING (confirmed_at, confirmed_by,
   * confirmed_batch_count 0), conditioned on DRAFT; returns the order as it now is.
   */
  beginPurchaseOrderConfirmation(po: PurchaseOrder, actor: string, at: string): Promise<PurchaseOrder>;
  /**
   * One batch's PURCHASE_ORDER_CONFIRMED audit entry, written once however often the step runs.
   * `head`: the batch as just read (a batched read), used instead of reading it again (stale: read
   * anew). Returns the entry appended now, or null when the batch had it already.
   */
  confirmPurchaseOrderBatch(po: PurchaseOrder, batchId: string, head?: Batch): Promise<AuditEntry | null>;
  /**
   * `confirmed_batch_count` from → to (CONFIRMED when `complete`), conditioned on CONFIRMING at
   * `from`; false when another call recorded that step first.
   */
  recordConfirmationProgress(id: string, from: number, to: number, complete: boolean): Promise<boolean>;
}
