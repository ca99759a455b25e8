import { createHash } from 'node:crypto';
import { serviceRuntime } from '../config';

/**
 * Security headers of every answer the service gives (docs/api/trace-page.md#public-trace-page):
 * - `x-content-type-options: nosniff` and `referrer-policy: no-referrer` on every response;
 * - in AWS (SERVICE_RUNTIME=aws) `strict-transport-security` too (API Gateway serves https only);
 * - on HTML pages a Content-Security-Policy that allows no inline script at all: scripts only
 *   from the service's own origin; inline `<style>` blocks only by their SHA-256 hash (computed
 *   here from the page), unless the page sets its own policy (the docs page, whose renderer
 *   injects styles at run time).
 */

/** HSTS in AWS: one year. */
export const HSTS = 'max-age=31536000';

/** The headers every answer carries, whoever produced it (a handler, or API Gateway's own error responses). */
export const BASE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const STYLE_BLOCK = /<style>([\s\S]*?)<\/style>/g;

/** `'sha256-…'` of an inline style or script's text, as CSP source expressions name it. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The Content-Security-Policy of an HTML page: nothing by default; scripts, styles, images,
 * fetches and fonts from the service's own origin only; styles also by hash (`styleHashes`) or,
 * only when `inlineStyles` is `'unsafe-inline'` (for a renderer that injects styles), inline —
 * never inline script; no framing, no `<base>`, no form posts, no plugins.
 */
export function contentSecurityPolicy(opts: { styleHashes?: string[]; inlineStyles?: 'unsafe-inline' } = {}): string {
  const styles = opts.inlineStyles === 'unsafe-inline' ? ["'self'", "'unsafe-inline'"] : ["'self'", ...(opts.styleHashes ?? [])];
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${styles.join(' ')}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** The policy of `html`: its inline `<style>` blocks allowed by hash, nothing else inline. */
function pageContentSecurityPolicy(html: string): string {
  const hashes = [...html.matchAll(STYLE_BLOCK)].map((m) => cspHash(m[1]!));
  return contentSecurityPolicy({ styleHashes: [...new Set(hashes)] });
}

/**
 * `headers` with the security headers added (names in lower case; a header the handler set
 * itself is kept): nosniff and no-referrer always, HSTS in AWS, and for `text/html` a CSP built
 * from the page (`body`).
 */
export function withSecurityHeaders(headers: Record<string, string>, body = ''): Record<string, string> {
  const out: Record<string, string> = { ...BASE_SECURITY_HEADERS, ...headers };
  if (serviceRuntime() === 'aws') out['strict-transport-security'] ??= HSTS;
  const type = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
  if (/^text\/html/i.test(type) && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-security-policy')) {
    out['content-security-policy'] = pageContentSecurityPolicy(body);
  }
  return out;
}
