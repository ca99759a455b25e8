/**
 * Single-table key design. Every key is built here and nowhere else.
 *
 * | Entity              | PK                          | SK                  | GSI1PK              | GSI1SK                         |
 * |---------------------|-----------------------------|---------------------|---------------------|--------------------------------|
 * | Cooperative         | COOP#<cooperative_id>       | META                |                     |                                |
 * | Holding balance     | COOP#<cooperative_id>       | HOLDING             |                     |                                |
 * | Farmer              | FARMER#<farmer_id>          | META                | COOP#<coop>         | FARMER#<farmer_id>             |
 * | Plot change         | FARMER#<farmer_id>          | FARM_CHANGE#<at>    |                     |                                |
 * | Batch               | BATCH#<batch_id>            | META                | COOP#<coop>         | BATCH#<batch_id>               |
 * | Payout guard        | PAYOUT_GUARD#<batch>#<reason> | META              |                     |                                |
 * | Audit entry         | AUDIT#<batch_id>            | SEQ#<nnnnnnnn>      |                     |                                |
 * | Payment (payout)    | PAYMENT#<payment_id>        | META                | PAYMENTS#<batch_id> | <created_at>#<payment_id>      |
 *   GSI2 (sparse): GSI2PK OPEN_PAYOUT, GSI2SK <updated_at>#<payment_id> while a payout is not final;
 *   GSI2PK AWAITING_PAYOUT, GSI2SK <confirmed_at>#<batch_id> on a batch until its payout exists.
 * | Job                 | JOB#<job_id>                | META                |                     |                                |
 *   GSI2 (sparse): GSI2PK PENDING_NATIONAL_CHECK, GSI2SK <registered_at>#<farmer_id> on the job of a
 *   registration the national registry (MAAIF) has not answered yet, until the check is settled.
 * | Ledger write        | LEDGER_TX#<batch>-<seq>     | META                | (GSI2 OPEN_LEDGER_TX while unconfirmed)              |
 *   GSI1 (sparse) on a vault write: GSI1PK OPEN_VAULT_TX, GSI1SK <created_at>#<stored order>#<id> until
 *   the write is CONFIRMED or FAILED (a parked one keeps it: it may be retried), so the single writer
 *   finds the oldest open vault write in one read (docs/ledger.md#vault-writes-ahead-of-the-backlog).
 *   GSI2 (sparse): GSI2PK PARKED_LEDGER_TX, GSI2SK <parked_at>#<id> instead while the write is parked
 *   (it failed every allowed attempt) until an operator retries or discards it.
 *   GSI1 (sparse) on a batched write (mint, trace-log record): GSI1PK UNGROUPED_LEDGER_TX#<MINT|TRACE_STAGE>,
 *   GSI1SK <created_at>#<id> while it is PENDING, unsigned and claimed by no group (the batched writer's pending
 *   writes; a parked one keeps it, and the writer's filter leaves it out).
 * | Ledger write group  | LEDGER_GROUP#<group_id>     | META                |                     |                                |
 * | Ledger signer nonce | LEDGER_SIGNER               | META                |                     |                                |
 *   next_nonce (one past the highest kept group) and in_flight (ids of the groups sent, not settled).
 * | Purchase order      | PO#<purchase_order_id>      | META                |                     |                                |
 *   GSI2 (sparse): GSI2PK ORDER_WORK, GSI2SK <last progress at>#<purchase_order_id> while a large order has work for the
 *   order worker (CREATING, RELEASING, CONFIRMING; SETTLE work asked and not finished), so the scheduled
 *   purchase-order reconciler finds stalled ones (docs/api/batches-and-custody.md#resuming-stalled-orders).
 * | DDS                 | DDS#<dds_id>                | META                |                     |                                |
 * | DDS of a batch      | DDS_GUARD#<batch_id>        | META                |                     |                                |
 * | DDS of a PO         | DDS_GUARD_PO#<po_id>        | META                |                     |                                |
 * | Idempotency key     | IDEMPOTENCY#<op>#<sub>#<key>| META                | (TTL 24 h)          |                                |
 * | Batch counter       | COUNTER#BATCH#<yyyy>        | META                |                     |                                |
 * | Webhook receipt     | WEBHOOK#<source>#<id>       | META                |                     |                                |
 * | Loan                | LOAN#<loan_id>              | META                | FARMER_LOANS#<farmer> | <created_at>#<loan_id>       |
 *   GSI2 (sparse): GSI2PK PENDING_LOAN, GSI2SK <created_at>#<loan_id> while the loan is PENDING;
 *   GSI2PK ACTIVE_LOAN_DUE, GSI2SK <due_at>#<loan_id> while it is ACTIVE (and has a due date).
 * | Loan of a batch     | LOAN_GUARD#<batch_id>       | META                |                     |                                |
 * | Loan counter        | COUNTER#LOAN#<yyyy>         | META                |                     |                                |
 * | Settlement          | SETTLEMENT#<purchase_order> | META                |                     |                                |
 * | Buyer payment       | BUYER_PAYMENT#<purchase_order> | <tx_hash>#<log_index> |                  |                                |
 *   A purchase order's counted payments sum to the order item's `paid_usd_micro` (both written in
 *   one transaction); its `settled_at` is set in the settlement's creation transaction, so no
 *   payment counts after it.
 * | Payment (deposit)   | PAYMENT#<DEP-…>             | META                |                     |                                |
 * | Deposit counter     | COUNTER#DEPOSIT#<yyyy>      | META                |                     |                                |
 * | Chain watch cursor  | CHAIN_CURSOR#<chain_id>     | META                |                     |                                |
 * | Balance alarm state | PAYOUT_BALANCE#<provider>   | META                |                     |                                |
 *   `alarm_state` LOW or OK of a payout provider's merchant balance against PAYOUT_BALANCE_ALARM_USD
 *   (docs/operations.md#merchant-balance-alarm), changed by conditioned updates only.
 * | Evidence upload     | EVIDENCE_UPLOAD#<UPL-…>     | META                | (TTL: attach window + 1 day) |                       |
 * | Evidence pin job    | PIN_JOB#<cid>               | STAGE#<batch>#<i> or DDS#<dds_id> |       |                                |
 *   GSI2 (sparse): GSI2PK PENDING_PIN, GSI2SK <queued_at>#<cid> until pinned (or given up), for reconciliation.
 * | Unanchored marker   | UNANCHORED#<batch>#<seq>    | META                | (GSI2 UNANCHORED, <at>#<id>, until a mined anchor covers it) |
 *   Written in every audit append's transaction (one per transaction, naming its batches): the
 *   periodic anchor's work list (docs/api/anchoring.md#anchoring-of-the-audit-log). Never deleted: the anchor removes its GSI2 keys.
 * | Periodic anchor     | ANCHOR#<ANCHOR-…>           | META, PART#<nnnn>   |                     |                                |
 * | Open anchor pointer | ANCHOR_STATE                | META                |                     |                                |
 * | Anchor of a batch   | ANCHORS#<batch_id>          | SEQ#<head seq>      |                     |                                |
 *
 * Access patterns:
 * 1. get cooperative / farmer / batch / payment / job by id: GetItem on PK + META.
 * 2. next batch number of a year: UpdateItem ADD on the counter (atomic).
 * 3. one payout per batch and reason: the payout guard item, created with
 *    attribute_not_exists(PK) inside the payout's creation transaction.
 * 4. payments of a batch, oldest first, paginated: Query GSI1 PAYMENTS#<batch_id>.
 * 5. a batch's audit log in order: Query AUDIT#<batch_id> (append-only: entries are put with
 *    attribute_not_exists and the batch's audit_seq advanced in the same transaction; IAM denies
 *    Update/Delete on AUDIT# keys, and every write there to functions without `audit:append`).
 * 6. webhook replay protection: put WEBHOOK#… with attribute_not_exists in the same transaction
 *    that applies the webhook.
 * 7. farmers / batches of a cooperative: Query GSI1 COOP#<coop> (begins_with FARMER# / BATCH#); a
 *    farmer's batches (credit score): the same query filtered on farmer_id, bounded in pages.
 * 8. reconciliation: Query GSI2 OPEN_PAYOUT / AWAITING_PAYOUT / OPEN_LEDGER_TX with GSI2SK < now − threshold;
 *    registrations waiting for the national registry: Query GSI2 PENDING_NATIONAL_CHECK, oldest first.
 * 8a. stalled purchase-order work: Query GSI2 ORDER_WORK with GSI2SK < now − threshold.
 * 8b. the single writer's vault writes ahead of the backlog: Query GSI1 OPEN_VAULT_TX, oldest first.
 * 9. the only deletes: a payout that never reached the provider, with its guard (IAM allows them
 *    in PAYMENT#PAY-…, PAYMENT#DISB-… and PAYOUT_GUARD# only, never a deposit PAYMENT#DEP-…), and
 *    a loan's batch guard when the loan is repaid or cancelled (LOAN_GUARD# only); see
 *    infra/stack/needs.ts DELETABLE_PARTITIONS.
 */

