import type { PayoutOrderReader, ProviderOrder } from '../../domain/ports/payouts';
import { ProviderRejectedError, ProviderUnavailableError } from '../../domain/errors';
import { fetchAttempt } from '../../runtime/http-client';
import { UnreachableError } from '../../runtime/retry';
import { toProviderOrder } from './http-payout-provider';
import { signProviderRequest } from './signing';

/**
 * Reads the payout provider's orders (the same signed API as {@link HttpPayoutProvider}) with ONE
 * attempt of at most `timeoutMs` (default 5000) and no retry loop: for callers whose own caller
 * retries, such as the settlement webhook (503 → the provider resends). It leaves out the order
 * creation and the shared retry policy, so a bundle that only reads orders stays small.
 * Errors: `ProviderUnavailableError` (network failure, timeout, 5xx, 429); `ProviderRejectedError`
 * (another 4xx than 404); `ProviderProtocolError` (a 200 that is not an order). 404 → null.
 */
export class HttpPayoutOrderReader implements PayoutOrderReader {
  private readonly base: URL;

  /** @throws TypeError on an invalid `baseUrl` or missing credentials. */
  constructor(private readonly config: { baseUrl: string; apiKey: string; apiSecret: string; timeoutMs?: number }) {
    this.base = new URL(config.baseUrl);
    if (!config.apiKey || !config.apiSecret) throw new TypeError('HttpPayoutOrderReader: apiKey and apiSecret are required');
  }

  /** The order created with our reference, or `null` when none. */
  findOrderByReference(reference: string): Promise<ProviderOrder | null> {
    return this.lookUp(`/v1/orders?reference=${encodeURIComponent(reference)}`);
  }

  private async lookUp(path: string): Promise<ProviderOrder | null> {
    const url = new URL(this.base.pathname.replace(/\/+$/, '') + path, this.base.origin);
    const headers = {
      Authorization: `Bearer ${this.config.apiKey}`,
      Accept: 'application/json',
      ...signProviderRequest({ secret: this.config.apiSecret, method: 'GET', path: url.pathname + url.search, body: '' }),
    };
    let answer: { res: Response; text: string };
    try {
      answer = await fetchAttempt(fetch, url, { method: 'GET', headers, signal: AbortSignal.timeout(this.config.timeoutMs ?? 5000) });
    } catch (err) {
      if (!(err instanceof UnreachableError)) throw err;
      throw new ProviderUnavailableError(`The payout provider is unreachable (GET ${path}: ${err.problem}).`);
    }
    if (answer.res.status === 404) return null;
    let body: unknown = null;
    try {
      body = answer.text === '' ? null : JSON.parse(answer.text);
    } catch {
      body = null;
    }
    if (answer.res.status !== 200) {
      const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
      throw new ProviderRejectedError(
        `${typeof e?.code === 'string' ? e.code : `HTTP_${answer.res.status}`}: ${typeof e?.message === 'string' ? e.message : `HTTP ${answer.res.status}`}`,
      );
    }
    return toProviderOrder(body);
  }
}
