/**
 * Request signing for the payout provider's HTTP API, shared by the HTTP client
 * (`http-payout-provider.ts`) and the local sandbox (`infra/local/payout-sandbox.ts`).
 *
 * Every request carries `X-Timestamp: <unix seconds>` and
 * `X-Signature: v1=<hex HMAC-SHA256(api_secret, "<timestamp>.<METHOD>.<path with query>.<body or empty>")>`.
 * The verifier accepts a timestamp within ±5 minutes of its clock. Pure functions, no I/O.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Allowed clock skew between signer and verifier, in seconds. */
const PROVIDER_SIGNATURE_TOLERANCE_SECONDS = 300;

/** The headers a signed provider request carries. */
export interface ProviderSignatureHeaders {
  'X-Timestamp': string;
  'X-Signature': string;
}

/** Why a signature did not verify. */
export type ProviderSignatureFailure = 'MISSING' | 'MALFORMED' | 'STALE' | 'MISMATCH';

/** The exact string that is signed: `<timestamp>.<METHOD>.<path with query>.<body or empty>`. */
export function providerSigningPayload(timestamp: string, method: string, pathWithQuery: string, body: string): string {
  return `${timestamp}.${method.toUpperCase()}.${pathWithQuery}.${body}`;
}

function hmacHex(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload, 'utf8').digest('hex');
}

/**
 * Signs one request.
 * @param input.secret the API secret (any non-empty string)
 * @param input.method HTTP method (case-insensitive; upper-cased in the payload)
 * @param input.path path with query exactly as sent on the request line, e.g. `/v1/orders?reference=X`
 * @param input.body the raw body string as sent; `''`/undefined when there is none
 * @param input.timestamp unix seconds; defaults to now
 * @returns the `X-Timestamp` and `X-Signature` header values
 * @throws TypeError when the secret is empty
 */
export function signProviderRequest(input: {
  secret: string;
  method: string;
  path: string;
  body?: string;
  timestamp?: number;
}): ProviderSignatureHeaders {
  if (!input.secret) throw new TypeError('signProviderRequest: secret must not be empty');
  const ts = String(Math.floor(input.timestamp ?? Date.now() / 1000));
  const sig = hmacHex(input.secret, providerSigningPayload(ts, input.method, input.path, input.body ?? ''));
  return { 'X-Timestamp': ts, 'X-Signature': `v1=${sig}` };
}

/**
 * Verifies a request's `X-Timestamp` / `X-Signature` headers. The signature header may hold several
 * space- or comma-separated `v1=<hex>` entries (key rotation); one match suffices. Comparison is
 * constant-time.
 * @param input.timestamp the `X-Timestamp` header value (unix seconds), if any
 * @param input.signature the `X-Signature` header value, if any
 * @param input.nowSeconds the verifier's clock in unix seconds (default: now)
 * @param input.toleranceSeconds allowed skew (default 300)
 * @returns `{ ok: true }` or `{ ok: false, reason }`; never throws
 */
export function verifyProviderRequest(input: {
  secret: string;
  method: string;
  path: string;
  body?: string;
  timestamp: string | undefined;
  signature: string | undefined;
  nowSeconds?: number;
  toleranceSeconds?: number;
}): { ok: true } | { ok: false; reason: ProviderSignatureFailure } {
  const { timestamp, signature } = input;
  if (!timestamp || !signature) return { ok: false, reason: 'MISSING' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'MALFORMED' };
  const candidates = signature
    .split(/[\s,]+/)
    .filter((s) => s.startsWith('v1='))
    .map((s) => s.slice(3))
    .filter((hex) => /^[0-9a-f]{64}$/i.test(hex));
  if (candidates.length === 0) return { ok: false, reason: 'MALFORMED' };
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? PROVIDER_SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - Number(timestamp)) > tolerance) return { ok: false, reason: 'STALE' };
  if (!input.secret) return { ok: false, reason: 'MISMATCH' };
  const expected = Buffer.from(hmacHex(input.secret, providerSigningPayload(timestamp, input.method, input.path, input.body ?? '')), 'hex');
  for (const hex of candidates) {
    const given = Buffer.from(hex, 'hex');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'MISMATCH' };
}