export const META = 'META';
export const OPEN_PAYOUTS = 'OPEN_PAYOUT';
export const AWAITING_PAYOUT = 'AWAITING_PAYOUT';
export const OPEN_LEDGER_TX = 'OPEN_LEDGER_TX';
/** GSI1 partition prefix of batched ledger writes no group has claimed (`ungroupedLedgerTxGsi`). */
const UNGROUPED_LEDGER_TX = 'UNGROUPED_LEDGER_TX';
/** GSI1 partition of vault writes not yet confirmed nor failed, in the order they were requested. */
export const OPEN_VAULT_TX = 'OPEN_VAULT_TX';
/** GSI2 partition of parked ledger writes (failed every allowed attempt; an operator retries or discards them). */
export const PARKED_LEDGER_TX = 'PARKED_LEDGER_TX';
/** GSI2 partition of chain events the watcher parked (failed in every allowed run). */
export const PARKED_CHAIN_EVENT = 'PARKED_CHAIN_EVENT';
export const PENDING_PIN = 'PENDING_PIN';
/** GSI2 partition of audit appends not yet covered by a mined periodic anchor (docs/api/anchoring.md#anchoring-of-the-audit-log). */
export const UNANCHORED = 'UNANCHORED';
/** GSI2 partition of loans still PENDING (lock or disbursement not settled yet). */
export const PENDING_LOANS = 'PENDING_LOAN';
/** GSI2 partition of ACTIVE loans with a due date, by due date (write-offs, portfolio at risk). */
export const ACTIVE_LOANS_BY_DUE = 'ACTIVE_LOAN_DUE';
export const PENDING_NATIONAL_CHECK = 'PENDING_NATIONAL_CHECK';
/** GSI2 partition of large purchase orders with work for the order worker, by their last progress. */
export const ORDER_WORK = 'ORDER_WORK';

