import { fetchAttempt } from '../../runtime/http-client';
import { signProviderRequest } from './signing';

/** An answer that is not to be retried: its status and its JSON body (null when empty). */
export interface SignedJsonAnswer {
  status: number;
  body: unknown;
}

/**
 * One attempt of a signed JSON call in the payout provider's style (also the on-ramp's): bearer API
 * key, `X-Timestamp`/`X-Signature` over method, path with query and body (signed per attempt: the
 * signature carries the time of sending), JSON in and out. Errors: whatever `fetchAttempt` raises
 * for an unreachable endpoint (retried by the caller's policy); `protocolError(message)` for a 2xx
 * body that is not JSON.
 */
export async function signedJsonAttempt(input: {
  url: URL;
  method: 'GET' | 'POST';
  /** The path as the caller names it, for messages. */
  path: string;
  json?: unknown;
  extraHeaders?: Record<string, string>;
  apiKey: string;
  apiSecret: string;
  signal: AbortSignal;
  protocolError: (message: string) => Error;
}): Promise<SignedJsonAnswer> {
  const { url, method, json } = input;
  const body = json === undefined ? '' : JSON.stringify(json);
  const headers: Record<string, string> = {
    Authorization: `Bearer ${input.apiKey}`,
    Accept: 'application/json',
    ...(input.extraHeaders ?? {}),
    ...signProviderRequest({ secret: input.apiSecret, method, path: url.pathname + url.search, body }),
  };
  if (json !== undefined) headers['Content-Type'] = 'application/json';
  const { res, text } = await fetchAttempt(fetch, url, { method, headers, ...(json !== undefined ? { body } : {}), signal: input.signal });
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      if (res.ok) throw input.protocolError(`${method} ${input.path}: body is not JSON`);
    }
  }
  return { status: res.status, body: parsed };
}
