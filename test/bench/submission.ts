/**
 * POST /batch/submit's documented answers, for the benchmarks: 201 (the mint is mined, the body is
 * `{success, data: {batch_id, token_id, chain_tx_hash, …}}`) or 202 (accepted: `{job_id, status,
 * batch_id}`; the mint lands later through the single ledger writer, docs/api/conventions.md#http-and-errors).
 * On a chain with block time (docs/ledger.md#the-local-chain) concurrent submissions get 202 as a
 * matter of course; either is a success.
 */

import { parseBlockTimeSeconds } from '../../infra/local/hardhat-node';

/** The local chain's block time a bench's stack runs with (`text`, default the bench's LEDGER_BLOCK_TIME_S; unset: 2 s), for the figures' headings. */
export function blockTimeLabel(text = process.env.LEDGER_BLOCK_TIME_S): string {
  const s = parseBlockTimeSeconds(text);
  return s === 0 ? 'LEDGER_BLOCK_TIME_S=0 (each transaction mined at once)' : `LEDGER_BLOCK_TIME_S=${s} (a block every ${s} s)`;
}

/** One API call of a bench: method, path, bearer token, optional JSON body and headers → status and parsed JSON body. */
export type Call = (
  method: string,
  path: string,
  tok: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: any; retryAfterS?: number }>;

/** The benches' API caller against the stack at `url`: JSON in, JSON out, the token as a Bearer header. */
export function apiCaller(url: string): Call {
  return async (method, path, tok, body, headers) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${tok}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const retryAfter = Number(res.headers.get('retry-after') ?? Number.NaN);
    return { status: res.status, body: (await res.json()) as any, ...(Number.isFinite(retryAfter) ? { retryAfterS: retryAfter } : {}) };
  };
}

/** The batch id of an accepted submission (201 or 202) and whether it was minted by then; throws for any other answer. */
export function acceptedBatch(r: { status: number; body: any }): { batchId: string; minted: boolean } {
  if (r.status === 201) return { batchId: r.body.data.batch_id as string, minted: true };
  if (r.status === 202 && typeof r.body?.batch_id === 'string') return { batchId: r.body.batch_id as string, minted: false };
  throw new Error(`submission failed: ${r.status} ${JSON.stringify(r.body)}`);
}

/**
 * Polls GET /batch/{id} (every 100 ms) until the batch's mint is on chain (`chain_tx_hash` set);
 * returns the batch view. Throws after `timeoutMs` (default 120 s).
 */
export async function untilMinted(call: Call, tok: string, batchId: string, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call('GET', `/batch/${batchId}`, tok);
    if (r.status === 200 && r.body.chain_tx_hash) return r.body;
    if (Date.now() > deadline)
      throw new Error(`batch ${batchId} not minted within ${timeoutMs / 1000} s: ${r.status} ${JSON.stringify(r.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The purchase order a POST /purchase-orders answer names, once it is created: 201 at once; 202
 * (above 40 batches, CREATING) after polling GET /purchase-orders/{id} (every 250 ms) until the
 * order worker has bound its batches. Throws for another answer, a FAILED creation, or after `timeoutMs`.
 */
export async function createdOrder(call: Call, tok: string, r: { status: number; body: any }, timeoutMs = 300_000): Promise<any> {
  if (r.status === 201) return r.body;
  if (r.status !== 202) throw new Error(`purchase order: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const g = await call('GET', `/purchase-orders/${r.body.purchase_order_id}`, tok);
    if (g.status === 200 && g.body.status !== 'CREATING' && g.body.status !== 'RELEASING') {
      if (g.body.status !== 'DRAFT') throw new Error(`purchase order ${g.body.status}: ${JSON.stringify(g.body.creation_error)}`);
      return g.body;
    }
    if (Date.now() > deadline)
      throw new Error(`purchase order not created within ${timeoutMs / 1000} s: ${g.status} ${JSON.stringify(g.body).slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * `call` as a well-behaved client makes it: a 503 answer (an outage the service names, e.g. its
 * evidence store timing out under load; nothing was changed) is retried after its `Retry-After`
 * (at most 5 s here), up to `attempts` times in all; `onRetry` counts each retry for the report.
 */
export function retrying503(call: Call, onRetry: () => void, attempts = 5): Call {
  return async (method, path, tok, body, headers) => {
    for (let attempt = 1; ; attempt++) {
      const r = await call(method, path, tok, body, headers);
      if (r.status !== 503 || attempt >= attempts) return r;
      onRetry();
      await new Promise((resolve) => setTimeout(resolve, Math.min(5, r.retryAfterS ?? 1) * 1000));
    }
  };
}