/** GSI1 sort-key prefix of a cooperative's farmers. */
export const FARMER_PREFIX = 'FARMER#';
/** GSI1 sort-key prefix of a cooperative's batches. */
export const BATCH_PREFIX = 'BATCH#';

/** How long inbound webhook receipts are kept for replay detection (seconds; DynamoDB TTL). */
const WEBHOOK_RECEIPT_TTL_S = 30 * 24 * 3600;

export const keys = {
  cooperative: (id: string) => ({ PK: `COOP#${id}`, SK: META }),
  holding: (coopId: string) => ({ PK: `COOP#${coopId}`, SK: 'HOLDING' }),
  /** A cooperative's running total of manual payouts on one UTC day (`YYYY-MM-DD`), kept under the daily cap. */
  manualPayoutDay: (coopId: string, day: string) => ({ PK: `COOP#${coopId}`, SK: `MANUAL_PAYOUTS#${day}` }),
  farmer: (id: string) => ({ PK: `FARMER#${id}`, SK: META }),
  /** A replacement of the farmer's plot at `at` (ISO 8601), with both plots. */
  farmChange: (id: string, at: string) => ({ PK: `FARMER#${id}`, SK: `FARM_CHANGE#${at}` }),
  farmerGsi: (coopId: string, id: string) => ({ GSI1PK: keys.cooperativePartition(coopId), GSI1SK: `${FARMER_PREFIX}${id}` }),
  /** GSI1 partition of a cooperative's farmers and batches. */
  cooperativePartition: (coopId: string) => `COOP#${coopId}`,
  batch: (id: string) => ({ PK: `BATCH#${id}`, SK: META }),
  batchGsi: (coopId: string, id: string) => ({ GSI1PK: keys.cooperativePartition(coopId), GSI1SK: `${BATCH_PREFIX}${id}` }),
  payoutGuard: (batchId: string, reason: string) => ({ PK: `PAYOUT_GUARD#${batchId}#${reason}`, SK: META }),
  audit: (batchId: string, seq: number) => ({ PK: `AUDIT#${batchId}`, SK: `SEQ#${String(seq).padStart(8, '0')}` }),
  auditPartition: (batchId: string) => `AUDIT#${batchId}`,
  payment: (id: string) => ({ PK: `PAYMENT#${id}`, SK: META }),
  paymentGsi: (batchId: string, createdAt: string, id: string) => ({ GSI1PK: `PAYMENTS#${batchId}`, GSI1SK: `${createdAt}#${id}` }),
  paymentsOfBatch: (batchId: string) => `PAYMENTS#${batchId}`,
  /** Sparse index of payouts not yet final (reconciliation); removed when COMPLETED or MANUAL_REVIEW. */
  openPayoutGsi: (updatedAt: string, id: string) => ({ GSI2PK: OPEN_PAYOUTS, GSI2SK: keys.openPayoutSortKey(updatedAt, id) }),
  /** Sort key in the open-payouts index: oldest activity first. */
  openPayoutSortKey: (updatedAt: string, id: string) => `${updatedAt}#${id}`,
  /** Sparse index of confirmed batches whose NET_COFFEE_PAYMENT payout has not been created yet. */
  awaitingPayoutGsi: (confirmedAt: string, batchId: string) => ({ GSI2PK: AWAITING_PAYOUT, GSI2SK: `${confirmedAt}#${batchId}` }),
  job: (id: string) => ({ PK: `JOB#${id}`, SK: META }),
  /** Sparse index of registrations waiting for the national registry (on their job); removed when settled. */
  pendingNationalCheckGsi: (registeredAt: string, farmerId: string) => ({
    GSI2PK: PENDING_NATIONAL_CHECK,
    GSI2SK: `${registeredAt}#${farmerId}`,
  }),
  /** A ledger write to make (the trace-log transaction of a stage change), and its signed form. */
  ledgerTx: (id: string) => ({ PK: `LEDGER_TX#${id}`, SK: META }),
  /** Sparse index of ledger writes not yet confirmed (the writer and reconciliation). */
  openLedgerTxGsi: (createdAt: string, id: string) => ({ GSI2PK: OPEN_LEDGER_TX, GSI2SK: `${createdAt}#${id}` }),
  /**
   * Sparse index of the batched writes (mints, trace-log records) pending and claimed by no group,
   * oldest first, per kind (docs/ledger.md#the-batched-writer): set when such a write is stored or
   * released, removed when a group claims it or it is signed, settled or parked.
   */
  ungroupedLedgerTxGsi: (kind: 'MINT' | 'TRACE_STAGE', createdAt: string, id: string) => ({
    GSI1PK: `${UNGROUPED_LEDGER_TX}#${kind}`,
    GSI1SK: `${createdAt}#${id}`,
  }),
  /**
   * Sparse index of open vault writes, in request order: `createdAt` (the requester's time, shared
   * by the writes of one request, e.g. a settlement's repayments and release), then `storedOrder`
   * (when this write was stored: `vaultWriteStoredOrder`), then the id.
   */
  openVaultTxGsi: (createdAt: string, storedOrder: string, id: string) => ({
    GSI1PK: OPEN_VAULT_TX,
    GSI1SK: `${createdAt}#${storedOrder}#${id}`,
  }),
  /** Sparse index of parked ledger writes, oldest parked first (operators: `npm run ledger-parked`). */
  parkedLedgerTxGsi: (parkedAt: string, id: string) => ({ GSI2PK: PARKED_LEDGER_TX, GSI2SK: `${parkedAt}#${id}` }),
  /** A batched ledger transaction and the writes it claimed (docs/ledger.md#the-batched-writer). */
  ledgerGroup: (id: string) => ({ PK: `LEDGER_GROUP#${id}`, SK: META }),
  ledgerSigner: () => ({ PK: 'LEDGER_SIGNER', SK: META }),
  purchaseOrder: (id: string) => ({ PK: `PO#${id}`, SK: META }),
  /**
   * Sparse index of large purchase orders with work for the order worker, by when their work last
   * moved (`at`, ISO): set with the work, moved by each recorded step, removed when it is done.
   */
  orderWorkGsi: (at: string, id: string) => ({ GSI2PK: ORDER_WORK, GSI2SK: `${at}#${id}` }),
  /**
   * That an order-level event (`eventKey`, e.g. `PURCHASE_ORDER_CONFIRMED#PO-…`) is in one batch's
   * audit log: put in the append's transaction with attribute_not_exists, so the entry is written once.
   */
  orderEventMark: (eventKey: string, batchId: string) => ({ PK: `ORDER_EVENT#${eventKey}`, SK: `BATCH#${batchId}` }),
  dds: (id: string) => ({ PK: `DDS#${id}`, SK: META }),
  /** An Idempotency-Key of a caller (token subject) on one operation; expires after 24 h (TTL). */
  idempotency: (scope: string, key: string) => ({ PK: `IDEMPOTENCY#${scope}#${key}`, SK: META }),
  /** One due diligence statement per batch. */
  ddsOfBatch: (batchId: string) => ({ PK: `DDS_GUARD#${batchId}`, SK: META }),
  /** One due diligence statement per purchase order (a shipment). */
  ddsOfPurchaseOrder: (poId: string) => ({ PK: `DDS_GUARD_PO#${poId}`, SK: META }),
  batchCounter: (year: number) => ({ PK: `COUNTER#BATCH#${year}`, SK: META }),
  webhook: (source: string, id: string) => ({ PK: `WEBHOOK#${source}#${id}`, SK: META }),
  /** A loan (docs/api/lending.md#loans). */
  loan: (id: string) => ({ PK: `LOAN#${id}`, SK: META }),
  /** GSI1: a farmer's loans, oldest first. */
  loanGsi: (farmerId: string, createdAt: string, id: string) => ({ GSI1PK: `FARMER_LOANS#${farmerId}`, GSI1SK: `${createdAt}#${id}` }),
  loansOfFarmer: (farmerId: string) => `FARMER_LOANS#${farmerId}`,
  /** Sparse index of PENDING loans (reconciliation), oldest first; removed when the loan leaves PENDING. */
  pendingLoanGsi: (createdAt: string, id: string) => ({ GSI2PK: PENDING_LOANS, GSI2SK: `${createdAt}#${id}` }),
  /** Sparse index of ACTIVE loans by due date (write-offs, PAR30), earliest due first; removed when the loan leaves ACTIVE. */
  activeLoanDueGsi: (dueAt: string, id: string) => ({ GSI2PK: ACTIVE_LOANS_BY_DUE, GSI2SK: `${dueAt}#${id}` }),
  /** The one PENDING or ACTIVE loan of a batch (its BatchToken is locked): created with the loan, removed when it is repaid or cancelled. */
  loanGuard: (batchId: string) => ({ PK: `LOAN_GUARD#${batchId}`, SK: META }),
  loanCounter: (year: number) => ({ PK: `COUNTER#LOAN#${year}`, SK: META }),
  /** The pending-anchor marker of one audit append (its first batch's entry), open in GSI2 until anchored. */
  anchorMarker: (id: string) => ({ PK: `UNANCHORED#${id}`, SK: META }),
  anchorMarkerGsi: (at: string, id: string) => ({ GSI2PK: UNANCHORED, GSI2SK: `${at}#${id}` }),
  /** A periodic anchor, and the parts holding its heads and markers. */
  auditAnchor: (id: string) => ({ PK: `ANCHOR#${id}`, SK: META }),
  auditAnchorPart: (id: string, n: number) => ({ PK: `ANCHOR#${id}`, SK: `PART#${String(n).padStart(4, '0')}` }),
  auditAnchorPartition: (id: string) => `ANCHOR#${id}`,
  /** Which anchor is open (built, not yet mined or refused): at most one. */
  anchorState: () => ({ PK: 'ANCHOR_STATE', SK: META }),
  /** A batch's place in a mined periodic anchor, by the head it proves. */
  batchAnchor: (batchId: string, headSeq: number) => ({ PK: `ANCHORS#${batchId}`, SK: `SEQ#${String(headSeq).padStart(8, '0')}` }),
  batchAnchorsPartition: (batchId: string) => `ANCHORS#${batchId}`,
  /** The settlement of a purchase order on its buyer payment (one per purchase order). */
  settlement: (purchaseOrderId: string) => ({ PK: `SETTLEMENT#${purchaseOrderId}`, SK: META }),
  /** A buyer payment into the vault for a purchase order (known or not), once per log: `<tx_hash>#<log_index, 6 digits>`. */
  buyerPayment: (purchaseOrderId: string, txHash: string, logIndex: number) => ({
    PK: `BUYER_PAYMENT#${purchaseOrderId}`,
    SK: `${txHash.toLowerCase()}#${String(logIndex).padStart(6, '0')}`,
  }),
  /** Partition of a purchase order's buyer payments (Query, in transaction order). */
  buyerPayments: (purchaseOrderId: string) => `BUYER_PAYMENT#${purchaseOrderId}`,
  /** The pin job of an evidence CID for one stage-history entry or DDS (written with the commit that names the CID). */
  pinJob: (cid: string, target: { batch_id: string; history_index: number } | { dds_id: string }) => ({
    PK: `PIN_JOB#${cid}`,
    SK: 'dds_id' in target ? `DDS#${target.dds_id}` : `STAGE#${target.batch_id}#${target.history_index}`,
  }),
  /** Sparse index of pin jobs not yet pinned (reconciliation re-queues the stale ones). */
  pendingPinGsi: (queuedAt: string, cid: string) => ({ GSI2PK: PENDING_PIN, GSI2SK: `${queuedAt}#${cid}` }),
  /** Next `n` of `DEP-<yyyy>-<n>` (MFI deposits; the deposit itself is keys.payment). */
  depositCounter: (year: number) => ({ PK: `COUNTER#DEPOSIT#${year}`, SK: META }),
  /** The chain watcher's block cursor and lease on one chain (shared/adapters/dynamodb/chain-cursor.ts). */
  chainCursor: (chainId: number) => ({ PK: `CHAIN_CURSOR#${chainId}`, SK: META }),
  /** The low-balance alarm state of one payout provider (docs/operations.md#merchant-balance-alarm). */
  payoutBalance: (provider: string) => ({ PK: `PAYOUT_BALANCE#${provider}`, SK: META }),
  /** A chain event the watcher failed to apply: its failed runs, and while parked GSI2 PARKED_CHAIN_EVENT <parked_at>#<event_id>. */
  chainEventFailure: (chainId: number, eventId: string) => ({ PK: `CHAIN_EVENT#${chainId}#${eventId}`, SK: META }),
  /** An evidence photo upload (docs/api/evidence.md#evidence-photos-by-upload-url; shared/adapters/dynamodb/evidence-upload-repo.ts). */
  evidenceUpload: (uploadId: string) => ({ PK: `EVIDENCE_UPLOAD#${uploadId}`, SK: META }),
};

/** Attributes that are keys or bookkeeping, stripped before an item leaves the adapter. */
const KEY_ATTRIBUTES = ['PK', 'SK', 'GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK', 'expires_at_epoch', 'entity'] as const;

/** A stored item as the record it holds: its key and bookkeeping attributes removed. */
export function fromItem<T>(item: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...item };
  for (const k of KEY_ATTRIBUTES) delete out[k];
  return out as unknown as T;
}

/** The receipt item of an inbound webhook `(source, id)` received at `at` (ISO), expiring after WEBHOOK_RECEIPT_TTL_S. */
export function webhookReceiptItem(source: string, id: string, at: string): Record<string, unknown> {
  return {
    ...keys.webhook(source, id),
    entity: 'WEBHOOK',
    source,
    received_at: at,
    expires_at_epoch: Math.floor(Date.parse(at) / 1000) + WEBHOOK_RECEIPT_TTL_S,
  };
}
