/**
 * Whether a request's `Prefer` header (RFC 7240, lower-cased header map) asks for `respond-async`:
 * the route then answers 202 with its job at once instead of waiting for the ledger
 * (docs/api/conventions.md#http-and-errors). Other preferences in the same header are ignored.
 */
export function prefersRespondAsync(headers: Record<string, string | undefined>): boolean {
  return /(^|[,\s])respond-async([,;\s]|$)/i.test(headers.prefer ?? '');
}

/** The `Preference-Applied` header of a 202 answered at once because the request asked for it. */
export const RESPOND_ASYNC_APPLIED = { 'preference-applied': 'respond-async' } as const;
