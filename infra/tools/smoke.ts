/**
 * The post-deploy smoke test (`npm run smoke -- --url … --token …`, infra/tools/smoke-cli.ts):
 * checks a deployed API end to end without changing anything: the OpenAPI document, the rendered
 * reference, the authorizer (a call without a token), an authenticated read (a cooperative that
 * does not exist: 404 in the error envelope) and a validation error (an empty batch submission:
 * 400 VALIDATION_ERROR with details, rejected before anything is written, so no batch is minted
 * and no farmer is paid). Every answer must carry a request id. The token must be an ADMIN token
 * (docs/security.md#tokens-and-roles: the only role that may do both the read and the submission for any cooperative).
 */
import { randomBytes } from 'node:crypto';

/** One check's outcome. */
export interface SmokeCheck {
  name: string;
  ok: boolean;
  /** What was seen (on success) or what was wrong (on failure). */
  detail: string;
}

/** Options of {@link runSmoke}. */
export interface SmokeOptions {
  /** Base URL of the API, e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com/prod` (the ApiUrl output). */
  url: string;
  /** Bearer token (ADMIN) the deployment's issuer signed; with or without the `Bearer ` prefix. */
  token: string;
  /** Per-request timeout, ms (default 15,000). */
  timeoutMs?: number;
  /** Called with each check as soon as it is done (the CLI prints it). */
  onCheck?: (check: SmokeCheck) => void;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: the smoke run reads the API's JSON answers loosely and checks the fields it needs
type Json = Record<string, any>;

/** Paths the smoke calls; the OpenAPI document must describe them. */
const READ_PATH = '/cooperatives/{id}';
const SUBMIT_PATH = '/batch/submit';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Runs every check (a failed check does not stop the others) and returns them in order.
 * Never throws for an unreachable or misbehaving API: that is a failed check.
 */
export async function runSmoke(opts: SmokeOptions): Promise<SmokeCheck[]> {
  const base = opts.url.replace(/\/+$/, '');
  const bearer = /^bearer\s+/i.test(opts.token) ? opts.token : `Bearer ${opts.token}`;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const checks: SmokeCheck[] = [];
  const requestIds: string[] = [];

  const call = async (method: string, path: string, init: { auth?: boolean; body?: unknown } = {}): Promise<Answer> => {
    const headers: Record<string, string> = { accept: 'application/json, text/html;q=0.9' };
    if (init.auth) headers.authorization = bearer;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };

  const check = async (name: string, body: () => Promise<string>): Promise<void> => {
    let result: SmokeCheck;
    try {
      result = { name, ok: true, detail: await body() };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const cause = e.cause?.code ?? e.cause?.message;
      result = {
        name,
        ok: false,
        detail: `${e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : e.message}${cause ? ` (${cause})` : ''}`,
      };
    }
    checks.push(result);
    opts.onCheck?.(result);
  };

  /** The request id of an answer: `x-request-id` (the service's) or, for API Gateway's own answers, `x-amzn-requestid`. */
  const requestIdOf = (a: Answer, allowGateway: boolean): string => {
    const id = a.headers.get('x-request-id') ?? (allowGateway ? a.headers.get('x-amzn-requestid') : null);
    if (!id) throw new Error(`no ${allowGateway ? 'x-request-id or x-amzn-requestid' : 'x-request-id'} header`);
    requestIds.push(id);
    return id;
  };

  await check('GET /openapi.json is an OpenAPI 3.1 document', async () => {
    const a = await call('GET', '/openapi.json');
    expectStatus(a, 200);
    const doc = a.json as Json | undefined;
    if (!doc || typeof doc !== 'object') throw new Error(`not JSON: ${snippet(a.text)}`);
    const problems = openApiProblems(doc);
    if (problems.length > 0) throw new Error(problems.slice(0, 5).join('; '));
    const operations = Object.values(doc.paths as Json).reduce(
      (n: number, item) => n + HTTP_METHODS.filter((m) => (item as Json)[m]).length,
      0,
    );
    return `openapi ${doc.openapi}, "${doc.info.title}" ${doc.info.version}, ${Object.keys(doc.paths).length} paths, ${operations} operations`;
  });

  await check('GET /docs is the HTML API reference', async () => {
    const a = await call('GET', '/docs');
    expectStatus(a, 200);
    const type = a.headers.get('content-type') ?? '';
    if (!/^text\/html\b/i.test(type)) throw new Error(`content-type ${type || '(none)'}, expected text/html`);
    if (!/<html[\s>]/i.test(a.text)) throw new Error(`no <html> element: ${snippet(a.text)}`);
    return `${type}, ${a.text.length} bytes`;
  });

  const missingId = `SMOKE-NOSUCH-${randomBytes(6).toString('hex').toUpperCase()}`;
  await check('a call without a token is 401 UNAUTHORIZED', async () => {
    const a = await call('GET', `/cooperatives/${missingId}`);
    expectEnvelope(a, 401, 'UNAUTHORIZED');
    return `401 UNAUTHORIZED, request id ${requestIdOf(a, true)}`;
  });

  await check(`authenticated read: GET /cooperatives/{id} of a missing cooperative is 404`, async () => {
    const a = await call('GET', `/cooperatives/${missingId}`, { auth: true });
    if (a.status === 401) throw new Error('401: the token is not accepted (issuer, audience, expiry? see docs/deploy.md#deploying-to-aws)');
    if (a.status === 403) throw new Error('403: the token is not an ADMIN token');
    const env = expectEnvelope(a, 404, 'COOPERATIVE_NOT_FOUND');
    return `404 COOPERATIVE_NOT_FOUND, request id ${sameRequestId(requestIdOf(a, false), env)}`;
  });

  await check('validation error: POST /batch/submit {} is 400 VALIDATION_ERROR with details', async () => {
    const a = await call('POST', '/batch/submit', { auth: true, body: {} });
    if (a.status === 403) throw new Error('403: the token is not an ADMIN token');
    const env = expectEnvelope(a, 400, 'VALIDATION_ERROR');
    const details = env.details as unknown;
    if (!Array.isArray(details) || details.length === 0) throw new Error('error.details is not a non-empty array');
    const bad = details.find((d: Json) => typeof d?.path !== 'string' || typeof d?.message !== 'string');
    if (bad !== undefined) throw new Error(`a detail is not {path, message}: ${JSON.stringify(bad)}`);
    const id = sameRequestId(requestIdOf(a, false), env);
    return `400 VALIDATION_ERROR, ${details.length} details (${details
      .slice(0, 3)
      .map((d: Json) => d.path)
      .join(', ')}${details.length > 3 ? ', …' : ''}), request id ${id}`;
  });

  await check('every answer carries a distinct request id', async () => {
    if (requestIds.length < 3) throw new Error(`only ${requestIds.length} of the 3 calls that must carry one did`);
    if (new Set(requestIds).size !== requestIds.length) throw new Error(`repeated request ids: ${requestIds.join(', ')}`);
    return requestIds.join(', ');
  });

  return checks;
}

/**
 * Structural problems of an OpenAPI 3.1 document (empty when none): version 3.1.x, info with
 * title and version, paths whose operations each have responses, local `$ref`s that resolve,
 * and the operations this smoke test calls.
 */
export function openApiProblems(doc: Json): string[] {
  const problems: string[] = [];
  if (typeof doc.openapi !== 'string' || !/^3\.1\.\d+$/.test(doc.openapi))
    problems.push(`openapi is ${JSON.stringify(doc.openapi)}, expected 3.1.x`);
  if (typeof doc.info?.title !== 'string' || typeof doc.info?.version !== 'string')
    problems.push('info.title and info.version are required strings');
  const paths = doc.paths as Json | undefined;
  if (!paths || typeof paths !== 'object' || Object.keys(paths).length === 0) {
    problems.push('paths is empty');
    return problems;
  }
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/')) problems.push(`path ${path} does not start with /`);
    for (const m of HTTP_METHODS) {
      const op = (item as Json)?.[m] as Json | undefined;
      if (op && (typeof op.responses !== 'object' || Object.keys(op.responses).length === 0))
        problems.push(`${m.toUpperCase()} ${path} has no responses`);
    }
  }
  if (!paths[READ_PATH]?.get) problems.push(`GET ${READ_PATH} is not described`);
  if (!paths[SUBMIT_PATH]?.post) problems.push(`POST ${SUBMIT_PATH} is not described`);
  const refs = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.add(v);
        else walk(v);
      }
    }
  };
  walk(doc);
  for (const ref of refs) {
    if (!ref.startsWith('#/')) continue;
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((n, part) => (n as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    if (target === undefined) problems.push(`$ref ${ref} does not resolve`);
  }
  return problems;
}

function expectStatus(a: Answer, status: number): void {
  if (a.status !== status) throw new Error(`status ${a.status}, expected ${status}: ${snippet(a.text)}`);
}

/** Asserts the service's error envelope (docs/api/conventions.md#http-and-errors) with `code`; returns `error`. */
function expectEnvelope(a: Answer, status: number, code: string): Json {
  expectStatus(a, status);
  const error = (a.json as Json | undefined)?.error as Json | undefined;
  if (!error || typeof error !== 'object') throw new Error(`no error envelope: ${snippet(a.text)}`);
  if (error.code !== code) throw new Error(`error.code ${JSON.stringify(error.code)}, expected ${code}`);
  if (typeof error.message !== 'string' || error.message === '') throw new Error('error.message missing');
  if (typeof error.docs !== 'string' || !error.docs.endsWith(`/errors#${code}`))
    throw new Error(`error.docs ${JSON.stringify(error.docs)} does not link /errors#${code}`);
  return error;
}

/** The header's request id, which must equal the envelope's `request_id`. */
function sameRequestId(header: string, error: Json): string {
  if (error.request_id !== header)
    throw new Error(`error.request_id ${JSON.stringify(error.request_id)} differs from the x-request-id header ${header}`);
  return header;
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 160)}…` : flat || '(empty body)';
}
