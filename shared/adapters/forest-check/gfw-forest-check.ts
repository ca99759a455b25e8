/**
 * `ForestCheck` over the Global Forest Watch Data API (docs/api/eudr.md#forest-check): integrated deforestation
 * alerts (dataset `gfw_integrated_alerts`) after the EUDR cut-off inside the farm's polygon, or
 * inside a circle of the declared area round a point farm.
 *
 * Endpoints used (https://data-api.globalforestwatch.org, every request sends `x-api-key`):
 * - `GET /dataset/gfw_integrated_alerts/latest`: the API answers 307 to
 *   `/dataset/gfw_integrated_alerts/{version}` (fetch follows it), whose body is
 *   `{status, data: {dataset, version, is_latest, …}}`; `data.version` is the concrete version.
 * - Only if that answers 404: `GET /dataset/gfw_integrated_alerts` → `{data: {versions: [...]}}`;
 *   the API does not promise an order, so the highest version in natural order (`v20250301` >
 *   `v20241231`) is taken, which is the last one when the list is sorted.
 * - `POST /dataset/gfw_integrated_alerts/{version}/query/json` with `{sql, geometry}` (a raster query
 *   needs a geometry; the table name in `FROM` is replaced by the dataset's layer) →
 *   `{status: "success", data: [{gfw_integrated_alerts__date, gfw_integrated_alerts__confidence, count}]}`.
 *
 * Alert area (an approximation): the alerts are a raster on GFW's 10/100000 grid, cells of 0.0001° ×
 * 0.0001° (the dataset's "10 × 10 m"; GLAD-L's 30 m alerts are up-sampled onto it). One cell covers
 * (R·0.0001·π/180)² · cos(lat) ≈ 123.6 m² · cos(lat), about 0.0124 ha in Uganda (it is not the
 * 0.09 ha of a 30 m Landsat pixel). `area_ha` = alert cell count × the cell area at the farm's GPS
 * latitude, rounded to 4 decimals; cells only partly inside the geometry count whole, so small farms
 * are over-estimated by up to a ring of cells.
 */
import { DomainError } from '../../domain/errors';
import { pointFarmCircle, type FarmLocation } from '../../domain/farm-geometry';
import type { ForestCheck, ForestCheckResult } from '../../domain/ports/registry';
import { envOr, secret } from '../../config';
import { fetchAttempt } from '../../runtime/http-client';
import { UnreachableError, unreachableRetryPolicy, type UnreachableRetryPolicy } from '../../runtime/retry';

/** EUDR cut-off: alerts after this date make a plot ineligible. */
const GFW_CUTOFF_DATE = '2020-12-31';
const GFW_DATASET = 'gfw_integrated_alerts';
const GFW_DEFAULT_BASE_URL = 'https://data-api.globalforestwatch.org';
/** Seconds a caller is told to wait after GFW_API_UNAVAILABLE (docs/api/eudr.md#forest-check). */
const GFW_RETRY_AFTER_SECONDS = 300;

/** Side of a cell of the 10/100000 grid, in degrees. */
const GRID_CELL_DEG = 0.0001;
/** Mean Earth radius (m), as @turf/helpers. */
const EARTH_RADIUS_M = 6_371_008.8;

/** The alert query: pixel counts per alert date and confidence after the cut-off. */
export const GFW_ALERTS_SQL =
  `SELECT ${GFW_DATASET}__date, ${GFW_DATASET}__confidence, COUNT(*) FROM results ` +
  `WHERE ${GFW_DATASET}__date > '${GFW_CUTOFF_DATE}' ` +
  `GROUP BY ${GFW_DATASET}__date, ${GFW_DATASET}__confidence`;

/** Configuration of {@link GfwForestCheck}. */
export interface GfwForestCheckConfig {
  /** Base URL (default https://data-api.globalforestwatch.org; a path prefix is kept). */
  baseUrl?: string;
  /** The GFW API key, read when a check runs (e.g. from Secrets Manager through `secret()`). */
  apiKey: () => Promise<string>;
  /** Per-attempt timeout in ms, covering connect, response and body (default 10000). */
  timeoutMs?: number;
  /** Attempts per request while GFW is unreachable: network error, timeout, 5xx, 429 (default 3). */
  attempts?: number;
  /** Wait before the second attempt in ms, doubling after each further failure (default 500). */
  backoffMs?: number;
  /** How long a resolved dataset version is reused, in ms (default 1 hour). */
  versionTtlMs?: number;
  /** Hectares per alert cell; default: the 0.0001° cell's area at the farm's latitude. */
  pixelAreaHa?: number;
  fetchImpl?: typeof fetch;
  now?: () => Date;
  /** Optional diagnostic sink (one line per failed attempt). */
  log?: (line: string) => void;
}

/** GFW refused a request in a way a retry cannot fix (4xx other than 429, e.g. a bad API key). */
export class GfwRequestError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`Global Forest Watch refused the request: HTTP ${status} ${detail}`);
    this.name = 'GfwRequestError';
  }
}

