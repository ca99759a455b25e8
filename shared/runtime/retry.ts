/**
 * The one "retry while the outside system is unreachable" policy of the HTTP adapters (payout
 * provider, national farmer registry, Global Forest Watch, IPFS pinning service), built on cockatiel.
 *
 * Rule: an attempt that throws {@link UnreachableError} (the adapter's verdict: network error,
 * timeout, HTTP 5xx or 429) is retried, up to `attempts` in total, waiting `backoffMs` before the
 * second attempt and doubling after each further failure (no jitter, no cap), or the failure's
 * `retryAfterMs` when it carries one. Anything else an attempt throws (a business rejection such as a
 * 4xx, a malformed answer) propagates at once. After the last attempt the last `UnreachableError`
 * is thrown; the adapter turns it into its own error class.
 */
import {
  ExponentialBackoff,
  TimeoutStrategy,
  handleWhen,
  noJitterGenerator,
  retry,
  timeout,
  type IBackoff,
  type IBackoffFactory,
  type IRetryBackoffContext,
} from 'cockatiel';

/**
 * Thrown by an attempt when the outside system could not be reached; the only failure the policy
 * retries. `problem` is a short label for messages (`ECONNREFUSED`, `timeout`, `HTTP 503`…).
 */
export class UnreachableError extends Error {
  /** HTTP status of the answer, when there was one (5xx, 429). */
  readonly status?: number;
  /** Wait before the next attempt the system asked for (e.g. from Retry-After), ms. */
  readonly retryAfterMs?: number;
  constructor(
    readonly problem: string,
    opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(problem, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'UnreachableError';
    if (opts.status !== undefined) this.status = opts.status;
    if (opts.retryAfterMs !== undefined) this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Options of {@link unreachableRetryPolicy}. */
export interface UnreachableRetryOptions {
  /** Total attempts, an integer ≥ 1. */
  attempts: number;
  /** Wait before the second attempt, ms (≥ 0); doubled before each further one. */
  backoffMs: number;
  /**
   * Per-attempt timeout, ms: the attempt's `signal` aborts then (pass it to `fetch`, so it covers
   * connect, response and body; the attempt must turn the abort into an `UnreachableError`).
   * Absent: no timeout.
   */
  timeoutMs?: number;
  /** Waits between attempts instead of cockatiel's own timer (tests inject a recorder). */
  sleep?: (ms: number) => Promise<void>;
}

/** A built policy; reusable and safe for concurrent calls. */
export interface UnreachableRetryPolicy {
  /** Total attempts per call. */
  readonly attempts: number;
  /**
   * Runs `attempt(signal, n)` (n = 1, 2, …) under the policy (see the module comment).
   * `onFailure` is told of every `UnreachableError`, the last one included, before any wait.
   * @returns what an attempt returned
   * @throws the last UnreachableError after `attempts` failures; any other error of an attempt at once
   */
  execute<T>(
    attempt: (signal: AbortSignal, n: number) => Promise<T>,
    onFailure?: (failure: UnreachableError, n: number, attempts: number) => void,
  ): Promise<T>;
}

type Ctx = IRetryBackoffContext<unknown>;

/** `inner`'s exponential delays, unless the failure asked for its own wait (`retryAfterMs`). */
function honouringRetryAfter(inner: IBackoffFactory<Ctx>, wait: (ms: number) => number): IBackoffFactory<Ctx> {
  return {
    next(context: Ctx): IBackoff<Ctx> {
      const step = inner.next(context);
      const failure = 'error' in context.result ? context.result.error : undefined;
      const asked = failure instanceof UnreachableError ? failure.retryAfterMs : undefined;
      return { duration: wait(asked ?? step.duration), next: (ctx: Ctx) => honouringRetryAfter(step, wait).next(ctx) };
    },
  };
}

/**
 * Builds the policy: cockatiel `retry(handleWhen(UnreachableError), {maxAttempts: attempts - 1,
 * backoff: ExponentialBackoff(no jitter, initialDelay: backoffMs)})`, each attempt under a
 * cooperative cockatiel `timeout(timeoutMs)` when given.
 * @throws TypeError on a non-integer or < 1 `attempts`, a negative `backoffMs` or a non-positive `timeoutMs`
 */
export function unreachableRetryPolicy(opts: UnreachableRetryOptions): UnreachableRetryPolicy {
  const { attempts, backoffMs, sleep } = opts;
  if (!Number.isInteger(attempts) || attempts < 1) throw new TypeError('retry policy: attempts must be an integer ≥ 1');
  if (!(backoffMs >= 0)) throw new TypeError('retry policy: backoffMs must be ≥ 0');
  if (opts.timeoutMs !== undefined && !(opts.timeoutMs > 0)) throw new TypeError('retry policy: timeoutMs must be positive');
  const perAttempt = opts.timeoutMs === undefined ? undefined : timeout(opts.timeoutMs, TimeoutStrategy.Cooperative);
  const exponential = new ExponentialBackoff({ generator: noJitterGenerator, initialDelay: backoffMs, maxDelay: Infinity });

  return {
    attempts,
    async execute(attempt, onFailure) {
      // With an injected `sleep`, cockatiel's own wait is 0 and the computed delay is slept here,
      // before the next attempt (so per call: the policy below is cheap to build).
      let pending = 0;
      const policy = retry(
        handleWhen((e) => e instanceof UnreachableError),
        {
          maxAttempts: attempts - 1,
          backoff: honouringRetryAfter(
            exponential,
            sleep
              ? (ms) => {
                  pending = ms;
                  return 0;
                }
              : (ms) => ms,
          ),
        },
      );
      return policy.execute(async ({ attempt: retries, signal }) => {
        if (retries > 0 && sleep) await sleep(pending);
        const n = retries + 1;
        try {
          // The timeout gets no parent signal: the retry's is cockatiel's shared never-aborted one, and
          // deriving from it would add a listener per concurrent call (MaxListenersExceededWarning).
          return perAttempt ? await perAttempt.execute(({ signal: s }) => attempt(s, n)) : await attempt(signal, n);
        } catch (err) {
          if (err instanceof UnreachableError) onFailure?.(err, n, attempts);
          throw err;
        }
      });
    },
  };
}
