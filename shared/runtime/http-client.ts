/**
 * Small helpers the outside-system HTTP adapters share. Their retry policy (attempts, backoff,
 * per-attempt timeout) is in `./retry.ts`.
 */
import { UnreachableError } from './retry';

/** A short label for a fetch failure (duck-typed: the error may come from another realm). */
export function describeNetworkError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  if (e.cause?.code) return e.cause.code;
  if (e.cause?.message) return e.cause.message;
  return e.message ?? String(err);
}

/**
 * One attempt of an HTTP exchange under the retry policy (./retry.ts): the response and its body
 * text. A network failure or timeout, an HTTP 5xx or a 429 throws `UnreachableError` (the policy
 * retries it); any other status is returned for the adapter to interpret.
 */
export async function fetchAttempt(
  fetchImpl: typeof fetch,
  url: string | URL,
  init: RequestInit,
): Promise<{ res: Response; text: string }> {
  let res: Response;
  let text: string;
  try {
    res = await fetchImpl(url, init);
    text = await res.text();
  } catch (err) {
    throw new UnreachableError(describeNetworkError(err), { cause: err });
  }
  if (res.status >= 500 || res.status === 429) throw new UnreachableError(`HTTP ${res.status}`, { status: res.status });
  return { res, text };
}