interface Answer {
  status: number;
  body: unknown;
  url: string;
}

/** Area in hectares of one 0.0001° grid cell at latitude `lat` (degrees). */
export function gridCellAreaHa(lat: number): number {
  const side = EARTH_RADIUS_M * GRID_CELL_DEG * (Math.PI / 180);
  return (side * side * Math.cos((lat * Math.PI) / 180)) / 10_000;
}

/** Natural order of version names (`v2` < `v10`, `v20241231` < `v20250301`). */
const naturalCompare = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

function unavailable(message: string, cause?: unknown): DomainError {
  const err = new DomainError('GFW_API_UNAVAILABLE', message, { retryAfterSeconds: GFW_RETRY_AFTER_SECONDS });
  if (cause !== undefined) (err as { cause?: unknown }).cause = cause;
  return err;
}

/**
 * Forest check against the GFW Data API.
 *
 * `check(farm)`: 1. resolve the concrete version of `gfw_integrated_alerts` (cached for
 * `versionTtlMs`) 2. query alert cell counts after 2020-12-31 inside the farm's polygon, or inside
 * `pointFarmCircle(gps, area_ha)` for a point farm 3. FLAGGED when any alert, else CLEAR, with
 * `dataset: {name, version}` and `alerts: [{date, confidence, area_ha}]` sorted by date.
 *
 * Errors: every request is tried up to `attempts` times while GFW is unreachable (network error,
 * timeout, HTTP 5xx or 429), with doubling backoff (the shared policy, `runtime/retry.ts`); then `DomainError GFW_API_UNAVAILABLE` (503) with
 * `Retry-After: 300`, as also for a 2xx answer that does not have the documented shape. Another 4xx
 * throws {@link GfwRequestError} at once (a configuration fault: the HTTP layer reports a 500). A
 * failure of `apiKey()` propagates as it is.
 */
export class GfwForestCheck implements ForestCheck {
  private readonly base: string;
  private readonly apiKey: () => Promise<string>;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly retries: UnreachableRetryPolicy;
  private readonly versionTtlMs: number;
  private readonly pixelAreaHa?: number;
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => Date;
  private readonly log?: (line: string) => void;
  private version?: { name: string; resolvedAt: number };

  /** @throws TypeError on an invalid `baseUrl`, a non-positive `attempts` or `timeoutMs`, or a negative `backoffMs`. */
  constructor(config: GfwForestCheckConfig) {
    const base = new URL(config.baseUrl ?? GFW_DEFAULT_BASE_URL);
    this.base = base.toString().replace(/\/+$/, '');
    this.apiKey = config.apiKey;
    this.timeoutMs = config.timeoutMs ?? 10_000;
    this.attempts = config.attempts ?? 3;
    if (!Number.isInteger(this.attempts) || this.attempts < 1) throw new TypeError('GfwForestCheck: attempts must be a positive integer');
    this.backoffMs = config.backoffMs ?? 500;
    this.retries = unreachableRetryPolicy({ attempts: this.attempts, backoffMs: this.backoffMs, timeoutMs: this.timeoutMs });
    this.versionTtlMs = config.versionTtlMs ?? 3_600_000;
    this.pixelAreaHa = config.pixelAreaHa;
    this.fetchImpl = config.fetchImpl ?? fetch;
    this.now = config.now ?? (() => new Date());
    this.log = config.log;
  }

  async check(farm: FarmLocation): Promise<ForestCheckResult> {
    const key = await this.apiKey();
    const version = await this.resolveVersion(key);
    const geometry = farm.polygon
      ? { type: 'Polygon' as const, coordinates: farm.polygon.coordinates }
      : pointFarmCircle(farm.gps, farm.area_ha);
    const path = `/dataset/${GFW_DATASET}/${encodeURIComponent(version)}/query/json`;
    const answer = await this.request('POST', path, key, { sql: GFW_ALERTS_SQL, geometry });
    if (answer.status !== 200) throw new GfwRequestError(answer.status, detailOf(answer.body));
    const rows = (answer.body as { data?: unknown } | null)?.data;
    if (!Array.isArray(rows)) throw unavailable('Global Forest Watch answered the alert query without a data array.');
    const cellHa = this.pixelAreaHa ?? gridCellAreaHa(farm.gps.lat);
    const alerts = rows
      .map((row) => parseRow(row))
      .filter((r) => r.count > 0 && r.date > GFW_CUTOFF_DATE)
      .map((r) => ({ date: r.date, confidence: r.confidence, area_ha: Math.round(r.count * cellHa * 1e4) / 1e4 }))
      .sort((a, b) => a.date.localeCompare(b.date) || a.confidence.localeCompare(b.confidence));
    return {
      status: alerts.length > 0 ? 'FLAGGED' : 'CLEAR',
      checked_at: this.now().toISOString(),
      cutoff_date: GFW_CUTOFF_DATE,
      dataset: { name: GFW_DATASET, version },
      alerts,
    };
  }

