/**
 * `OnRamp` over a fiat on-ramp's HTTP API (MFI deposits, docs/api/lending.md#mfi-deposits): the MFI pays fiat
 * (UGX, KES, USD) to the on-ramp, which delivers USDC to a destination address on the ledger. The
 * same client talks to the real on-ramp and to the local sandbox (`infra/local/onramp-sandbox.ts`).
 *
 * Protocol (v1, JSON):
 * - Auth on every request: `Authorization: Bearer <api_key>` plus the HMAC request signature of
 *   the payout provider's API (`X-Timestamp`, `X-Signature: v1=<hex HMAC-SHA256(api_secret,
 *   "<timestamp>.<METHOD>.<path with query>.<body>")>`, ±5 minutes; `../payout-provider/signing.ts`).
 * - `POST /v1/onramp/orders` with `Idempotency-Key: <reference>`, body `{reference,
 *   source: {currency, amount}, destination: {network: "evm", address}, asset: "USDC"}` → 201 a new
 *   order, 200 the existing order of that reference (so a retried create never makes a second order).
 * - `GET /v1/onramp/orders/{ramp_payment_id}` → 200 the order, 404 `ORDER_NOT_FOUND`.
 * - Order: `{ramp_payment_id, reference, status: PENDING|COMPLETED|FAILED|REVERSED, source:
 *   {currency, amount}, destination: {network, address}, asset: "USDC", usdc_amount (decimal string,
 *   6 decimals; "0" until COMPLETED), rate (source units per USD, decimal string), transfer_tx_hash,
 *   failure_reason, created_at, completed_at, reversed_at}`.
 * - Errors: `{error: {code, message, details?}}` — 400 VALIDATION_ERROR, 401, 404, 422 business
 *   rejection (e.g. UNSUPPORTED_CURRENCY, AMOUNT_TOO_SMALL).
 * - Webhooks (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`, under the
 *   `whsec_` secret ONRAMP_WEBHOOK_SECRET) to `POST /api/webhooks/onramp`:
 *   `{type: "onramp.order.completed" | "onramp.order.reversed", data: {ramp_payment_id, reference,
 *   source_currency, source_amount, usdc_amount, transfer_tx_hash, completed_at, reversed_at}}`.
 *   A webhook is a claim: the service confirms it with `GET /v1/onramp/orders/{id}` first.
 *
 * Timeouts and retries: the shared policy (`runtime/retry.ts`) — retried only while unreachable
 * (network error, timeout, 5xx, 429), `attempts` in total, then `ProviderUnavailableError` (503).
 * Any other 4xx is the on-ramp's answer: `ProviderRejectedError("<CODE>: <message>")`, except 404
 * on a look-up (null). A 2xx with a malformed body throws `OnRampProtocolError`.
 */
import type { Hex } from 'viem';
import type { OnRamp, OnRampOrder } from '../../domain/ports/lending';
import { ProviderRejectedError, ProviderUnavailableError } from '../../domain/errors';
import { decimalStringToMicro } from '../../domain/money';
import { signedJsonAttempt } from '../payout-provider/signed-request';
import { UnreachableError, unreachableRetryPolicy, type UnreachableRetryPolicy } from '../../runtime/retry';

/** Configuration of {@link HttpOnRamp}. */
export interface HttpOnRampConfig {
  /** Base URL, e.g. `https://api.onramp.example` or `http://127.0.0.1:4020` (a path prefix is kept). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** Per-attempt timeout in ms (default 5000). */
  timeoutMs?: number;
  /** Total attempts per call while unreachable (default 3). */
  attempts?: number;
  /** Wait before the second attempt in ms, doubled after each further failure (default 200). */
  backoffMs?: number;
  log?: (line: string) => void;
}

/** A response from the on-ramp that does not match its documented shape. */
class OnRampProtocolError extends Error {
  constructor(message: string) {
    super(`Unexpected on-ramp response: ${message}`);
    this.name = 'OnRampProtocolError';
  }
}

const STATUSES: readonly OnRampOrder['status'][] = ['PENDING', 'COMPLETED', 'FAILED', 'REVERSED'];

function str(v: unknown, field: string): string {
  if (typeof v !== 'string' || v === '') throw new OnRampProtocolError(`${field} is not a non-empty string`);
  return v;
}

function optStr(v: unknown, field: string): string | undefined {
  return v === undefined || v === null ? undefined : str(v, field);
}

