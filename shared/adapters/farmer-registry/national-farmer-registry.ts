/**
 * National farmer registry (MAAIF) client (docs/api/registries.md#cooperatives-farmers-and-the-forest-check): a registration checks the farmer ID here;
 * when the registry does not answer, the caller answers 202 MAAIF_API_UNAVAILABLE and completes the
 * registration later. The same client talks to the real registry and to the local sandbox
 * (`infra/local/farmer-registry-sandbox.ts`).
 *
 * Protocol: `GET {baseUrl}/v1/farmers/{id}` with `Authorization: Bearer <api_key>`;
 * 200 `{farmer_id, full_name, district, status: "ACTIVE"|"DECEASED"|"SUSPENDED"}`, 404 unknown.
 */
import { requireEnv, secret } from '../../config';
import { fetchAttempt } from '../../runtime/http-client';
import { UnreachableError, unreachableRetryPolicy, type UnreachableRetryPolicy } from '../../runtime/retry';

import { NationalRegistryUnavailableError } from '../../domain/errors';
import type { FarmerRegistryLookup, NationalFarmerRegistry } from '../../domain/ports/registry';

/** Configuration of {@link HttpNationalFarmerRegistry}. */
export interface HttpNationalFarmerRegistryConfig {
  /** Base URL, e.g. `https://registry.maaif.example` or `http://127.0.0.1:4020` (a path prefix is kept). */
  baseUrl: string;
  /** The API key, read per look-up (e.g. `() => secret('MAAIF_API_KEY')`, which caches). */
  apiKey: () => Promise<string>;
  /** Per-attempt timeout in ms, covering connect, response and body (default 2000). */
  timeoutMs?: number;
  /** Total attempts per look-up when the registry is unreachable (default 2). */
  attempts?: number;
  /** Wait before the second attempt in ms, doubling after each further failure (default 150). */
  backoffMs?: number;
  /** Optional diagnostic sink (one line per failed attempt). */
  log?: (line: string) => void;
}

const STATUSES = ['ACTIVE', 'DECEASED', 'SUSPENDED'] as const;

function nonEmpty(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.trim() === '')
    throw new Error(`Unexpected national farmer registry response: ${field} is not a non-empty string`);
  return v;
}

/**
 * HTTP adapter for the national farmer registry.
 *
 * Retries only when the registry is unreachable (connection error, timeout, HTTP 5xx or 429), up
 * to `attempts` in total with doubling backoff (the shared policy, `runtime/retry.ts`), each attempt
 * limited to `timeoutMs`; then throws `NationalRegistryUnavailableError`. 404 yields
 * `{found: false}`; any other non-200 answer (e.g. 401 for a bad key) throws a plain `Error` naming
 * the status at once; so does a malformed 200 body.
 */
export class HttpNationalFarmerRegistry implements NationalFarmerRegistry {
  private readonly base: URL;
  private readonly apiKey: () => Promise<string>;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly retries: UnreachableRetryPolicy;
  private readonly log?: (line: string) => void;

  /** @throws TypeError on an invalid `baseUrl`, non-positive `attempts`/`timeoutMs` or a negative `backoffMs`. */
  constructor(config: HttpNationalFarmerRegistryConfig) {
    this.base = new URL(config.baseUrl);
    this.apiKey = config.apiKey;
    this.timeoutMs = config.timeoutMs ?? 2000;
    this.attempts = config.attempts ?? 2;
    this.backoffMs = config.backoffMs ?? 150;
    if (!Number.isInteger(this.attempts) || this.attempts < 1)
      throw new TypeError('HttpNationalFarmerRegistry: attempts must be an integer ≥ 1');
    if (!(this.timeoutMs > 0)) throw new TypeError('HttpNationalFarmerRegistry: timeoutMs must be positive');
    this.retries = unreachableRetryPolicy({ attempts: this.attempts, backoffMs: this.backoffMs, timeoutMs: this.timeoutMs });
    this.log = config.log;
  }

  /**
   * Looks up `farmerId`; found only when the registry lists the farmer as ACTIVE.
   * @throws NationalRegistryUnavailableError; Error on any other unexpected answer
   */
  async lookup(farmerId: string): Promise<FarmerRegistryLookup> {
    if (typeof farmerId !== 'string' || farmerId.trim() === '') throw new TypeError('lookup: farmerId is required');
    const key = await this.apiKey();
    const prefix = this.base.pathname.replace(/\/+$/, '');
    const url = new URL(`${prefix}/v1/farmers/${encodeURIComponent(farmerId)}`, this.base.origin);
    const answer = await this.retries
      .execute(
        async (signal) => {
          const { res, text } = await fetchAttempt(fetch, url, {
            method: 'GET',
            headers: { Authorization: `Bearer ${key}`, Accept: 'application/json' },
            signal,
          });
          return { status: res.status, text };
        },
        (failure, n, attempts) =>
          this.log?.(`national farmer registry GET ${url.pathname}: attempt ${n}/${attempts} failed (${failure.problem})`),
      )
      .catch((err: unknown) => {
        if (!(err instanceof UnreachableError)) throw err;
        throw new NationalRegistryUnavailableError(
          `The national farmer registry is unreachable after ${this.attempts} attempt${this.attempts === 1 ? '' : 's'} (${err.problem}).`,
        );
      });
    if (answer.status === 404) return { found: false };
    if (answer.status !== 200) throw new Error(`National farmer registry answered HTTP ${answer.status} for farmer ${farmerId}`);
    return toLookup(answer.text);
  }
}

/** Maps a 200 body to a look-up result. @throws Error on a malformed body */
function toLookup(text: string): FarmerRegistryLookup {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error('Unexpected national farmer registry response: body is not JSON');
  }
  if (typeof body !== 'object' || body === null) throw new Error('Unexpected national farmer registry response: not an object');
  const b = body as Record<string, unknown>;
  const status = b.status;
  if (!STATUSES.includes(status as (typeof STATUSES)[number])) {
    throw new Error(`Unexpected national farmer registry response: unknown status ${JSON.stringify(status)}`);
  }
  if (status !== 'ACTIVE') return { found: false };
  return {
    found: true,
    farmer_id: nonEmpty(b.farmer_id, 'farmer_id'),
    full_name: nonEmpty(b.full_name, 'full_name'),
    district: nonEmpty(b.district, 'district'),
  };
}

/**
 * The registry client configured from the environment: `MAAIF_API_URL`, and the key from
 * `MAAIF_API_KEY` (local) or the secret whose ARN is in `MAAIF_API_KEY_SECRET_ARN` (AWS).
 * @throws Error when `MAAIF_API_URL` is missing (the key is read, and may fail, at look-up time)
 */
export function createNationalFarmerRegistryFromEnv(): HttpNationalFarmerRegistry {
  return new HttpNationalFarmerRegistry({
    baseUrl: requireEnv('MAAIF_API_URL'),
    apiKey: () => secret('MAAIF_API_KEY', 'MAAIF_API_KEY_SECRET_ARN'),
  });
}
