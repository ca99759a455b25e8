/**
 * The records the service keeps (docs/api/registries.md#cooperatives-farmers-and-the-forest-check, docs/api/conventions.md#identifiers-money-and-time, docs/api/batches-and-custody.md#custody-trail). Times are ISO 8601 UTC strings with `Z`.
 * Money: `*_usd_micro` integer micro-USDC, `*_ugx` integer shillings.
 */
import type { FailureReason } from './payout-failures';

export const GRADES = ['screen18', 'screen15', 'FAQ', 'PB'] as const;
export type Grade = (typeof GRADES)[number];

export const STAGES = ['DELIVERED', 'GRADED', 'MILLED', 'WAREHOUSED', 'COMMITTED', 'EXPORTED', 'SETTLED'] as const;
export type Stage = (typeof STAGES)[number];

export const LICENCE_STATUSES = ['ACTIVE', 'EXPIRED', 'SUSPENDED'] as const;
type LicenceStatus = (typeof LICENCE_STATUSES)[number];

export interface Cooperative {
  cooperative_id: string;
  name: string;
  district: string;
  licence_status: LicenceStatus;
  /** Date `YYYY-MM-DD`. */
  licence_expires_at: string;
  manager: { name: string; email: string; phone: string };
  prices_ugx_per_kg: Record<Grade, number>;
  export_premium_ugx_per_kg: number;
  created_at: string;
  updated_at: string;
}

type GfwStatus = 'CLEAR' | 'FLAGGED' | 'PENDING';

/**
 * One change of a farmer's payout phone, as audited on the farmer: when, by whom (token subject and
 * role), the numbers masked (`maskPhone`), and whether the manager and the old number were notified.
 */
export interface PhoneChange {
  at: string;
  actor: string;
  actor_role: string;
  previous_phone: string | null;
  phone: string;
}

/**
 * One replacement of a farmer's plot (PUT /farmers/{id}/farm, docs/api/eudr.md#correcting-a-plot):
 * who, when, and the SHA-256 of the plot before and after (`farmSha256`, ./farm-geometry.ts); the plots themselves
 * are kept in the change's own record.
 */
export interface FarmChange {
  at: string;
  actor: string;
  actor_role: string;
  previous_farm_sha256: string;
  farm_sha256: string;
}

export interface Farmer {
  farmer_id: string;
  full_name: string;
  cooperative_id: string;
  /** E.164, stored in full, shown masked. */
  phone?: string;
  district: string;
  farm: {
    gps: { lat: number; lng: number };
    polygon?: { type: 'Polygon'; coordinates: number[][][] };
    area_ha: number;
    /** Geodesic area of the polygon (ha), when one is given. */
    computed_area_ha?: number | null;
  };
  gfw_status: GfwStatus;
  /** The national farmer registry's answer: PENDING while it has not answered (docs/api/registries.md#cooperatives-farmers-and-the-forest-check). */
  national_registry_status?: 'VERIFIED' | 'PENDING' | 'REJECTED';
  gfw_checked_at?: string;
  gfw_dataset?: { name: string; version: string };
  registered_at: string;
  registered_by: string;
  /** Every change of the payout phone (PATCH /farmers/{id}), oldest first: the farmer's audit of phone changes. */
  phone_changes?: PhoneChange[];
  /** When the phone was last changed (PATCH /farmers/{id}), and by whom (token subject). */
  phone_updated_at?: string;
  updated_by?: string;
  /** Every replacement of the plot (PUT /farmers/{id}/farm), oldest first. */
  farm_changes?: FarmChange[];
  /** When the plot was last replaced (PUT /farmers/{id}/farm). */
  farm_updated_at?: string;
}

type MintStatus = 'PENDING' | 'CONFIRMED' | 'FAILED';

/** Batch payment label (docs/api/batches-and-custody.md#batch-submission: INITIATED on submission, PAYMENT_CONFIRMED on settlement). */
type BatchPaymentStatus = 'INITIATED' | 'PAYMENT_CONFIRMED' | 'MANUAL_REVIEW' | 'NOT_PAYABLE';

