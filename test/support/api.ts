import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signDevToken, type DevTokenClaims } from '../../infra/local/dev-keys';
import { readLocalStackFile, type LocalStackFile } from '../../infra/local/stack-file';

/** DDS_XML_INLINE_MAX_BYTES of the local stack under test (test/setup/global-setup.ts): larger statement XML is answered 303. */
export const DDS_XML_INLINE_MAX_BYTES = 65_536;

/** Base URL of the local stack under test (set by test/setup/global-setup.ts). */
export function stackUrl(): string {
  const url = process.env.TEST_STACK_URL;
  if (!url) throw new Error('TEST_STACK_URL is not set: integration tests run in the int project (global setup starts the stack)');
  return url;
}

export function stackDataDir(): string {
  return process.env.TEST_STACK_DATA_DIR!;
}

/**
 * The stack file of the local stack under test (its API URL, the URLs of its parts and the
 * contract addresses; infra/local/stack-file.ts). @throws Error when that stack wrote none
 */
export function localStack(): LocalStackFile {
  const file = readLocalStackFile(stackDataDir());
  if (!file) throw new Error(`no stack.json in ${stackDataDir()}: is the local stack under test running?`);
  return file;
}

/** A token the local stack accepts. */
export function token(claims: DevTokenClaims, ttl = 3600): Promise<string> {
  return signDevToken(claims, ttl, stackDataDir());
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** Calls the API; JSON bodies are sent and parsed. */
export async function api<T = any>(
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${stackUrl()}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** Polls `read` until `done` holds or the timeout passes; returns the last value. */
export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!done(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    last = await read();
  }
  return last;
}

/**
 * A ledger-backed write once it landed (POST /batch/submit, PATCH /batch/{id}/stage): its batch and
 * the transaction that holds its record — from the synchronous answer (201 `{data}`, 200), or, when
 * the receipt came after the request's wait and the answer was 202 (a chain with block time, a
 * loaded machine: docs/ledger.md#the-pipelined-writer), from its job polled until it is no longer
 * PENDING. Throws on any other answer, a job that did not complete, or one still open after `timeoutMs`.
 */
export async function landed(
  res: Pick<ApiResponse, 'status' | 'body'>,
  tok: string,
  timeoutMs = 30_000,
): Promise<{ batchId: string; txHash: string }> {
  if (res.status === 201 && res.body?.data) return { batchId: res.body.data.batch_id, txHash: res.body.data.chain_tx_hash };
  if (res.status === 200) return { batchId: res.body.batch_id, txHash: res.body.chain_tx_hash };
  if (res.status !== 202) throw new Error(`ledger-backed write not accepted: ${res.status} ${JSON.stringify(res.body)}`);
  const job = await waitFor(
    () => api('GET', `/jobs/${res.body.job_id}`, { token: tok }),
    (r) => r.body?.status !== 'PENDING',
    timeoutMs,
    250,
  );
  if (job.body?.status !== 'COMPLETE') throw new Error(`job ${res.body.job_id} did not complete: ${JSON.stringify(job.body)}`);
  return { batchId: job.body.batch_id, txHash: job.body.tx_hash };
}

/** Lines of the local SNS stand-in (`notifications.jsonl`). */
export function notifications(): Array<{
  topic: string;
  subject: string;
  message: string;
  attributes: Record<string, string>;
  published_at: string;
}> {
  try {
    return readFileSync(join(stackDataDir(), 'notifications.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

let seq = 0;
/** A unique id for test data. */
export function uid(prefix: string): string {
  seq += 1;
  return `${prefix}-${Date.now().toString(36)}-${seq}`;
}
