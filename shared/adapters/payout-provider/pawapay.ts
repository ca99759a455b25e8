/**
 * `PayoutProvider` over the pawaPay Merchant API v2 (docs/api/payouts.md#pawapay). pawaPay is a
 * mobile-money aggregator; in Uganda it pays out to MTN MoMo (`MTN_MOMO_UGA`) and Airtel Money
 * (`AIRTEL_OAPI_UGA`), the two rails our farmers use. The same client talks to pawaPay's sandbox or
 * production API and to the local sandbox (`infra/local/pawapay-sandbox.ts`).
 *
 * pawaPay's documentation, as followed here:
 *  - authentication, a Bearer API token: https://docs.pawapay.io/using_the_api
 *  - initiate payout `POST /v2/payouts`: https://docs.pawapay.io/v2/api-reference/payouts/initiate-payout
 *  - check payout status `GET /v2/payouts/{payoutId}`: https://docs.pawapay.io/v2/api-reference/payouts/check-payout-status
 *  - payout callback: https://docs.pawapay.io/v2/api-reference/payouts/payout-callback
 *  - predict provider `POST /v2/predict-provider`: https://docs.pawapay.io/v2/api-reference/toolkit/predict-provider
 *  - wallet balances `GET /v2/wallet-balances`: https://docs.pawapay.io/v2/api-reference/finances/wallet-balances
 *  - failure codes: https://docs.pawapay.io/v2/docs/failure_codes
 *  - signatures (RFC 9421) of callbacks: https://docs.pawapay.io/v2/docs/signatures
 *
 * Idempotency: pawaPay's key is the client-chosen UUID `payoutId` (a repeated `POST /v2/payouts`
 * with the same one answers DUPLICATE_IGNORED and creates nothing). Our payout reference
 * `<payout_id>-A<attempt>` maps to it deterministically ({@link pawaPayPayoutId}, a UUIDv5), so a
 * retry, a repeated attempt or a failover under the same reference can never make a second payout.
 * The reference, the USD amount and the rate travel in the payout's `metadata` and come back on
 * every status read, which is how an order found at pawaPay is tied to our payout.
 *
 * Money: pawaPay pays out of the merchant's pre-funded UGX wallet, amounts as decimal strings in
 * UGX (whole shillings here: UGX has no minor unit in mobile money). The UGX of an order is the
 * payout's USD at the rate quoted when the payout was created (`exchange_rate`), else at the
 * configured rate (PAWAPAY_USD_UGX_RATE, what the cooperative converts at when it funds the wallet).
 *
 * Name check: pawaPay offers no account-holder name lookup. `lookupAccountHolder` asks
 * predict-provider (is the number a Ugandan MTN or Airtel number?) and answers `{found: true,
 * name: null}`, so the recipient name check is skipped on this rail; a number that is not a wallet
 * fails at payout time with RECIPIENT_NOT_FOUND (INVALID_MSISDN, not retried).
 */
import { createHash } from 'node:crypto';
import Big from 'big.js';
import { ProviderRejectedError, ProviderUnavailableError } from '../../domain/errors';
import { ugxForMicro } from '../../domain/money';
import type { FailureReason, PayoutFailure } from '../../domain/payout-failures';
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
import { fetchAttempt } from '../../runtime/http-client';
import { UnreachableError, unreachableRetryPolicy, type UnreachableRetryPolicy } from '../../runtime/retry';

/** Configuration of {@link PawaPayProvider}. */
export interface PawaPayConfig {
  /** `https://api.sandbox.pawapay.io`, `https://api.pawapay.io` or the local sandbox's URL. */
  baseUrl: string;
  /** The API token from the pawaPay dashboard. */
  apiToken: string;
  /** UGX per 1 USD (decimal string) when the payout carries no quoted rate. */
  usdUgxRate: string;
  /** Per-attempt timeout, ms (default 5000). */
  timeoutMs?: number;
  /** Attempts per call while pawaPay is unreachable (default 3). */
  attempts?: number;
  /** Wait before the second attempt, ms (default 200), doubling after. */
  backoffMs?: number;
  fetchImpl?: typeof fetch;
  log?: (line: string) => void;
}

/** UUID namespace of our payout references at pawaPay (fixed: changing it would orphan every payout in flight). */
const PAYOUT_ID_NAMESPACE = '6f1c2a9e-3b7d-5c41-9e8a-0d4f5b6a7c81';

/**
 * The pawaPay `payoutId` of a payout reference: the UUIDv5 (RFC 9562 §5.5, SHA-1) of `reference` in
 * PAYOUT_ID_NAMESPACE. Deterministic, so the reference's order is found and never duplicated.
 */
