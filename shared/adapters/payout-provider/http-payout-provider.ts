/**
 * `PayoutProvider` over the provider's HTTP API (docs/api/payouts.md#payout-lifecycle): rate quotes, idempotent order
 * creation, order look-up. The same client talks to the real provider and to the local sandbox
 * (`infra/local/payout-sandbox.ts`).
 *
 * Every request is authenticated with `Authorization: Bearer <api_key>` and signed
 * (`signing.ts`). Money crosses the wire as decimal strings (USD, up to 6 decimals) and integer UGX;
 * it is converted with big.js, never with binary floats.
 */
import type {
  AccountHolder,
  CreateProviderOrderInput,
  MerchantBalance,
  MerchantBalanceReader,
  PayoutProvider,
  ProviderOrder,
  ProviderOrderStatus,
  RateQuote,
} from '../../domain/ports/payouts';
import { ProviderRejectedError, ProviderUnavailableError } from '../../domain/errors';
import type { FailureReason, PayoutFailure } from '../../domain/payout-failures';
import { signedJsonAttempt } from './signed-request';
import { decimalStringToMicro as decimalUsdToMicro, microToDecimalString as microUsdToDecimal } from '../../domain/money';
import { UnreachableError, unreachableRetryPolicy, type UnreachableRetryPolicy } from '../../runtime/retry';

/** Configuration of {@link HttpPayoutProvider}. */
export interface HttpPayoutProviderConfig {
  /** Base URL, e.g. `https://api.provider.example` or `http://127.0.0.1:4010` (a path prefix is kept). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** Per-attempt timeout in ms, covering connect, response and body (default 5000). */
  timeoutMs?: number;
  /** Total attempts per call when the provider is unreachable (default 3). */
  attempts?: number;
  /** Wait before the second attempt in ms, doubling after each further failure (default 200). */
  backoffMs?: number;
  /** Optional diagnostic sink (one line per retry). */
  log?: (line: string) => void;
}

/** A quote as returned by this adapter: the port's `RateQuote` plus the quoted amounts, when the provider gave them. */
export interface ProviderRateQuote extends RateQuote {
  /** Quoted USD side, integer micro-USD. */
  amount_usd_micro?: number;
  /** Quoted UGX side, integer shillings (= floor(USD × rate)). */
  amount_ugx?: number;
}

/** A response from the provider that does not match its documented shape. */
class ProviderProtocolError extends Error {
  constructor(message: string) {
    super(`Unexpected payout provider response: ${message}`);
    this.name = 'ProviderProtocolError';
  }
}

interface HttpAnswer {
  status: number;
  body: unknown;
}

/**
 * This provider's error codes (in an error answer's `error.code`, or before the colon of an order's
 * `failure_reason`) mapped to the normalised reasons (docs/api/payouts.md#failure-reasons); any other
 * code is PROVIDER_ERROR.
 */
const FAILURE_CODES: Readonly<Record<string, FailureReason>> = {
  INSUFFICIENT_FUNDS: 'INSUFFICIENT_BALANCE',
  INSUFFICIENT_BALANCE: 'INSUFFICIENT_BALANCE',
  INVALID_MSISDN: 'INVALID_MSISDN',
  INVALID_PHONE: 'INVALID_MSISDN',
  RECIPIENT_NOT_A_WALLET: 'INVALID_MSISDN',
  RECIPIENT_NAME_MISMATCH: 'RECIPIENT_NAME_MISMATCH',
  WALLET_LIMIT_EXCEEDED: 'WALLET_LIMIT_EXCEEDED',
  RECIPIENT_LIMIT_EXCEEDED: 'WALLET_LIMIT_EXCEEDED',
};

/** The normalised failure of this provider's `CODE: message` text. */
export function providerFailure(detail: string): PayoutFailure {
  const code = /^([A-Z0-9_]+)(?::|$)/.exec(detail.trim())?.[1] ?? '';
  return { reason: FAILURE_CODES[code] ?? 'PROVIDER_ERROR', detail };
}

function rejected(answer: HttpAnswer): ProviderRejectedError {
  const detail = rejectionReason(answer);
  return new ProviderRejectedError(detail, providerFailure(detail).reason);
}