export interface StageHistoryEntry {
  stage: Stage;
  at: string;
  actor: string;
  /** The ledger transaction (mint for DELIVERED, trace log after); null until it is signed. */
  chain_tx_hash: string | null;
  audit_log_sequence_number: string;
  evidence_ipfs_cid: string | null;
  /** Whether the evidence is pinned on IPFS yet (docs/api/evidence.md#evidence-on-ipfs); absent for DELIVERED (no evidence) and stages committed before pinning went to the background. */
  evidence_pin_status?: EvidencePinStatus;
}

/**
 * Pin status of an evidence package or a DDS (docs/api/evidence.md#evidence-on-ipfs): PENDING until the background pinner
 * has the pinning service hold it, PINNED once it does, FAILED when its last attempt failed
 * (retries continue until the pin queue's dead-letter queue; a root-CID mismatch is not retried).
 */
export type EvidencePinStatus = 'PENDING' | 'PINNED' | 'FAILED';

export interface Batch {
  batch_id: string;
  batch_year: number;
  batch_number: number;
  token_id: string;
  farmer_id: string;
  cooperative_id: string;
  weight_kg: number;
  grade: Grade;
  moisture_pct: number;
  collection_point_gps: { lat: number; lng: number };
  weight_slip_photo_url?: string;
  collector_agent_id: string;
  stage: Stage | null;
  mint_status: MintStatus;
  chain_tx_hash?: string;
  audit_seq: number;
  audit_head_hash: string;
  stage_history: StageHistoryEntry[];
  payment_status: BatchPaymentStatus;
  payment_amount_ugx: number;
  payout_seq: number;
  /** Running total of the batch's FARMER_PAYOUTs in UGX at their quoted rates (absent = 0), kept under its value. */
  farmer_payouts_ugx?: number;
  purchase_order_id?: string;
  /** Green-coffee weight after milling (the MILLED stage's `outturn_kg`), kg. */
  outturn_kg?: number;
  /**
   * The due diligence statement covering the batch (its own or its purchase order's) once the EU
   * Information System made it AVAILABLE: recorded with a DDS_AVAILABLE audit entry (docs/api/eudr.md#the-reference-on-every-batch).
   * Once that statement is withdrawn, `status` WITHDRAWN and `withdrawn_at`, recorded with a DDS_WITHDRAWN entry.
   */
  dds?: { dds_id: string; reference_number: string; verification_number: string; status?: 'WITHDRAWN'; withdrawn_at?: string };
  submitted_by: string;
  created_at: string;
  updated_at: string;
}

export const PAYOUT_REASONS = ['NET_COFFEE_PAYMENT', 'LOAN_DISBURSEMENT', 'TOP_UP', 'MANUAL'] as const;
export type PayoutReason = (typeof PAYOUT_REASONS)[number];

