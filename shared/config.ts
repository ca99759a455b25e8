import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * Configuration, read from the environment once per use. The same names work in AWS (set by the
 * CDK stack) and locally (set by infra/local/start.ts); no handler knows where it runs.
 *
 * Secrets: `secret('PAYOUT_WEBHOOK_SECRET')` returns `$PAYOUT_WEBHOOK_SECRET` when set (local dev
 * values), otherwise reads the Secrets Manager secret named by `$PAYOUT_WEBHOOK_SECRET_ARN`
 * (AWS), cached for the life of the Lambda container.
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

let secretsClient: SecretsManagerClient | undefined;
const secretCache = new Map<string, Promise<string>>();

/**
 * A secret's value: the env var `name` if set, else the Secrets Manager secret whose ARN is in
 * `arnVariable` (default `<name>_SECRET_ARN`). Errors: throws when neither is configured or the secret has no string.
 */
export function secret(name: string, arnVariable = `${name}_SECRET_ARN`): Promise<string> {
  const direct = process.env[name];
  if (direct) return Promise.resolve(direct);
  const arn = process.env[arnVariable];
  if (!arn) return Promise.reject(new Error(`Missing configuration: set ${name} or ${arnVariable}`));
  let cached = secretCache.get(arn);
  if (!cached) {
    secretsClient ??= new SecretsManagerClient({});
    cached = secretsClient.send(new GetSecretValueCommand({ SecretId: arn })).then((r) => {
      if (!r.SecretString) throw new Error(`Secret ${arn} has no string value`);
      return r.SecretString;
    });
    cached.catch(() => secretCache.delete(arn));
    secretCache.set(arn, cached);
  }
  return cached;
}

/** Base URL of the API reference; `error.docs` is `<DOCS_BASE_URL>/errors#<CODE>` (decisions §5). */
export function docsBaseUrl(): string {
  return envOr('DOCS_BASE_URL', 'http://127.0.0.1:3000/docs');
}