function rejectionReason(answer: HttpAnswer): string {
  const e = (answer.body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const code = typeof e?.code === 'string' ? e.code : `HTTP_${answer.status}`;
  const message = typeof e?.message === 'string' ? e.message : `HTTP ${answer.status}`;
  return `${code}: ${message}`;
}

const STATUSES: readonly ProviderOrderStatus[] = ['PENDING', 'SETTLED', 'FAILED'];

function str(v: unknown, field: string): string {
  if (typeof v !== 'string' || v === '') throw new ProviderProtocolError(`${field} is not a non-empty string`);
  return v;
}

function optStr(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  return str(v, field);
}

function intUgx(v: unknown, field: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new ProviderProtocolError(`${field} is not a whole UGX amount`);
  return n;
}

/** Maps the provider's order JSON to our `ProviderOrder`. @throws ProviderProtocolError on a malformed order. */
export function toProviderOrder(raw: unknown): ProviderOrder {
  if (typeof raw !== 'object' || raw === null) throw new ProviderProtocolError('order is not an object');
  // biome-ignore lint/suspicious/noExplicitAny: an outside system's JSON, every field read here is checked before use
  const o = raw as Record<string, any>;
  const status = o.status as ProviderOrderStatus;
  if (!STATUSES.includes(status)) throw new ProviderProtocolError(`unknown order status ${JSON.stringify(o.status)}`);
  let amountUsdMicro: number;
  try {
    amountUsdMicro = decimalUsdToMicro(o.deposit?.amount);
  } catch (e) {
    throw new ProviderProtocolError(`deposit.amount: ${(e as Error).message}`);
  }
  const order: ProviderOrder = {
    order_id: str(o.order_id, 'order_id'),
    reference: str(o.reference, 'reference'),
    status,
    amount_usd_micro: amountUsdMicro,
    amount_ugx: intUgx(o.payout?.amount, 'payout.amount'),
    exchange_rate: str(typeof o.exchange_rate === 'number' ? String(o.exchange_rate) : o.exchange_rate, 'exchange_rate'),
    recipient: { phone: str(o.recipient?.phone, 'recipient.phone'), name: str(o.recipient?.name, 'recipient.name') },
    created_at: str(o.created_at, 'created_at'),
  };
  const txId = optStr(o.mobile_money_transaction_id, 'mobile_money_transaction_id');
  const settledAt = optStr(o.settled_at, 'settled_at');
  const failure = status === 'FAILED' ? (optStr(o.failure_reason, 'failure_reason') ?? 'order failed') : undefined;
  if (txId !== undefined) order.mobile_money_transaction_id = txId;
  if (settledAt !== undefined) order.settled_at = settledAt;
  if (failure !== undefined) order.failure = providerFailure(failure);
  return order;
}

/**
 * HTTP adapter for the payout provider.
 *
 * Retries only when the provider is unreachable (connection refused/reset, timeout, HTTP 5xx or
 * 429), up to `attempts` in total with doubling backoff (the shared policy, `runtime/retry.ts`),
 * each attempt limited to `timeoutMs`, then throws `ProviderUnavailableError`.
 * Any other 4xx is the provider's answer and throws `ProviderRejectedError("<CODE>: <message>")` at
 * once, except 404 on a look-up, which yields `null`. `createOrder` sends `Idempotency-Key:
 * <reference>`, so its retries never create a second order. A 2xx with a malformed body throws
 * `ProviderProtocolError`.
 */
export class HttpPayoutProvider implements PayoutProvider, MerchantBalanceReader {
  private readonly base: URL;
  private readonly apiKey: string;
  private readonly apiSecret: string;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly retries: UnreachableRetryPolicy;
  private readonly log?: (line: string) => void;

  /** @throws TypeError on an invalid `baseUrl`, missing credentials, non-positive `attempts`/`timeoutMs` or a negative `backoffMs`. */
  constructor(config: HttpPayoutProviderConfig) {
    this.base = new URL(config.baseUrl);
    if (!config.apiKey || !config.apiSecret) throw new TypeError('HttpPayoutProvider: apiKey and apiSecret are required');
    this.apiKey = config.apiKey;
    this.apiSecret = config.apiSecret;
    this.timeoutMs = config.timeoutMs ?? 5000;
    this.attempts = config.attempts ?? 3;
    this.backoffMs = config.backoffMs ?? 200;
    if (!Number.isInteger(this.attempts) || this.attempts < 1) throw new TypeError('HttpPayoutProvider: attempts must be an integer ≥ 1');
    this.retries = unreachableRetryPolicy({ attempts: this.attempts, backoffMs: this.backoffMs, timeoutMs: this.timeoutMs });
    this.log = config.log;
  }

  /**
   * Asks for a USD→UGX quote. Give the USD side (`amount_usd_micro`, integer micro-USD) or the UGX
   * side (`amount_ugx`, integer shillings), or neither for the bare rate.
   * @returns quote id, `rate` (decimal string, UGX per USD), expiry (ISO UTC) and the quoted amounts
   * @throws RangeError on a non-integer amount or both amounts given; ProviderUnavailableError; ProviderRejectedError
   */
  async quote(input: { amount_usd_micro?: number; amount_ugx?: number }): Promise<ProviderRateQuote> {
    const body: Record<string, string> = { source_currency: 'USD', target_currency: 'UGX' };
    if (input.amount_usd_micro !== undefined && input.amount_ugx !== undefined) {
      throw new RangeError('quote: give amount_usd_micro or amount_ugx, not both');
    }
    if (input.amount_usd_micro !== undefined) {
      if (!Number.isSafeInteger(input.amount_usd_micro) || input.amount_usd_micro <= 0)
        throw new RangeError('quote: amount_usd_micro must be a positive integer');
      body.source_amount = microUsdToDecimal(input.amount_usd_micro);
    }
    if (input.amount_ugx !== undefined) {
      if (!Number.isSafeInteger(input.amount_ugx) || input.amount_ugx <= 0)
        throw new RangeError('quote: amount_ugx must be a positive integer');
      body.target_amount = String(input.amount_ugx);
    }
    const answer = await this.request('POST', '/v1/quotes', body);
    if (answer.status !== 200 && answer.status !== 201) throw rejected(answer);
    const q = answer.body as Record<string, unknown> | null;
    if (!q || typeof q !== 'object') throw new ProviderProtocolError('quote is not an object');
    const rate = str(q.rate, 'rate');
    if (!/^\d+(\.\d+)?$/.test(rate)) throw new ProviderProtocolError(`rate is not a decimal: ${rate}`);
    const out: ProviderRateQuote = { quote_id: str(q.quote_id, 'quote_id'), rate, expires_at: str(q.expires_at, 'expires_at') };
    if (q.source_amount !== undefined && q.source_amount !== null) {
      try {
        out.amount_usd_micro = decimalUsdToMicro(q.source_amount as string);
      } catch (e) {
        throw new ProviderProtocolError(`source_amount: ${(e as Error).message}`);
      }
    }
    if (q.target_amount !== undefined && q.target_amount !== null) out.amount_ugx = intUgx(q.target_amount, 'target_amount');
    return out;
  }

  /**
   * Creates (or, for a reference already used, returns) the order paying `amount_usd_micro` from the
   * merchant USD balance to the recipient's mobile-money wallet in UGX.
   * @returns the order (status PENDING when new)
   * @throws RangeError on a non-positive/non-integer amount; ProviderUnavailableError; ProviderRejectedError
   */
  async createOrder(input: CreateProviderOrderInput): Promise<ProviderOrder> {
    if (!Number.isSafeInteger(input.amount_usd_micro) || input.amount_usd_micro <= 0) {
      throw new RangeError('createOrder: amount_usd_micro must be a positive integer');
    }
    const body: Record<string, unknown> = {
      reference: input.reference,
      ...(input.quote_id !== undefined ? { quote_id: input.quote_id } : {}),
      deposit: { channel: 'MERCHANT_BALANCE', currency: 'USD', amount: microUsdToDecimal(input.amount_usd_micro) },
      payout: { channel: 'MOBILE_MONEY', currency: 'UGX' },
      recipient: { phone: input.recipient.phone, name: input.recipient.name },
    };
    const answer = await this.request('POST', '/v1/orders', body, { 'Idempotency-Key': input.reference });
    if (answer.status !== 200 && answer.status !== 201) throw rejected(answer);
    return toProviderOrder(answer.body);
  }

  /** The order with the provider's id, or `null` when unknown. @throws ProviderUnavailableError; ProviderRejectedError */
  async getOrder(orderId: string): Promise<ProviderOrder | null> {
    return this.lookUp(`/v1/orders/${encodeURIComponent(orderId)}`);
  }

  /** The order created with our reference, or `null` when none. @throws ProviderUnavailableError; ProviderRejectedError */
  async findOrderByReference(reference: string): Promise<ProviderOrder | null> {
    return this.lookUp(`/v1/orders?reference=${encodeURIComponent(reference)}`);
  }

  /**
   * The account-holder lookup (`GET /v1/recipients?phone=`): 404 → not a wallet; 200 → the holder's
   * name, or null when the provider does not disclose it.
   * @throws ProviderUnavailableError; ProviderRejectedError; ProviderProtocolError on a malformed answer
   */
  async lookupAccountHolder(phone: string): Promise<AccountHolder> {
    const answer = await this.request('GET', `/v1/recipients?phone=${encodeURIComponent(phone)}`);
    if (answer.status === 404) return { found: false };
    if (answer.status !== 200) throw rejected(answer);
    const holder = (answer.body as { account_holder?: { name?: unknown } | null } | null)?.account_holder;
    if (holder === undefined) throw new ProviderProtocolError('account_holder is missing');
    return { found: true, name: holder === null ? null : str(holder.name, 'account_holder.name') };
  }

  /**
   * The merchant balance (`GET /v1/balances` → `{balances: [{currency, amount}]}`): USD amounts are
   * decimal strings (up to 6 decimals) returned in micro-USD, UGX amounts whole shillings; other
   * currencies are left out.
   * @throws ProviderUnavailableError; ProviderRejectedError; ProviderProtocolError on a malformed answer
   */
  async merchantBalance(): Promise<MerchantBalance[]> {
    const answer = await this.request('GET', '/v1/balances');
    if (answer.status !== 200) throw rejected(answer);
    const list = (answer.body as { balances?: unknown } | null)?.balances;
    if (!Array.isArray(list)) throw new ProviderProtocolError('balances is not an array');
    const out: MerchantBalance[] = [];
    for (const [i, raw] of list.entries()) {
      const b = raw as { currency?: unknown; amount?: unknown } | null;
      if (b?.currency === 'USD') {
        try {
          out.push({ currency: 'USD', amount_minor: decimalUsdToMicro(b.amount as string) });
        } catch (e) {
          throw new ProviderProtocolError(`balances[${i}].amount: ${(e as Error).message}`);
        }
      } else if (b?.currency === 'UGX') out.push({ currency: 'UGX', amount_minor: intUgx(b.amount, `balances[${i}].amount`) });
    }
    return out;
  }

  private async lookUp(path: string): Promise<ProviderOrder | null> {
    const answer = await this.request('GET', path);
    if (answer.status === 404) return null;
    if (answer.status !== 200) throw rejected(answer);
    return toProviderOrder(answer.body);
  }

  /** One logical call: signed, with retries on unreachability. Returns any non-retryable answer. */
  private async request(
    method: 'GET' | 'POST',
    path: string,
    json?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<HttpAnswer> {
    const prefix = this.base.pathname.replace(/\/+$/, '');
    const url = new URL(prefix + path, this.base.origin);
    return this.retries
      .execute(
        (signal) =>
          signedJsonAttempt({
            url,
            method,
            path,
            json,
            extraHeaders,
            apiKey: this.apiKey,
            apiSecret: this.apiSecret,
            signal,
            protocolError: (m) => new ProviderProtocolError(m),
          }),
        (failure, n, attempts) => this.log?.(`payout provider ${method} ${path}: attempt ${n}/${attempts} failed (${failure.problem})`),
      )
      .catch((err: unknown) => {
        if (!(err instanceof UnreachableError)) throw err;
        throw new ProviderUnavailableError(
          `The payout provider is unreachable after ${this.attempts} attempt${this.attempts === 1 ? '' : 's'} (${method} ${path}: ${err.problem}); a retry with the same reference is safe.`,
        );
      });
  }
}