export const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'RETRY_1', 'RETRY_2', 'RETRY_3', 'MANUAL_REVIEW'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export interface Payout {
  /** `PAY-…` for farmer payouts, `DISB-…` for loan disbursements. */
  payment_id: string;
  payment_type: 'FARMER_PAYOUT' | 'LOAN_DISBURSEMENT';
  /** LOAN_DISBURSEMENT: the loan it pays out. */
  loan_id?: string;
  batch_id: string;
  farmer_id: string;
  cooperative_id: string;
  reason: PayoutReason;
  status: PayoutStatus;
  amount_usd_micro: number;
  /** Estimated at creation from the quote; the settled amount once COMPLETED. */
  amount_ugx: number;
  estimated_ugx: number;
  exchange_rate: string;
  quote_id?: string;
  phone: string;
  recipient_name: string;
  /** The attempt in progress, 1–4. */
  attempt: number;
  retry_count: number;
  provider_order_id?: string;
  /** The configured payout provider holding `provider_order_id` (a name of PAYOUT_PROVIDERS; docs/api/payouts.md#payout-providers-and-failover). */
  provider?: string;
  task_token?: string;
  task_token_attempt?: number;
  mobile_money_transaction_id?: string;
  /** The provider's words for the last failed attempt. */
  last_failure_reason?: string;
  /** The normalised reason of the last failed attempt (docs/api/payouts.md#failure-reasons). */
  failure_reason?: FailureReason;
  manager_notified_at?: string;
  /**
   * Set on a PENDING payout whose first order may or may not exist at the provider (the order call
   * and the look-up by reference both failed as unreachable): a retry of the same creation may
   * claim it and resume with the same reference; reconciliation adopts or removes it otherwise.
   */
  order_unknown?: boolean;
  /** FARMER_PAYOUT: the UGX (at its quoted rate) it added to its batch's running total under the batch's value. */
  counted_ugx?: number;
  /** Manual payout (POST /payments/farmer-payout): the UTC day (`YYYY-MM-DD`) whose cooperative cap it counts against. */
  manual_day?: string;
  created_at: string;
  updated_at: string;
  /** When the service recorded the settlement (COMPLETED). */
  completed_at?: string;
  /** The provider's settlement time. */
  settled_at?: string;
  /** When the farmer's SMS receipt was sent (set once, by a conditioned write; docs/operations.md#sms-receipt-to-the-farmer). */
  receipt_sms_at?: string;
  elapsed_seconds?: number;
  created_by: string;
  /** How the farmer was paid: MOBILE_MONEY (absent = MOBILE_MONEY) or CASH_AT_OFFICE (a manual review closed as paid in cash, docs/api/payouts.md#manual-review). */
  settlement_channel?: SettlementChannel;
  /** The cooperative's cash receipt, for CASH_AT_OFFICE. */
  cash_receipt_number?: string;
  /** When the cash was handed over (the cooperative's statement), for CASH_AT_OFFICE. */
  cash_paid_at?: string;
  /** Resolution retries requested so far (docs/api/payouts.md#manual-review); round r runs attempts 4r+1 … 4r+4. */
  resolution_round?: number;
  /** The last manual-review resolution: who and when. */
  resolved_by?: string;
  resolved_at?: string;
}

const SETTLEMENT_CHANNELS = ['MOBILE_MONEY', 'CASH_AT_OFFICE'] as const;
type SettlementChannel = (typeof SETTLEMENT_CHANNELS)[number];

type JobStatus = 'PENDING' | 'COMPLETE' | 'FAILED';

export interface Job {
  job_id: string;
  type: 'BATCH_SUBMISSION' | 'STAGE_CHANGE' | 'FARMER_REGISTRATION';
  status: JobStatus;
  cooperative_id: string;
  /** The batch (submissions, stage changes) … */
  batch_id?: string;
  /** … or the farmer (registrations) the job is about. */
  farmer_id?: string;
  tx_hash?: string;
  error?: { code: string; message: string };
  created_at: string;
  completed_at?: string;
}

export interface AuditEntry {
  batch_id: string;
  sequence_number: number;
  message_id: string;
  type: string;
  at: string;
  actor: string;
  payload: Record<string, unknown>;
  prev_hash: string;
  hash: string;
  /** Set on a read for an AGENT token when money, phone or transaction-id fields were left out of `payload` (not hashed; shared/domain/audit-redaction.ts). */
  payload_redacted?: true;
}

/** A ledger write (BatchToken mint or trace-log record): committed with its cause, signed once, broadcast until it lands. */
/** A ledger write of the single ledger writer: a batch's mint or trace-log record, or a vault write. */
export type LedgerTx = BatchLedgerTx | VaultLedgerTx | AnchorLedgerTx;

/** The transaction of a periodic anchor (docs/api/anchoring.md#anchoring-of-the-audit-log): `AuditAnchor.anchor(root, head_count)`. */
export interface AnchorLedgerTx extends LedgerTxState {
  kind: 'ANCHOR';
  anchor_id: string;
  /** The Merkle root of the anchor's heads (0x + 64 hex). */
  root: string;
  head_count: number;
}

/**
 * A periodic anchor (docs/api/anchoring.md#anchoring-of-the-audit-log): the audit heads it commits (one per batch written since the
 * previous anchor), the pending markers it settles, and its state — OPEN until its transaction is
 * mined (ANCHORED) or refused (FAILED: its markers stay for the next anchor).
 */
