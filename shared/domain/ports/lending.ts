/**
 * Ports: Lending (docs/api/lending.md): the vault on the ledger, the price feed, the fiat on-ramp, loans, MFI
 * deposits, vault writes and the settlement of purchase orders on their buyer payments.
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { Hex } from 'viem';
import type { BuyerPayment, Deposit, DepositStatus, Loan, LoanStatus, PriceFeedSnapshot, Settlement } from '../lending';
import type { SettleRequest, VaultLedgerTx } from '../records';
import type { VaultCall } from '../vault-calls';

/** The vault side of the ledger: writes as kept signed transactions (see `Ledger`). Errors: LedgerUnavailableError. */
export interface VaultLedger {
  /**
   * Signs (next nonce), keeps, then sends `call`. Simulated first: a call the vault refuses is still
   * sent (with a fixed gas, so the chain records the refusal) — unless `unlessRefused`: then nothing
   * is signed and LedgerRefusedError (the vault's error as `reason`) is thrown.
   */
  vaultCallKept(
    call: VaultCall,
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
    opts?: { unlessRefused?: boolean },
  ): Promise<{ txHash: Hex }>;
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
  /**
   * REPAY_LOAN / REPAY_LOANS: each repayment's outcome, in log order (LoanRepaid → repaid with
   * principal + interest; RepaymentSkipped → not repaid, with the vault's error name as `reason`).
   */
  repayments?: { loanId: string; repaid: boolean; amountUsdMicro?: bigint; reason?: string }[];
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
  /** The loans holding the guards of `batchIds` (PENDING or ACTIVE), in their order, null where none: batched reads. */
  activeForBatches(batchIds: readonly string[]): Promise<Array<Loan | null>>;
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
  /**
   * Open vault writes (PENDING or SENT, not parked), in the order they were requested (oldest
   * first), at most `limit`: what the single writer lands ahead of the backlog
   * (docs/ledger.md#vault-writes-ahead-of-the-backlog). May lag a write's latest state by a moment.
   */
  openVaultWrites(limit: number): Promise<VaultLedgerTx[]>;
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
   * The audit fan-out of an order above one transaction's size (the order worker's work; `start`
   * and `recordPayment` are then given no batches): every batch gets each of the order's
   * payments' BUYER_PAYMENT_RECEIVED entry and the settlement's SETTLEMENT_STARTED entry, each
   * batch once per entry (after a crash half-way, the rest). A payment or settlement whose fan-out
   * finished is marked (`audit_complete`, `start_audit_complete`) and skipped from then on.
   */
  completeOrderAudits(purchaseOrderId: string, batchIds: string[]): Promise<void>;
  /**
   * Records a step of a large order's settled batches: `settled_batch_count` from → to, on
   * condition that it is `from` (absent counts as 0), so a step done twice counts once. False when
   * another run recorded it first.
   */
  recordSettledProgress(purchaseOrderId: string, from: number, to: number): Promise<boolean>;
  /** A large order's settlement: its vault writes are requested (`writes_requested`), once. */
  markWritesRequested(purchaseOrderId: string): Promise<void>;
  /**
   * A run of the order worker takes a large order's settlement to carry it out, until `until`
   * (ISO), on condition that no other run holds it (none does, its hold ended before `now`, or it
   * is this run's). False when another run holds it.
   */
  claimRun(purchaseOrderId: string, runId: string, now: string, until: string): Promise<boolean>;
  /** Ends this run's hold (nothing when another run holds it). */
  releaseRun(purchaseOrderId: string, runId: string): Promise<void>;
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
   * Keeps an ADMIN's request to settle a large order on the order (`settle_request`; a request
   * kept before stays) and its SETTLE work marked in the order-work index (`OrderWorkIndex.markSettleWork`,
   * the same write), on condition that the order is CONFIRMED and not settled. False when it
   * is not (settled meanwhile). Errors: StoreUnavailableError.
   */
  requestSettlement(purchaseOrderId: string, request: SettleRequest): Promise<boolean>;
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
