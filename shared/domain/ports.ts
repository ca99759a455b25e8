/**
 * Ports: the interfaces the use cases need from the outside world. Adapters in
 * `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

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
  /** Broadcasts a kept signed transaction again (same bytes, same hash). */
  rebroadcast(rawTx: Hex, txHash: Hex): Promise<void>;
  /** Waits up to `timeoutMs` for the receipt; `null` when it is not there by then. */
  waitForReceipt(txHash: Hex, timeoutMs: number): Promise<LedgerReceipt | null>;
}

/** Custody stages as the trace log numbers them (DELIVERED=0 … SETTLED=6). */
export type LedgerStage = 'DELIVERED' | 'GRADED' | 'MILLED' | 'WAREHOUSED' | 'COMMITTED' | 'EXPORTED' | 'SETTLED';

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

// ---------------------------------------------------------------- others

/** Publishes a notification (SNS in AWS) with string message attributes. */
export interface Notifier {
  publish(input: { subject: string; message: string; attributes: Record<string, string> }): Promise<{ messageId: string }>;
}

/** Sends a message to a work queue (SQS). */
export interface WorkQueue<T> {
  send(body: T, opts?: { delaySeconds?: number; deduplicationId?: string }): Promise<void>;
}

/** Result of a forest check of a farm location (decisions §3, §9). */
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

/** Wall clock, injectable for tests. */
export interface Clock {
  now(): Date;
}
