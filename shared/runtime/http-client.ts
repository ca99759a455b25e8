/**
 * Small helpers the outside-system HTTP adapters share. Their retry policy (attempts, backoff,
 * per-attempt timeout) is in `./retry.ts`.
 */

/** A short label for a fetch failure (duck-typed: the error may come from another realm). */
export function describeNetworkError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  if (e.cause?.code) return e.cause.code;
  if (e.cause?.message) return e.cause.message;
  return e.message ?? String(err);
}