  /** The concrete version behind `latest` (see the module comment), cached for `versionTtlMs`. */
  private async resolveVersion(key: string): Promise<string> {
    const t = this.now().getTime();
    if (this.version && t - this.version.resolvedAt < this.versionTtlMs) return this.version.name;
    let name: string | undefined;
    const latest = await this.request('GET', `/dataset/${GFW_DATASET}/latest`, key);
    if (latest.status === 200) {
      const v = (latest.body as { data?: { version?: unknown } } | null)?.data?.version;
      const fromUrl = new URL(latest.url).pathname.split('/').filter(Boolean).pop();
      name = typeof v === 'string' && v !== '' ? v : fromUrl !== 'latest' ? fromUrl : undefined;
    } else if (latest.status === 404) {
      const listing = await this.request('GET', `/dataset/${GFW_DATASET}`, key);
      if (listing.status !== 200) throw new GfwRequestError(listing.status, detailOf(listing.body));
      const versions = (listing.body as { data?: { versions?: unknown } } | null)?.data?.versions;
      if (Array.isArray(versions))
        name = versions
          .filter((v): v is string => typeof v === 'string' && v !== '')
          .sort(naturalCompare)
          .pop();
    } else {
      throw new GfwRequestError(latest.status, detailOf(latest.body));
    }
    if (!name || name === 'latest') throw unavailable(`Global Forest Watch did not name a version of ${GFW_DATASET}.`);
    this.version = { name, resolvedAt: t };
    return name;
  }

  /**
   * One request with retries. Returns any answer that is not a failure to reach GFW (2xx, 3xx left
   * unfollowed, 4xx other than 429). Throws GFW_API_UNAVAILABLE after `attempts` failures.
   */
  private async request(method: 'GET' | 'POST', path: string, key: string, body?: unknown): Promise<Answer> {
    const url = `${this.base}${path}`;
    const headers: Record<string, string> = { 'x-api-key': key, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return this.retries
      .execute(
        async (signal) => {
          const { res, text } = await fetchAttempt(this.fetchImpl, url, {
            method,
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
            signal,
          });
          let parsed: unknown = null;
          if (text !== '') {
            try {
              parsed = JSON.parse(text);
            } catch (e) {
              if (res.ok) throw unavailable(`Global Forest Watch answered ${method} ${path} with a body that is not JSON.`, e);
              parsed = text.slice(0, 200);
            }
          }
          return { status: res.status, body: parsed, url: res.url || url };
        },
        (failure, n, attempts) => this.log?.(`GFW ${method} ${path} attempt ${n}/${attempts}: ${failure.problem}`),
      )
      .catch((err: unknown) => {
        if (!(err instanceof UnreachableError)) throw err;
        throw unavailable(
          `Global Forest Watch did not answer ${method} ${path} after ${this.attempts} attempts (last: ${err.problem}); retry after ${GFW_RETRY_AFTER_SECONDS / 60} minutes.`,
          err.cause,
        );
      });
  }
}

function detailOf(body: unknown): string {
  if (typeof body === 'string') return body;
  const b = body as { message?: unknown; detail?: unknown } | null;
  const d = b?.message ?? b?.detail;
  return typeof d === 'string' ? d : JSON.stringify(d ?? body ?? '').slice(0, 200);
}

/** One result row → `{date, confidence, count}`. @throws GFW_API_UNAVAILABLE on an undocumented shape. */
function parseRow(row: unknown): { date: string; confidence: string; count: number } {
  if (typeof row !== 'object' || row === null) throw unavailable('Global Forest Watch returned an alert row that is not an object.');
  const r = row as Record<string, unknown>;
  const date = r[`${GFW_DATASET}__date`];
  const confidence = r[`${GFW_DATASET}__confidence`];
  const countKey = Object.keys(r).find((k) => /^count\b/i.test(k));
  const count = countKey === undefined ? undefined : Number(r[countKey]);
  if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date) || count === undefined || !Number.isInteger(count) || count < 0) {
    throw unavailable(`Global Forest Watch returned an alert row without a date and a count: ${JSON.stringify(row).slice(0, 200)}`);
  }
  return { date, confidence: typeof confidence === 'string' && confidence !== '' ? confidence : 'unknown', count };
}

/**
 * The GFW forest check configured from the environment: `GFW_API_URL` (optional, default
 * https://data-api.globalforestwatch.org) and the API key from `GFW_API_KEY` (local) or the Secrets
 * Manager secret whose ARN is in `GFW_API_KEY_SECRET_ARN` (AWS), read on each check (cached by `secret`).
 */
export function createGfwForestCheckFromEnv(overrides: Partial<GfwForestCheckConfig> = {}): GfwForestCheck {
  return new GfwForestCheck({
    baseUrl: envOr('GFW_API_URL', GFW_DEFAULT_BASE_URL),
    apiKey: () => secret('GFW_API_KEY', 'GFW_API_KEY_SECRET_ARN'),
    ...overrides,
  });
}
