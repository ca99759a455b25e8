/**
 * The API's rate limits in AWS, in one place (docs/deploy.md#rate-limits-in-aws). Rates are chosen per
 * second; WAF counts requests per evaluation window, so its limits are derived here as
 * `rate × WINDOW_SECONDS` and never written twice.
 *
 * - Per token (WAF `PerToken`): {@link PER_TOKEN_RPS} requests/s sustained, the same rate the
 *   local gateway applies per token (`LOCAL_RATE_LIMIT_RPS`).
 * - The stage throttle (API Gateway, shared by every caller) is {@link STAGE_TO_TOKEN_RATIO}× the
 *   per-token rate, so one token at its limit takes at most a quarter of the stage.
 * - Unauthenticated routes, per source IP (WAF `PublicPerIp` and `WebhookPerIp`): callers without
 *   a token are counted by address instead.
 */

/** WAF evaluation window of every rate-based rule, seconds (WAF accepts 60, 120, 300 or 600). */
export const WINDOW_SECONDS = 60;

/** Sustained requests per second one token may make. */
export const PER_TOKEN_RPS = 50;
/** The stage throttle is this many times the per-token rate (at least 4). */
export const STAGE_TO_TOKEN_RATIO = 4;
/** Sustained requests per second per source IP on the public routes (/trace, /ipfs, /docs, /openapi.json). */
export const PUBLIC_PER_IP_RPS = 20;
/** Sustained requests per second per source IP on the inbound webhook routes. */
export const WEBHOOK_PER_IP_RPS = 25;

/** WAF limit of a sustained per-second rate: requests per {@link WINDOW_SECONDS} window. */
function perWindow(rps: number): number {
  return rps * WINDOW_SECONDS;
}

/** Requests per token per window (50/s → 3,000 per 60 s). */
export const PER_TOKEN_LIMIT = perWindow(PER_TOKEN_RPS);
/** Requests per source IP per window on the public routes (20/s → 1,200 per 60 s). */
export const PUBLIC_PER_IP_LIMIT = perWindow(PUBLIC_PER_IP_RPS);
/** Requests per source IP per window on the webhook routes (25/s → 1,500 per 60 s). */
export const WEBHOOK_PER_IP_LIMIT = perWindow(WEBHOOK_PER_IP_RPS);

/**
 * API Gateway stage throttle: `rateLimit` requests/s sustained ({@link STAGE_TO_TOKEN_RATIO}× the
 * per-token rate: 200/s), bursts of `burstLimit` (twice the rate).
 */
export const THROTTLE = {
  rateLimit: PER_TOKEN_RPS * STAGE_TO_TOKEN_RATIO,
  burstLimit: 2 * PER_TOKEN_RPS * STAGE_TO_TOKEN_RATIO,
} as const;
