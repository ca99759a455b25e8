/**
 * Configuration, read from the environment once per use. The same names work in AWS (set by the
 * CDK stack) and locally (set by infra/local/start.ts); no handler knows where it runs.
 *
 * Secrets: `secret('PAYOUT_WEBHOOK_SECRET', 'PAYOUT_WEBHOOK_SECRET_ARN')` returns
 * `$PAYOUT_WEBHOOK_SECRET` when set (local dev values), otherwise reads the Secrets Manager secret
 * whose ARN is in `$PAYOUT_WEBHOOK_SECRET_ARN` (AWS), cached for SECRET_CACHE_TTL_S seconds
 * (default 300), so a rotated secret is picked up without a redeploy.
 */

/** A required environment variable; throws naming it when missing. */
export function requireEnv(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === '') throw new Error(`Missing required environment variable ${name}`);
  return v;
}

/** An optional environment variable with a default. */
export function envOr(name: string, fallback: string): string {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : v;
}

/** Default seconds a secret read from Secrets Manager is kept before it is read again. */
export const DEFAULT_SECRET_CACHE_TTL_S = 300;

/** SECRET_CACHE_TTL_S in milliseconds (a positive number of seconds, else the default 300 s). */
export function secretCacheTtlMs(): number {
  const s = Number(envOr('SECRET_CACHE_TTL_S', String(DEFAULT_SECRET_CACHE_TTL_S)));
  return (Number.isFinite(s) && s > 0 ? s : DEFAULT_SECRET_CACHE_TTL_S) * 1000;
}

const secretCache = new Map<string, { value: Promise<string>; expiresAt: number }>();

/**
 * A secret's value: the env var `name` if set (local development values), else the Secrets
 * Manager secret whose ARN is in `arnVariable` (default `<name>_SECRET_ARN`), read through the
 * AWS Parameters and Secrets Lambda Extension on localhost (the CDK stack attaches it to every
 * function that reads a secret). The value is cached for SECRET_CACHE_TTL_S seconds (default 300),
 * not for the life of the container, so a rotated secret (e.g. an inbound webhook secret holding
 * the old and the new value) is seen within the TTL. `now` (ms) is for tests.
 * Errors: throws when neither is configured or the secret cannot be read (a failed read is not cached).
 */
export function secret(name: string, arnVariable = `${name}_SECRET_ARN`, now: number = Date.now()): Promise<string> {
  const direct = process.env[name];
  if (direct) return Promise.resolve(direct);
  const arn = process.env[arnVariable];
  if (!arn) return Promise.reject(new Error(`Missing configuration: set ${name} or ${arnVariable}`));
  const hit = secretCache.get(arn);
  if (hit && hit.expiresAt > now) return hit.value;
  const value = readThroughExtension(arn);
  const entry = { value, expiresAt: now + secretCacheTtlMs() };
  value.catch(() => {
    if (secretCache.get(arn) === entry) secretCache.delete(arn);
  });
  secretCache.set(arn, entry);
  return value;
}

/** GET /secretsmanager/get on the Parameters and Secrets extension (port 2773 by default). */
async function readThroughExtension(arn: string): Promise<string> {
  const port = process.env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? '2773';
  const res = await fetch(`http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(arn)}`, {
    headers: { 'X-Aws-Parameters-Secrets-Token': process.env.AWS_SESSION_TOKEN ?? '' },
    signal: AbortSignal.timeout(3000),
  });
  if (!res.ok) throw new Error(`secret ${arn} could not be read: HTTP ${res.status}`);
  const body = (await res.json()) as { SecretString?: string };
  if (!body.SecretString) throw new Error(`Secret ${arn} has no string value`);
  return body.SecretString;
}

/** Base URL of the API reference; `error.docs` is `<DOCS_BASE_URL>/errors#<CODE>` (docs/api/conventions.md#http-and-errors). */
export function docsBaseUrl(): string {
  return envOr('DOCS_BASE_URL', 'http://127.0.0.1:3000/docs');
}

/** Where a function runs: `aws` (set by the CDK stack on every function) or `local` (the local stack; also the default when unset, as in unit tests). */
export type ServiceRuntime = 'aws' | 'local';

/**
 * SERVICE_RUNTIME: `aws` in the deployed stack, `local` on the local stack (default when unset).
 * It decides what only holds behind API Gateway's TLS: HSTS on every answer, and an https
 * PUBLIC_BASE_URL. Errors: throws on any other value.
 */
export function serviceRuntime(): ServiceRuntime {
  const v = envOr('SERVICE_RUNTIME', 'local');
  if (v !== 'aws' && v !== 'local') throw new Error(`SERVICE_RUNTIME must be aws or local, not ${JSON.stringify(v)}`);
  return v;
}

/**
 * Checks a public base URL and returns it without a trailing slash: an absolute `https://` URL
 * (`http://` only when `runtime` is `local`), with a host, no user info, query or fragment; a path
 * (an API Gateway stage such as `/prod`) is kept. Every link the service prints (trace page, its QR
 * code, the docs page, the OpenAPI document's server) starts with it; no link is ever built from
 * the request's `Host` or `X-Forwarded-*` headers.
 * @throws Error naming the problem.
 */
export function checkPublicBaseUrl(raw: string, runtime: ServiceRuntime): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`PUBLIC_BASE_URL is not an absolute URL: ${JSON.stringify(raw)}`);
  }
  const allowed = runtime === 'aws' ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(url.protocol))
    throw new Error(`PUBLIC_BASE_URL must be ${runtime === 'aws' ? 'an https' : 'an http or https'} URL, not ${JSON.stringify(raw)}`);
  if (!url.hostname || url.username || url.password || url.search || url.hash || raw.includes('#') || raw.includes('?')) {
    throw new Error(
      `PUBLIC_BASE_URL must be a plain base URL (scheme, host, optional port and path; no user info, query or fragment): ${JSON.stringify(raw)}`,
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

let publicBase: { raw: string; runtime: ServiceRuntime; url: string } | undefined;

/**
 * PUBLIC_BASE_URL, checked ({@link checkPublicBaseUrl}) and cached while the variable is unchanged:
 * the base of every absolute link the service prints. In AWS the stack sets it (the PublicBaseUrl
 * parameter, default the API's own stage URL); locally the printed URL of the local stack.
 * @throws Error when it is missing or invalid.
 */
export function publicBaseUrl(): string {
  const raw = requireEnv('PUBLIC_BASE_URL');
  const runtime = serviceRuntime();
  if (publicBase?.raw !== raw || publicBase.runtime !== runtime) publicBase = { raw, runtime, url: checkPublicBaseUrl(raw, runtime) };
  return publicBase.url;
}