export interface AuditAnchorRecord {
  anchor_id: string;
  root: string;
  /** Each head with its proof under `root` (0x-hex sibling hashes, bottom up). */
  heads: Array<{ batch_id: string; sequence_number: number; hash: string; proof: string[] }>;
  marker_ids: string[];
  status: 'OPEN' | 'ANCHORED' | 'FAILED';
  created_at: string;
  tx_hash?: string;
  block_number?: number;
  anchored_at?: string;
  failure?: string;
}

/** What every ledger write carries: its signed transaction once signed, its state. */
interface LedgerTxState {
  ledger_tx_id: string;
  status: 'PENDING' | 'SENT' | 'CONFIRMED' | 'FAILED';
  raw_tx?: string;
  tx_hash?: string;
  nonce?: number;
  block_number?: number;
  job_id?: string;
  failure?: string;
  created_at: string;
  confirmed_at?: string;
  /** Failed attempts so far (transport failures of the ledger's endpoint are not counted) and the last one's error. */
  attempts?: number;
  last_error?: string;
  /** Set while the write is parked (it failed every allowed attempt; an operator retries or discards it). */
  parked_at?: string;
  discarded_at?: string;
}

/**
 * A write to the lending vault (see `VaultCall` in vault-calls.ts), stored with its amounts as decimal
 * strings (DynamoDB numbers cannot hold every uint256).
 */
export interface VaultLedgerTx extends LedgerTxState {
  kind: 'VAULT';
  vault_call: StoredVaultCall;
}

/** `VaultCall` as stored: bigint fields as decimal strings. */
export type StoredVaultCall =
  | { kind: 'VAULT_DEPOSIT'; ref: string; mfiId: string; assetsUsdMicro: string }
  | { kind: 'VAULT_REVERSE_DEPOSIT'; ref: string; mfiId: string; shares: string }
  | { kind: 'LOCK_COLLATERAL'; ref: string; tokenId: string; principalUsdMicro: string }
  | { kind: 'CANCEL_LOAN'; ref: string }
  | { kind: 'WRITE_OFF_LOAN'; ref: string }
  | { kind: 'REPAY_LOAN'; ref: string; purchaseOrderRef: string; amountUsdMicro: string }
  | { kind: 'REPAY_LOANS'; ref: string; repayments: { loanRef: string; amountUsdMicro: string }[] }
  | { kind: 'RELEASE_REMAINDER'; ref: string; cooperativeId: string; amountUsdMicro: string }
  | {
      kind: 'REFUND_PAYMENT';
      ref: string;
      purchaseOrderRef: string;
      to: string;
      amountUsdMicro: string;
      paymentTxHash: string;
      paymentLogIndex: number;
    };

export interface BatchLedgerTx {
  ledger_tx_id: string;
  /** MINT: the BatchToken of a submitted batch; TRACE_STAGE: the trace-log record of a stage change. */
  kind: 'MINT' | 'TRACE_STAGE';
  batch_id: string;
  token_id: string;
  stage: Stage;
  /** TRACE_STAGE only. */
  evidence_cid?: string;
  audit_hash: string;
  audit_sequence_number: number;
  /** TRACE_STAGE only: the stage-history entry that gets the transaction hash. */
  history_index?: number;
  status: 'PENDING' | 'SENT' | 'CONFIRMED' | 'FAILED';
  /** The batched transaction (`LedgerWriteGroup`) that claimed this write; its signed transaction is kept there. */
  group_id?: string;
  raw_tx?: string;
  tx_hash?: string;
  nonce?: number;
  block_number?: number;
  job_id?: string;
  failure?: string;
  created_at: string;
  confirmed_at?: string;
  attempts?: number;
  last_error?: string;
  parked_at?: string;
  discarded_at?: string;
}

/**
 * One batched ledger transaction (docs/ledger.md#the-batched-writer): the pending writes of a kind
 * it claimed (`candidates`, then `members` in record order, written with its signed transaction or
 * when members are split out), its signed transaction kept before it is broadcast, and its state —
 * CLAIMING, SEALED (members fixed apart: some split out before signing), SENT (signed and kept, with its members), SETTLED (every member confirmed or refused from the receipt).
 */
