import type { PinRequest, PinStore, PinStoreEntry } from '../../domain/ports';
import { UnreachableError, unreachableRetryPolicy, type UnreachableRetryPolicy } from '../../runtime/retry';

/** Pin status values of the IPFS Pinning Service API. */
export type RemotePinStatus = 'queued' | 'pinning' | 'pinned' | 'failed';

/** `PinStatus` object of the IPFS Pinning Service API (the fields this adapter reads). */
interface PinStatusBody {
  requestid: string;
  status: RemotePinStatus;
  delegates?: string[];
  info?: Record<string, string>;
}

/** A pinning request that did not succeed: rejected, failed, timed out or unreachable. */
export class PinningServiceError extends Error {
  /** HTTP status of the last response, when there was one. */
  readonly status?: number;
  /** `error.reason` from the service's Failure body, or TIMEOUT / FAILED / UNREACHABLE. */
  readonly reason: string;
  readonly requestid?: string;
  constructor(message: string, opts: { status?: number; reason: string; requestid?: string; cause?: unknown }) {
    super(message);
    this.name = 'PinningServiceError';
    this.status = opts.status;
    this.reason = opts.reason;
    this.requestid = opts.requestid;
    if (opts.cause !== undefined) (this as { cause?: unknown }).cause = opts.cause;
  }
}

export interface PinningServiceStoreOptions {
  /** Base URL of the service, e.g. `https://api.pinata.cloud/psa` (no trailing `/pins`). */
  endpoint: string;
  /** The service's access token, sent as `Authorization: Bearer <token>`. */
  accessToken: string;
  /** Multiaddrs (with `/p2p/<peer id>`) of IPFS nodes that hold the blocks; sent as `origins`. */
  origins?: string[];
  /** Defaults to the global `fetch`. */
  fetchImpl?: typeof fetch;
  /** Delay between status polls, ms (default 2000). */
  pollIntervalMs?: number;
  /** Give up waiting for `pinned` after this long, ms (default 120000). */
  timeoutMs?: number;
  /** Attempts per HTTP request on network errors, 5xx and 429 (default 4). */
  maxAttempts?: number;
  /** First retry delay, ms, doubled each attempt (default 500); a Retry-After header wins (capped at 30 s). */
  backoffMs?: number;
  /** Injectable for tests: waits between status polls and between retries. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * PinStore over a remote IPFS Pinning Service API (https://ipfs.github.io/pinning-services-api-spec/).
 *
 * `pin` sends `POST {endpoint}/pins {cid, name, meta, origins?}` with `Authorization: Bearer`,
 * then polls `GET {endpoint}/pins/{requestid}` every `pollIntervalMs` until the status is
 * `pinned`. `failed` rejects with PinningServiceError (reason FAILED); still queued/pinning after
 * `timeoutMs` rejects with reason TIMEOUT. Network errors, 5xx and 429 are retried with
 * exponential backoff (`maxAttempts`, `backoffMs`, Retry-After honoured; the shared policy,
 * `runtime/retry.ts`), then reject with reason UNREACHABLE or the last answer's `error.reason`;
 * other 4xx (e.g. 401 bad token) reject at once with the service's `error.reason`. A retried POST may leave a duplicate
 * pin request at the service; pinning the same CID twice is harmless.
 *
 * The API pins by CID only: the service fetches the blocks from the IPFS network, so `pkg.blocks`
 * is NOT uploaded. Some IPFS node must provide them (e.g. a node that imported the same files, or
 * the blocks exported as a CAR and imported into one), and `origins` should list that node's
 * multiaddrs so the service can connect to it directly. If nobody provides them, the pin stays
 * queued and `pin` times out. This adapter runs no IPFS node itself and does not dial the
 * `delegates` the service returns.
 *
 * `cat` and `ls` always return `null`: content is read through IPFS gateways
 * (`https://<gateway>/ipfs/<cid>/evidence.json`), not through the pinning API.
 */
export class PinningServiceStore implements PinStore {
  private readonly endpoint: string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly retries: UnreachableRetryPolicy;

  /** @throws TypeError on a negative `backoffMs` */
  constructor(private readonly opts: PinningServiceStoreOptions) {
    this.endpoint = opts.endpoint.replace(/\/+$/, '');
    this.fetchImpl = opts.fetchImpl ?? fetch;
    this.sleep = opts.sleep ?? defaultSleep;
    this.now = opts.now ?? Date.now;
    this.retries = unreachableRetryPolicy({
      attempts: Math.max(1, Math.ceil(opts.maxAttempts ?? 4)),
      backoffMs: opts.backoffMs ?? 500,
      // Only an injected sleep replaces the policy's own timer (the default sleep is the same timer).
      sleep: opts.sleep,
    });
  }

