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

/** Base URL of the API reference; `error.docs` is `<DOCS_BASE_URL>/errors#<CODE>` (decisions §5). */
export function docsBaseUrl(): string {
  return envOr('DOCS_BASE_URL', 'http://127.0.0.1:3000/docs');
}