export interface LedgerWriteGroup {
  group_id: string;
  kind: 'MINT' | 'TRACE_STAGE';
  status: 'CLAIMING' | 'SEALED' | 'SENT' | 'SETTLED';
  candidates: string[];
  members?: string[];
  /** Writes split out of the group before it was signed (their record could not be built or simulated), with the reason. */
  split_out?: Array<{ ledger_tx_id: string; reason: string }>;
  raw_tx?: string;
  tx_hash?: string;
  nonce?: number;
  /** The chain's block number when the current transaction was sent (stuck detection). */
  sent_block?: number;
  /** Hashes of the transactions the current one replaced (same nonce, lower fees): whichever is mined settles the members. */
  replaced_hashes?: string[];
  block_number?: number;
  created_at: string;
  sent_at?: string;
  settled_at?: string;
}

/** An ADMIN's request to settle an order: who, when, and whether below the amount due. */
export interface SettleRequest {
  requested_by: string;
  requested_at: string;
  accept_short_payment: boolean;
}

/** A purchase order over batches of one cooperative (docs/api/batches-and-custody.md#custody-trail). */
export interface PurchaseOrder {
  purchase_order_id: string;
  /**
   * CREATING while the order worker binds a large order's batches step by step (DRAFT once all
   * are bound); RELEASING then FAILED when one of them was on another order (`creation_error`),
   * its bound batches released; CONFIRMING while a large order's batches are being confirmed step
   * by step; WITHDRAWN (stored only, never read as an order): a large order whose creation was
   * undone by the request itself, before creation moved to the order worker.
   */
  status: 'CREATING' | 'RELEASING' | 'FAILED' | 'DRAFT' | 'CONFIRMING' | 'CONFIRMED' | 'WITHDRAWN';
  cooperative_id: string;
  batch_ids: string[];
  buyer: string;
  price_usd_per_kg: number;
  buyer_operator?: { name: string; eori: string; address: string; email: string; country: string };
  /**
   * What the buyer owes, micro-USDC: Σ over its batches of the MILLED `outturn_kg` × price
   * (`amountDueUsdMicro`). Recorded at creation, or once every batch is milled.
   */
  amount_due_usd_micro?: number;
  /** The ledger address the buyer pays from; when named, payments from other addresses do not count. */
  buyer_address?: string;
  /** Sum of the payments counted toward the order (micro-USDC), kept with them in one transaction. */
  paid_usd_micro?: number;
  /** When the order's settlement was created: no payment counts after it. */
  settled_at?: string;
  /**
   * An ADMIN's request to settle a large order (POST /purchase-orders/{id}/settle), kept on the
   * order for the order worker, which starts the settlement with it: the first request is kept.
   */
  settle_request?: SettleRequest;
  created_at: string;
  created_by: string;
  confirmed_at?: string;
  /** Who confirmed the order (a large order's per-batch audit entries name them). */
  confirmed_by?: string;
  /** A large order's confirmation progress: its first `confirmed_batch_count` batches are confirmed. */
  confirmed_batch_count?: number;
  /**
   * A large order's creation progress: the first `bound_batch_count` of its batches in binding
   * order (`bindingOrder`: sorted by id) are bound to it.
   */
  bound_batch_count?: number;
  /** Why a large order's creation FAILED (RELEASING, then FAILED). */
  creation_error?: PurchaseOrderCreationError;
  /**
   * How often SETTLE work was asked for a large order (the order-work index): a settlement run
   * that read it before a later request leaves the order in the index for that request's run.
   */
  order_work_seq?: number;
  /** How often the purchase-order reconciler queued a stalled large order's work again. */
  order_work_requeues?: number;
}

/**
 * Why the creation of a large purchase order failed (docs/api/batches-and-custody.md#purchase-orders-of-many-batches):
 * BATCH_ON_ANOTHER_ORDER (`batch_id` is on another purchase order), or NOT_QUEUED (the order could
 * not be handed to the order worker; nothing was bound).
 */
export interface PurchaseOrderCreationError {
  code: 'BATCH_ON_ANOTHER_ORDER' | 'NOT_QUEUED';
  message: string;
  /** The batch that could not be bound (BATCH_ON_ANOTHER_ORDER). */
  batch_id?: string;
}

/** A batch whose mint is pending keeps the audit entry its mint carries until the receipt confirms it. */
export type PendingBatch = Batch & { pending_audit_entry?: AuditEntry };
