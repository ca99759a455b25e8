/**
 * Local national farmer registry (MAAIF) sandbox (docs/api/registries.md#cooperatives-farmers-and-the-forest-check): the registry's HTTP API on a
 * loopback port. `HttpNationalFarmerRegistry` talks to it exactly as to the real registry.
 *
 * API: `GET /v1/farmers/{id}` with `Authorization: Bearer <api_key>` (401 otherwise) →
 * 200 `{farmer_id, full_name, district, status}` or 404. Errors are `{error: {code, message}}`.
 *
 * Test ids (by prefix): `UG-UNKNOWN…` 404; `UG-DECEASED…` 200 status DECEASED; `UG-OFFLINE…` the
 * socket is destroyed unanswered for that id's first 3 look-ups, then 200 ACTIVE (so a registration
 * completes later), or 404 for `UG-OFFLINE-UNKNOWN…` (so it is rejected later); any other id 200
 * ACTIVE, `Registered farmer <id>`, district Mbale.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { listenOnLoopback } from './loopback';

/** Options of {@link startFarmerRegistrySandbox}. */
export interface FarmerRegistrySandboxOptions {
  /** Port on 127.0.0.1 (default 0: a free port). */
  port?: number;
  /** The API key clients must send as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** Optional diagnostic sink (one line per request). */
  log?: (line: string) => void;
}

/** A running sandbox. */
export interface FarmerRegistrySandbox {
  /** Base URL, e.g. `http://127.0.0.1:4020`. */
  url: string;
  /** Closes the server and every open connection. */
  stop(): Promise<void>;
  /** Requests to `/v1/farmers/{id}` received so far, including dropped and unauthorised ones. */
  lookups(): number;
}

/** Look-ups of a `UG-OFFLINE…` id that are dropped before it answers. */
const OFFLINE_DROPS = 3;

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Starts the sandbox on 127.0.0.1. Resolves once it listens. */
export async function startFarmerRegistrySandbox(opts: FarmerRegistrySandboxOptions): Promise<FarmerRegistrySandbox> {
  if (!opts.apiKey) throw new TypeError('startFarmerRegistrySandbox: apiKey is required');
  const log = opts.log ?? (() => {});
  const offlineSeen = new Map<string, number>();
  let lookups = 0;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const m = /^\/v1\/farmers\/([^/]+)\/?$/.exec(url.pathname);
    if (!m) {
      send(res, 404, { error: { code: 'ROUTE_NOT_FOUND', message: `No route ${req.method} ${url.pathname}.` } });
      return;
    }
    if (req.method !== 'GET') {
      send(res, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `${req.method} not allowed.` } });
      return;
    }
    lookups++;
    let id: string;
    try {
      id = decodeURIComponent(m[1] ?? '');
    } catch {
      send(res, 400, { error: { code: 'VALIDATION_ERROR', message: 'Malformed farmer id.' } });
      return;
    }
    // Unreachable test ids: the connection dies before any answer (network level, so before auth).
    if (id.startsWith('UG-OFFLINE')) {
      const n = (offlineSeen.get(id) ?? 0) + 1;
      offlineSeen.set(id, n);
      if (n <= OFFLINE_DROPS) {
        log(`farmer-registry-sandbox GET ${id}: socket destroyed (offline test id, look-up ${n}/${OFFLINE_DROPS})`);
        req.socket.destroy();
        return;
      }
    }
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!auth || !safeEqual(auth[1] ?? '', opts.apiKey)) {
      log(`farmer-registry-sandbox GET ${id} → 401`);
      send(res, 401, { error: { code: 'UNAUTHORIZED', message: 'Missing or invalid API key.' } });
      return;
    }
    if (id.startsWith('UG-UNKNOWN') || id.startsWith('UG-OFFLINE-UNKNOWN')) {
      log(`farmer-registry-sandbox GET ${id} → 404`);
      send(res, 404, { error: { code: 'FARMER_NOT_FOUND', message: `No farmer ${id}.` } });
      return;
    }
    const status = id.startsWith('UG-DECEASED') ? 'DECEASED' : 'ACTIVE';
    log(`farmer-registry-sandbox GET ${id} → 200 ${status}`);
    send(res, 200, { farmer_id: id, full_name: `Registered farmer ${id}`, district: 'Mbale', status });
  }

  const server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      if (!res.headersSent && !req.socket.destroyed)
        send(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Unexpected sandbox error.' } });
      log(`farmer-registry-sandbox ${req.method} ${req.url} → 500 ${(err as Error)?.stack ?? String(err)}`);
    }
  });
  const listening = await listenOnLoopback(server, opts.port ?? 0);
  const url = `http://127.0.0.1:${listening.port}`;
  log(`farmer-registry-sandbox listening on ${url}`);
  return {
    url,
    lookups: () => lookups,
    stop: () => listening.close(),
  };
}
