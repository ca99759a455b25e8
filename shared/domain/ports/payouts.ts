/**
 * Ports: Farmer payouts: the payout provider's order API, the payout stores, the payout lifecycle state machine and
 * the payout-request queue (docs/api/payouts.md).
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

import type { PayoutFailure } from '../payout-failures';
import type { PayoutCreationLimits } from '../payout-limits';
import type { Payout, PayoutReason } from '../records';

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
  /** A FAILED order: why, normalised by the adapter from the provider's code, with the provider's words. */
  failure?: PayoutFailure;
  created_at: string;
  /** Which configured provider holds the order (a name of PAYOUT_PROVIDERS), when several are configured. */
  provider?: string;
}

export interface CreateProviderOrderInput {
  reference: string;
  quote_id?: string;
  amount_usd_micro: number;
  /** UGX per USD quoted when the payout was created: a provider paying out of a pre-funded UGX wallet converts at it. */
  exchange_rate?: string;
  recipient: { phone: string; name: string };
  /** The configured provider that already holds an order under `reference` (a repeated attempt): only it is asked. */
  provider?: string;
}

/**
 * The provider's account-holder lookup of a mobile-money number: not a wallet (`found: false`), or a
 * wallet and its holder's name as the operator registered it (`name: null` when the provider does
 * not disclose it).
 */
export type AccountHolder = { found: false } | { found: true; name: string | null };

/**
 * One currency of the provider's merchant balance (what it can still pay out): `amount_minor` is
 * micro-USD (6 decimals) for USD and whole shillings for UGX (docs/operations.md#merchant-balance-alarm).
 */
export interface MerchantBalance {
  currency: 'USD' | 'UGX';
  amount_minor: number;
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
  /** The account holder of `phone` (E.164), before an order is placed (docs/api/payouts.md#recipient-name-check). */
  lookupAccountHolder(phone: string): Promise<AccountHolder>;
}

/** One payout provider's merchant account, read by the balance monitor (each provider apart, never behind failover). */
export interface MerchantBalanceReader {
  /** The merchant balance, one entry per currency the provider holds for us (docs/operations.md#merchant-balance-alarm). */
  merchantBalance(): Promise<MerchantBalance[]>;
}

/** Reading the provider's orders only (e.g. to confirm a webhook); same errors as PayoutProvider. */
export type PayoutOrderReader = Pick<PayoutProvider, 'findOrderByReference'>;

/** What a settlement or failure report did. */
export type ApplyOutcome = 'APPLIED' | 'DUPLICATE_WEBHOOK' | 'IGNORED';

/** A settlement as the provider reports it (webhook or order read). */
export interface SettlementFacts {
  attempt: number;
  order_id: string;
  /** The configured provider that settled the order (a name of PAYOUT_PROVIDERS), when known. */
  provider?: string;
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
  /** PENDING → PROCESSING with the provider order (and the configured provider holding it, when named). */
  markProcessing(
    payout: Payout,
    order: { order_id: string; amount_ugx: number; exchange_rate: string; provider?: string },
    at: string,
  ): Promise<Payout>;
  /** The first order was rejected: FAILED (`failure_reason` = failure.reason, `last_failure_reason` = failure.detail), so the check decides retry or manual review. */
  markFirstOrderRejected(payout: Payout, failure: PayoutFailure, at: string): Promise<Payout>;
  /** Registers attempt N and its task token; returns the payout when the attempt cannot start (null when registered). */
  registerAttempt(payoutId: string, attempt: number, token: string, at: string): Promise<Payout | null>;
  /** The order of attempt N (and the configured provider holding it, when named), while the payout is on that attempt. */
  setAttemptOrder(payoutId: string, attempt: number, orderId: string, provider?: string): Promise<void>;
  /** COMPLETED with the settlement facts, audit entry and webhook receipt in one transaction. */
  recordSettlement(payout: Payout, s: SettlementFacts, at: string, webhook?: WebhookRef): Promise<ApplyOutcome>;
  /** FAILED for `attempt` with its normalised `failure_reason` and the provider's words, once; same replay and ordering rules as recordSettlement. */
  recordFailure(payout: Payout, attempt: number, failure: PayoutFailure, at: string, webhook?: WebhookRef): Promise<ApplyOutcome>;
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

/**
 * The low-balance alarm state per payout provider (docs/operations.md#merchant-balance-alarm), so the
 * ops notification goes out once per crossing below the threshold, not at every reading. Each
 * change is one conditioned write: two monitors running at once cannot both notify.
 */
export interface PayoutBalanceAlarmStore {
  /**
   * OK (or never recorded) → LOW at `at`, with the reading (micro-USD). True when this call made the
   * change (the caller notifies); false when the provider was already LOW.
   */
  markLow(provider: string, at: string, balanceUsdMicro: number): Promise<boolean>;
  /** LOW since `at` → OK again (a notification that could not be sent is retried at the next reading). */
  undoLow(provider: string, at: string): Promise<void>;
  /** LOW → OK at `at` (the balance is back at or above the threshold). True when this call made the change. */
  markOk(provider: string, at: string, balanceUsdMicro: number): Promise<boolean>;
}

/**
 * Receipts sent to farmers for completed payouts (docs/operations.md#sms-receipt-to-the-farmer):
 * a conditioned mark on the payout, so a redelivered change never sends a second SMS.
 */
export interface PayoutReceiptStore {
  /**
   * Marks the COMPLETED payout's receipt as sent at `at`, on the condition that it is COMPLETED and
   * has no receipt mark. True when this call set it (the caller sends the SMS).
   */
  claimReceipt(payoutId: string, at: string): Promise<boolean>;
  /** Removes the mark set at `at` (the SMS could not be sent; the next delivery of the change tries again). */
  releaseReceipt(payoutId: string, at: string): Promise<void>;
}

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
 * Payout-request queue: start the NET_COFFEE_PAYMENT payout of a confirmed batch (`batch_id`), or
 * the LOAN_DISBURSEMENT of a loan whose BatchToken is locked (`loan_id`).
 */
export type PayoutRequestMessage = { batch_id: string; loan_id?: undefined } | { loan_id: string; batch_id?: undefined };