/** Maps the on-ramp's order JSON to the port's `OnRampOrder`. @throws OnRampProtocolError on a malformed order. */
function toOnRampOrder(raw: unknown): OnRampOrder {
  if (typeof raw !== 'object' || raw === null) throw new OnRampProtocolError('order is not an object');
  // biome-ignore lint/suspicious/noExplicitAny: an outside system's JSON, every field read here is checked before use
  const o = raw as Record<string, any>;
  const status = o.status as OnRampOrder['status'];
  if (!STATUSES.includes(status)) throw new OnRampProtocolError(`unknown order status ${JSON.stringify(o.status)}`);
  const amount = o.source?.amount;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0)
    throw new OnRampProtocolError('source.amount is not a positive integer');
  const address = str(o.destination?.address, 'destination.address');
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new OnRampProtocolError('destination.address is not an address');
  let usdc: number;
  try {
    usdc = decimalStringToMicro(o.usdc_amount);
  } catch (e) {
    throw new OnRampProtocolError(`usdc_amount: ${(e as Error).message}`);
  }
  if (usdc < 0) throw new OnRampProtocolError('usdc_amount is negative');
  const order: OnRampOrder = {
    ramp_payment_id: str(o.ramp_payment_id, 'ramp_payment_id'),
    reference: str(o.reference, 'reference'),
    status,
    source_currency: str(o.source?.currency, 'source.currency'),
    source_amount: amount,
    usdc_amount_usd_micro: usdc,
    destination_address: address as Hex,
  };
  const optional = {
    transfer_tx_hash: o.transfer_tx_hash,
    failure_reason: o.failure_reason,
    completed_at: o.completed_at,
    reversed_at: o.reversed_at,
  };
  for (const [k, v] of Object.entries(optional)) {
    const s = optStr(v, k);
    if (s !== undefined) (order as unknown as Record<string, string>)[k] = s;
  }
  return order;
}

function rejectionReason(status: number, body: unknown): string {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return `${typeof e?.code === 'string' ? e.code : `HTTP_${status}`}: ${typeof e?.message === 'string' ? e.message : `HTTP ${status}`}`;
}

/** HTTP adapter of the fiat on-ramp (see the module comment for the protocol). */
export class HttpOnRamp implements OnRamp {
  private readonly base: URL;
  private readonly retries: UnreachableRetryPolicy;

  /** @throws TypeError on an invalid `baseUrl`, missing credentials or a bad retry setting. */
  constructor(private readonly config: HttpOnRampConfig) {
    this.base = new URL(config.baseUrl);
    if (!config.apiKey || !config.apiSecret) throw new TypeError('HttpOnRamp: apiKey and apiSecret are required');
    this.retries = unreachableRetryPolicy({
      attempts: config.attempts ?? 3,
      backoffMs: config.backoffMs ?? 200,
      timeoutMs: config.timeoutMs ?? 5000,
    });
  }

  /**
   * Creates the order for `reference` (or returns the one that reference already has): the MFI's
   * fiat `source_amount` of `source_currency` (whole units) converted to USDC delivered to
   * `destination_address`. @throws RangeError on a non-positive/non-integer amount;
   * ProviderUnavailableError; ProviderRejectedError
   */
  async createOrder(input: {
    reference: string;
    source_currency: string;
    source_amount: number;
    destination_address: Hex;
  }): Promise<OnRampOrder> {
    if (!Number.isSafeInteger(input.source_amount) || input.source_amount <= 0)
      throw new RangeError('createOrder: source_amount must be a positive integer');
    const body = {
      reference: input.reference,
      source: { currency: input.source_currency, amount: input.source_amount },
      destination: { network: 'evm', address: input.destination_address },
      asset: 'USDC',
    };
    const answer = await this.request('POST', '/v1/onramp/orders', body, { 'Idempotency-Key': input.reference });
    if (answer.status !== 200 && answer.status !== 201) throw new ProviderRejectedError(rejectionReason(answer.status, answer.body));
    return toOnRampOrder(answer.body);
  }

  /** The order with the on-ramp's id, or null when unknown. @throws ProviderUnavailableError; ProviderRejectedError */
  async getOrder(rampPaymentId: string): Promise<OnRampOrder | null> {
    const answer = await this.request('GET', `/v1/onramp/orders/${encodeURIComponent(rampPaymentId)}`);
    if (answer.status === 404) return null;
    if (answer.status !== 200) throw new ProviderRejectedError(rejectionReason(answer.status, answer.body));
    return toOnRampOrder(answer.body);
  }

  private async request(
    method: 'GET' | 'POST',
    path: string,
    json?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown }> {
    const prefix = this.base.pathname.replace(/\/+$/, '');
    const url = new URL(prefix + path, this.base.origin);
    const { attempts } = this.retries;
    return this.retries
      .execute(
        (signal) =>
          signedJsonAttempt({
            url,
            method,
            path,
            json,
            extraHeaders,
            apiKey: this.config.apiKey,
            apiSecret: this.config.apiSecret,
            signal,
            protocolError: (m) => new OnRampProtocolError(m),
          }),
        (failure, n) => this.config.log?.(`on-ramp ${method} ${path}: attempt ${n}/${attempts} failed (${failure.problem})`),
      )
      .catch((err: unknown) => {
        if (!(err instanceof UnreachableError)) throw err;
        throw new ProviderUnavailableError(
          `The fiat on-ramp is unreachable after ${attempts} attempt${attempts === 1 ? '' : 's'} (${method} ${path}: ${err.problem}); a retry is safe.`,
        );
      });
  }
}