  /** Requests the pin and waits for `pinned`. Errors: PinningServiceError (see class docblock). */
  async pin(pkg: PinRequest): Promise<void> {
    const body: Record<string, unknown> = { cid: pkg.cid, name: pkg.name.slice(0, 255) };
    if (pkg.meta && Object.keys(pkg.meta).length) body.meta = pkg.meta;
    if (this.opts.origins?.length) body.origins = this.opts.origins;
    const timeoutMs = this.opts.timeoutMs ?? 120_000;
    const deadline = this.now() + timeoutMs;

    let status = await this.request('POST', '/pins', body);
    for (;;) {
      if (status.status === 'pinned') return;
      if (status.status === 'failed') {
        throw new PinningServiceError(`The pinning service failed to pin ${pkg.cid} (request ${status.requestid})${status.info ? `: ${JSON.stringify(status.info)}` : ''}.`, { reason: 'FAILED', requestid: status.requestid });
      }
      if (this.now() >= deadline) {
        throw new PinningServiceError(
          `Pinning ${pkg.cid} timed out after ${timeoutMs} ms: request ${status.requestid} is still "${status.status}". The service fetches blocks from the IPFS network; make sure a node provides them (origins).`,
          { reason: 'TIMEOUT', requestid: status.requestid },
        );
      }
      await this.sleep(this.opts.pollIntervalMs ?? 2_000);
      status = await this.request('GET', `/pins/${encodeURIComponent(status.requestid)}`);
    }
  }

  /** Always `null`: fetch content from an IPFS gateway instead. */
  async cat(_cid: string, _path?: string): Promise<{ bytes: Uint8Array; contentType: string } | null> {
    return null;
  }

  /** Always `null`: list directories through an IPFS gateway instead. */
  async ls(_cid: string): Promise<PinStoreEntry[] | null> {
    return null;
  }

  /** One API call with retries. @returns the PinStatus body @throws PinningServiceError */
  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<PinStatusBody> {
    const attempts = this.retries.attempts;
    return this.retries
      .execute(async () => {
        let res: Response;
        try {
          res = await this.fetchImpl(`${this.endpoint}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${this.opts.accessToken}`,
              accept: 'application/json',
              ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
            },
            ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          });
        } catch (err) {
          throw new UnreachableError((err as Error).message, { cause: err });
        }
        const text = await res.text();
        if (res.ok) {
          let parsed: PinStatusBody;
          try {
            parsed = JSON.parse(text) as PinStatusBody;
          } catch {
            throw new PinningServiceError(`${method} ${path}: the pinning service answered ${res.status} with a body that is not JSON.`, { status: res.status, reason: 'BAD_RESPONSE' });
          }
          if (typeof parsed?.requestid !== 'string' || typeof parsed.status !== 'string') {
            throw new PinningServiceError(`${method} ${path}: the pinning service answered without requestid/status.`, { status: res.status, reason: 'BAD_RESPONSE' });
          }
          return parsed;
        }
        const reason = failureReason(text) ?? `HTTP_${res.status}`;
        if (res.status >= 500 || res.status === 429) {
          throw new UnreachableError(reason, { status: res.status, retryAfterMs: retryAfterMs(res.headers.get('retry-after')) });
        }
        throw new PinningServiceError(`${method} ${path}: the pinning service answered ${res.status} ${reason}${authHint(res.status)}.`, { status: res.status, reason });
      })
      .catch((err: unknown) => {
        if (!(err instanceof UnreachableError)) throw err;
        if (err.status === undefined) {
          throw new PinningServiceError(`The pinning service at ${this.endpoint} is unreachable after ${attempts} attempts: ${err.problem}`, { reason: 'UNREACHABLE', cause: err.cause });
        }
        throw new PinningServiceError(`${method} ${path}: the pinning service answered ${err.status} ${err.problem}${authHint(err.status)} after ${attempts} attempts.`, { status: err.status, reason: err.problem });
      });
  }
}

/** A hint for an authentication refusal. */
function authHint(status: number): string {
  return status === 401 || status === 403 ? ' (check the access token)' : '';
}

/** `error.reason` of a Pinning Service API Failure body, if present. */
function failureReason(text: string): string | undefined {
  try {
    const reason = (JSON.parse(text) as { error?: { reason?: unknown } })?.error?.reason;
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
}

/** Retry-After (delta seconds or HTTP date) in ms, capped at 30 s. */
function retryAfterMs(value: string | null): number | undefined {
  if (!value) return undefined;
  const secs = Number(value);
  const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 30_000) : undefined;
}
