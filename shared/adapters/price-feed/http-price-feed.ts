/**
 * The coffee price feed from a published HTTP source (docs/api/lending.md#price-feed): `GET <PRICE_FEED_URL>`
 * with `Accept: application/json` (and `Authorization: Bearer <PRICE_FEED_TOKEN>` when a token is
 * configured) answering 200 with the document of ./price-feed-document.ts:
 * `{updated_at, usd_per_kg: {screen18, screen15, FAQ, PB}}`.
 *
 * Retries only while the source is unreachable (network error, timeout, HTTP 5xx or 429), under the
 * shared policy (shared/runtime/retry.ts); any other status or a malformed document fails at once.
 * A good answer is cached for at most `cacheSeconds` (default 60) per container, so a burst of loan
 * requests makes one call; a failure is never cached.
 */
import { fetchAttempt } from '../../runtime/http-client';
import { UnreachableError, unreachableRetryPolicy, type UnreachableRetryPolicy } from '../../runtime/retry';
import type { PriceFeedSnapshot } from '../../domain/lending';
import type { PriceFeed } from '../../domain/ports/lending';
import { snapshotFromText } from './price-feed-document';

/** Longest time a fetched snapshot is reused (seconds). */
const PRICE_FEED_CACHE_SECONDS = 60;

/** Configuration of {@link HttpPriceFeed}. */
export interface HttpPriceFeedConfig {
  /** The document's URL. */
  url: string;
  /** Bearer token, read per fetch (e.g. `() => secret('PRICE_FEED_TOKEN')`, which caches); '' or undefined: no Authorization header. */
  token?: () => Promise<string | undefined>;
  /** Per-attempt timeout, ms (default 2000). */
  timeoutMs?: number;
  /** Total attempts while unreachable (default 2). */
  attempts?: number;
  /** Wait before the second attempt, ms (default 150), doubling after. */
  backoffMs?: number;
  /** Cache lifetime, seconds (default 60; 0 disables the cache). */
  cacheSeconds?: number;
  /** Clock of the cache (tests). */
  now?: () => number;
  fetchImpl?: typeof fetch;
  log?: (line: string) => void;
}

/** Thrown when the source cannot be reached after the configured attempts. */
export class PriceFeedUnreachableError extends Error {
  constructor(
    message: string,
    readonly problem: string,
  ) {
    super(message);
    this.name = 'PriceFeedUnreachableError';
  }
}

/** HTTP client of a published price feed. */
export class HttpPriceFeed implements PriceFeed {
  private readonly url: URL;
  private readonly retries: UnreachableRetryPolicy;
  private readonly attempts: number;
  private readonly cacheMs: number;
  private readonly clock: () => number;
  private cached?: { snapshot: PriceFeedSnapshot; until: number };
  private inFlight?: Promise<PriceFeedSnapshot>;

  /** @throws TypeError on an invalid URL or retry options */
  constructor(private readonly config: HttpPriceFeedConfig) {
    this.url = new URL(config.url);
    this.attempts = config.attempts ?? 2;
    this.retries = unreachableRetryPolicy({
      attempts: this.attempts,
      backoffMs: config.backoffMs ?? 150,
      timeoutMs: config.timeoutMs ?? 2000,
    });
    this.cacheMs = (config.cacheSeconds ?? PRICE_FEED_CACHE_SECONDS) * 1000;
    this.clock = config.now ?? Date.now;
  }

  /**
   * The source's current prices (`source` = the URL without query string), from the cache when
   * fetched less than `cacheSeconds` ago.
   * @throws PriceFeedUnreachableError after the attempts; Error on any other status or a malformed document
   */
  async latest(): Promise<PriceFeedSnapshot> {
    const at = this.clock();
    if (this.cached && at < this.cached.until) return this.cached.snapshot;
    // Concurrent callers share one fetch.
    this.inFlight ??= this.fetchOnce().then(
      (snapshot) => {
        this.inFlight = undefined;
        if (this.cacheMs > 0) this.cached = { snapshot, until: this.clock() + this.cacheMs };
        return snapshot;
      },
      (err: unknown) => {
        this.inFlight = undefined;
        throw err;
      },
    );
    return this.inFlight;
  }

  private async fetchOnce(): Promise<PriceFeedSnapshot> {
    const token = (await this.config.token?.())?.trim();
    const headers: Record<string, string> = { Accept: 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) };
    const source = `${this.url.origin}${this.url.pathname}`;
    const answer = await this.retries
      .execute(
        async (signal) => {
          const { res, text } = await fetchAttempt(this.config.fetchImpl ?? fetch, this.url, { method: 'GET', headers, signal });
          return { status: res.status, text };
        },
        (failure, n, attempts) => this.config.log?.(`price feed GET ${source}: attempt ${n}/${attempts} failed (${failure.problem})`),
      )
      .catch((err: unknown) => {
        if (!(err instanceof UnreachableError)) throw err;
        throw new PriceFeedUnreachableError(
          `The price feed ${source} is unreachable after ${this.attempts} attempt${this.attempts === 1 ? '' : 's'} (${err.problem}).`,
          err.problem,
        );
      });
    if (answer.status !== 200) throw new Error(`Price feed ${source} answered HTTP ${answer.status}`);
    return snapshotFromText(answer.text, source);
  }
}