export function pawaPayPayoutId(reference: string): string {
  const ns = Buffer.from(PAYOUT_ID_NAMESPACE.replace(/-/g, ''), 'hex');
  const h = createHash('sha1').update(ns).update(reference, 'utf8').digest().subarray(0, 16);
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * pawaPay's failure codes (`failureReason.failureCode` of a rejected initiation or a FAILED payout)
 * mapped to the normalised reasons (docs/api/payouts.md#failure-reasons); any other code is PROVIDER_ERROR
 * (retried).
 */
const FAILURE_CODES: Readonly<Record<string, FailureReason>> = {
  PAWAPAY_WALLET_OUT_OF_FUNDS: 'INSUFFICIENT_BALANCE',
  INSUFFICIENT_BALANCE: 'INSUFFICIENT_BALANCE',
  RECIPIENT_NOT_FOUND: 'INVALID_MSISDN',
  INVALID_PHONE_NUMBER: 'INVALID_MSISDN',
  INVALID_RECIPIENT_FORMAT: 'INVALID_MSISDN',
  RECIPIENT_NOT_ALLOWED_TO_RECEIVE: 'WALLET_LIMIT_EXCEEDED',
  AMOUNT_OUT_OF_BOUNDS: 'WALLET_LIMIT_EXCEEDED',
};

/** The normalised failure of a pawaPay `failureReason` object. */
export function pawaPayFailure(raw: unknown): PayoutFailure {
  const f = (raw ?? {}) as { failureCode?: unknown; failureMessage?: unknown };
  const code = typeof f.failureCode === 'string' ? f.failureCode : 'UNSPECIFIED_FAILURE';
  const message = typeof f.failureMessage === 'string' ? f.failureMessage : 'payout failed';
  return { reason: FAILURE_CODES[code] ?? 'PROVIDER_ERROR', detail: `${code}: ${message}` };
}

/** pawaPay's payout statuses as our order statuses: only COMPLETED and FAILED are final. */
const STATUS: Readonly<Record<string, ProviderOrderStatus>> = {
  ACCEPTED: 'PENDING',
  ENQUEUED: 'PENDING',
  SUBMITTED: 'PENDING',
  PROCESSING: 'PENDING',
  IN_RECONCILIATION: 'PENDING',
  COMPLETED: 'SETTLED',
  FAILED: 'FAILED',
};

/** A pawaPay answer that does not match its documented shape. */
class PawaPayProtocolError extends Error {
  constructor(message: string) {
    super(`Unexpected pawaPay response: ${message}`);
    this.name = 'PawaPayProtocolError';
  }
}

/** The metadata fields this service puts on a payout (pawaPay gives them back as one object). */
interface OurMetadata {
  reference: string;
  amountUsdMicro: string;
  exchangeRate: string;
}

/**
 * Maps a pawaPay payout (the `data` of a status answer, or a callback body) to our ProviderOrder.
 * @throws PawaPayProtocolError when it is malformed or lacks our metadata (not one of our payouts)
 */
function pawaPayOrder(raw: unknown): ProviderOrder {
  // biome-ignore lint/suspicious/noExplicitAny: an outside system's JSON; every field read here is checked
  const o = (raw ?? {}) as Record<string, any>;
  const status = STATUS[o.status as string];
  if (!status) throw new PawaPayProtocolError(`unknown payout status ${JSON.stringify(o.status)}`);
  if (typeof o.payoutId !== 'string') throw new PawaPayProtocolError('payoutId is missing');
  const meta = (o.metadata ?? {}) as Partial<OurMetadata>;
  if (typeof meta.reference !== 'string' || !/^\d+$/.test(String(meta.amountUsdMicro)) || typeof meta.exchangeRate !== 'string')
    throw new PawaPayProtocolError(`payout ${o.payoutId} carries no reference, amountUsdMicro and exchangeRate metadata`);
  if (typeof o.amount !== 'string' || !/^\d+(\.\d{1,2})?$/.test(o.amount)) throw new PawaPayProtocolError('amount is not a decimal string');
  const phone = o.recipient?.accountDetails?.phoneNumber;
  const order: ProviderOrder = {
    order_id: o.payoutId,
    reference: meta.reference,
    status,
    amount_usd_micro: Number(meta.amountUsdMicro),
    amount_ugx: Number(new Big(o.amount).round(0, Big.roundDown).toFixed(0)),
    exchange_rate: meta.exchangeRate,
    recipient: { phone: typeof phone === 'string' ? `+${phone}` : '', name: '' },
    created_at: typeof o.created === 'string' ? o.created : new Date(0).toISOString(),
  };
  if (typeof o.providerTransactionId === 'string') order.mobile_money_transaction_id = o.providerTransactionId;
  if (status === 'FAILED') order.failure = pawaPayFailure(o.failureReason);
  return order;
}

/**
 * The pawaPay v2 payout adapter (see the module comment). Retries only while pawaPay is unreachable
 * (network error, timeout, 5xx, 429: the shared policy of runtime/retry.ts), then throws
 * ProviderUnavailableError; a documented rejection throws ProviderRejectedError with the normalised
 * reason; a malformed answer throws PawaPayProtocolError.
 */
export class PawaPayProvider implements PayoutProvider, MerchantBalanceReader {
  private readonly base: URL;
  private readonly retries: UnreachableRetryPolicy;
  private readonly fetchImpl: typeof fetch;

  /** @throws TypeError on a bad URL, a missing token or a rate that is not a positive decimal. */
  constructor(private readonly config: PawaPayConfig) {
    this.base = new URL(config.baseUrl);
    if (!config.apiToken) throw new TypeError('PawaPayProvider: apiToken is required');
    if (!/^\d+(\.\d+)?$/.test(config.usdUgxRate) || new Big(config.usdUgxRate).lte(0))
      throw new TypeError(`PawaPayProvider: usdUgxRate must be a positive decimal, got ${JSON.stringify(config.usdUgxRate)}`);
    this.retries = unreachableRetryPolicy({
      attempts: config.attempts ?? 3,
      backoffMs: config.backoffMs ?? 200,
      timeoutMs: config.timeoutMs ?? 5000,
    });
    this.fetchImpl = config.fetchImpl ?? fetch;
  }

  /**
   * The rate this rail converts at (pawaPay itself quotes no FX: it pays out of a UGX wallet): the
   * configured rate, quote id `pawapay-rate-<rate>`, valid for 15 minutes.
   */
  async quote(_input: { amount_usd_micro?: number; amount_ugx?: number }): Promise<RateQuote> {
    return {
      quote_id: `pawapay-rate-${this.config.usdUgxRate}`,
      rate: this.config.usdUgxRate,
      expires_at: new Date(Date.now() + 15 * 60_000).toISOString(),
    };
  }

  /**
   * `POST /v2/payouts` with payoutId = pawaPayPayoutId(reference), the UGX amount, the recipient's
   * number and its predicted provider (MTN or Airtel Uganda). ACCEPTED/ENQUEUED: the order, PENDING;
   * DUPLICATE_IGNORED: the existing order as pawaPay holds it; REJECTED: ProviderRejectedError.
   * @throws RangeError on a non-positive amount; ProviderUnavailableError; ProviderRejectedError
   */
  async createOrder(input: CreateProviderOrderInput): Promise<ProviderOrder> {
    if (!Number.isSafeInteger(input.amount_usd_micro) || input.amount_usd_micro <= 0)
      throw new RangeError('createOrder: amount_usd_micro must be a positive integer');
    const rate = input.exchange_rate ?? this.config.usdUgxRate;
    const ugx = ugxForMicro(input.amount_usd_micro, rate);
    if (ugx <= 0) throw new RangeError('createOrder: the amount is less than 1 UGX');
    const predicted = await this.predict(input.recipient.phone);
    if (!predicted) throw new ProviderRejectedError('INVALID_PHONE_NUMBER: not a Ugandan mobile-money number', 'INVALID_MSISDN');
    const payoutId = pawaPayPayoutId(input.reference);
    const answer = await this.call('POST', '/v2/payouts', {
      payoutId,
      amount: String(ugx),
      currency: 'UGX',
      recipient: { type: 'MMO', accountDetails: { phoneNumber: predicted.phoneNumber, provider: predicted.provider } },
      customerMessage: 'Coffee payout',
      metadata: [{ reference: input.reference }, { amountUsdMicro: String(input.amount_usd_micro) }, { exchangeRate: rate }],
    });
    if (answer.status !== 200) throw this.rejected(answer);
    const body = answer.body as { status?: unknown; failureReason?: unknown; created?: unknown };
    if (body.status === 'REJECTED') {
      const f = pawaPayFailure(body.failureReason);
      throw new ProviderRejectedError(f.detail, f.reason);
    }
    if (body.status === 'DUPLICATE_IGNORED') {
      const existing = await this.getOrder(payoutId);
      if (!existing) throw new PawaPayProtocolError(`payout ${payoutId} answered DUPLICATE_IGNORED but is not found`);
      return existing;
    }
    if (body.status !== 'ACCEPTED' && body.status !== 'ENQUEUED')
      throw new PawaPayProtocolError(`unknown initiation status ${JSON.stringify(body.status)}`);
    return {
      order_id: payoutId,
      reference: input.reference,
      status: 'PENDING',
      amount_usd_micro: input.amount_usd_micro,
      amount_ugx: ugx,
      exchange_rate: rate,
      recipient: { phone: input.recipient.phone, name: input.recipient.name },
      created_at: typeof body.created === 'string' ? body.created : new Date().toISOString(),
    };
  }

  /** `GET /v2/payouts/{payoutId}`: the order, or null when pawaPay answers NOT_FOUND. */
  async getOrder(orderId: string): Promise<ProviderOrder | null> {
    const answer = await this.call('GET', `/v2/payouts/${encodeURIComponent(orderId)}`);
    if (answer.status === 404) return null;
    if (answer.status !== 200) throw this.rejected(answer);
    const body = answer.body as { status?: unknown; data?: unknown };
    if (body.status === 'NOT_FOUND') return null;
    if (body.status !== 'FOUND') throw new PawaPayProtocolError(`unknown lookup status ${JSON.stringify(body.status)}`);
    return pawaPayOrder(body.data);
  }

  /** The order of our `reference` (its payoutId is derived from it), or null. */
  findOrderByReference(reference: string): Promise<ProviderOrder | null> {
    return this.getOrder(pawaPayPayoutId(reference));
  }

  /**
   * predict-provider: a Ugandan MTN or Airtel number is `{found: true, name: null}` (pawaPay discloses
   * no holder name, so the name check is skipped on this rail); a number it cannot place in Uganda is `{found: false}`.
   */
  async lookupAccountHolder(phone: string): Promise<AccountHolder> {
    return (await this.predict(phone)) ? { found: true, name: null } : { found: false };
  }

  /** `GET /v2/wallet-balances?country=UGA`: the UGX wallet(s), whole shillings (summed when pawaPay keeps one per operator). */
  async merchantBalance(): Promise<MerchantBalance[]> {
    const answer = await this.call('GET', '/v2/wallet-balances?country=UGA');
    if (answer.status !== 200) throw this.rejected(answer);
    const balances = (answer.body as { balances?: unknown }).balances;
    if (!Array.isArray(balances)) throw new PawaPayProtocolError('balances is not a list');
    let ugx = new Big(0);
    let seen = false;
    for (const b of balances as { currency?: unknown; balance?: unknown }[]) {
      if (b.currency !== 'UGX') continue;
      if (typeof b.balance !== 'string' || !/^-?\d+(\.\d+)?$/.test(b.balance)) throw new PawaPayProtocolError('balance is not a decimal');
      ugx = ugx.plus(b.balance);
      seen = true;
    }
    return seen ? [{ currency: 'UGX', amount_minor: Number(ugx.round(0, Big.roundDown).toFixed(0)) }] : [];
  }

  /** predict-provider for `phone`: its operator and sanitised number when it is an MTN or Airtel Uganda number, else null. */
  private async predict(phone: string): Promise<{ provider: string; phoneNumber: string } | null> {
    const answer = await this.call('POST', '/v2/predict-provider', { phoneNumber: phone });
    if (answer.status === 400) return null;
    if (answer.status !== 200) throw this.rejected(answer);
    const p = answer.body as { country?: unknown; provider?: unknown; phoneNumber?: unknown };
    if (p.country !== 'UGA' || typeof p.provider !== 'string' || typeof p.phoneNumber !== 'string') return null;
    return { provider: p.provider, phoneNumber: p.phoneNumber };
  }

  private rejected(answer: { status: number; body: unknown }): ProviderRejectedError {
    const f = pawaPayFailure(
      (answer.body as { failureReason?: unknown } | null)?.failureReason ?? { failureCode: `HTTP_${answer.status}` },
    );
    return new ProviderRejectedError(f.detail, f.reason);
  }

  /** One logical call with the Bearer token, retried while pawaPay is unreachable. */
  private async call(method: 'GET' | 'POST', path: string, json?: unknown): Promise<{ status: number; body: unknown }> {
    const url = new URL(this.base.pathname.replace(/\/+$/, '') + path, this.base.origin);
    const headers: Record<string, string> = { Authorization: `Bearer ${this.config.apiToken}`, Accept: 'application/json' };
    if (json !== undefined) headers['Content-Type'] = 'application/json';
    try {
      return await this.retries.execute(
        async (signal) => {
          const { res, text } = await fetchAttempt(this.fetchImpl, url, {
            method,
            headers,
            ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
            signal,
          });
          let body: unknown = null;
          try {
            body = text === '' ? null : JSON.parse(text);
          } catch {
            if (res.status === 200) throw new PawaPayProtocolError(`${method} ${path}: the body is not JSON`);
          }
          return { status: res.status, body };
        },
        (failure, n, attempts) => this.config.log?.(`pawaPay ${method} ${path}: attempt ${n}/${attempts} failed (${failure.problem})`),
      );
    } catch (err) {
      if (!(err instanceof UnreachableError)) throw err;
      throw new ProviderUnavailableError(
        `pawaPay is unreachable (${method} ${path}: ${err.problem}); a retry with the same reference is safe.`,
        err,
      );
    }
  }
}
