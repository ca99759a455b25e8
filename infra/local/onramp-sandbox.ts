/**
 * Local fiat on-ramp sandbox (MFI deposits, docs/api/lending.md#mfi-deposits): the on-ramp's HTTP API on a loopback
 * port, in memory, delivering USDC on the local chain and sending Standard Webhooks-signed events.
 * `HttpOnRamp` (shared/adapters/onramp/http-onramp.ts, where the protocol is documented) talks to
 * it exactly as to the real on-ramp.
 *
 * API (every request: `Authorization: Bearer <api_key>`, `X-Timestamp`, `X-Signature` as the
 * payout provider's API; 401 otherwise):
 * - `POST /v1/onramp/orders` (`Idempotency-Key` = `reference` when given) → 201 new order, 200 the
 *   order that reference already has
 * - `GET /v1/onramp/orders/{ramp_payment_id}` → 200 order, 404 ORDER_NOT_FOUND
 * - `GET /v1/sandbox/stats` (sandbox only, no auth) → counters
 * Errors `{error: {code, message, details?}}`: 400 VALIDATION_ERROR, 401, 404, 405, 413, 415,
 * 422 UNSUPPORTED_CURRENCY / AMOUNT_TOO_SMALL.
 *
 * Behaviour: an order settles `settleMs` after creation (default env ONRAMP_SANDBOX_SETTLE_MS, else
 * 2000): the sandbox delivers the USDC to `destination.address` with the injected `deliverUsdc`
 * (the local stack mints the local TestUSDC from the on-ramp dev account), marks the order
 * COMPLETED with the transfer's tx hash and sends `onramp.order.completed`. The USDC amount is
 * `floor(source_amount × 10^6 / rate)` micro-USDC at the fixed sandbox rates {@link SANDBOX_ONRAMP_RATES}
 * (UGX 3700, KES 129, USD 1 per USD). A `source_amount` ending in `13` completes and is then
 * reversed `reverseMs` later (default 1000): status REVERSED, `onramp.order.reversed`. A delivery
 * that throws fails the order (`onramp.order.failed`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import { Webhook } from 'standardwebhooks';
import { ulid } from 'ulid';
import { createPublicClient, createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { testUsdcAbi } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { verifyProviderRequest } from '../../shared/adapters/payout-provider/signing';
import { listenOnLoopback, readBoundedBody, sendJson } from './loopback';

/** Fixed sandbox conversion rates: units of the source currency per USD (so per USDC). */
const SANDBOX_ONRAMP_RATES: Readonly<Record<string, number>> = { UGX: 3700, KES: 129, USD: 1 };

/** Development credentials of the local on-ramp sandbox (README.md#configuration). */
export const DEV_ONRAMP_CREDENTIALS = { api_key: 'onramp_sandbox_key_local', api_secret: 'onramp_sandbox_secret_local_only' };
/** Development Standard Webhooks secret of the local on-ramp (override with ONRAMP_WEBHOOK_SECRET). */
export const DEV_ONRAMP_WEBHOOK_SECRET = 'whsec_Y29mZmVlLXRyYWNlLWxvY2FsLW9ucmFtcC13ZWJob29rLXNlY3JldA==';

/** Micro-USDC the sandbox delivers for `amount` whole units of `currency` (floor). */
export function sandboxUsdcMicro(currency: string, amount: number): bigint {
  const rate = SANDBOX_ONRAMP_RATES[currency];
  if (rate === undefined) throw new RangeError(`unsupported currency ${currency}`);
  return (BigInt(amount) * 1_000_000n) / BigInt(rate);
}

export interface OnRampSandboxOptions {
  port?: number;
  apiKey: string;
  apiSecret: string;
  /** Where webhooks go; a function is read at each delivery. */
  webhookUrl: string | (() => string);
  /** Standard Webhooks signing secret, `whsec_<base64>`. */
  webhookSecret: string;
  /** Creation → completion, ms (default env ONRAMP_SANDBOX_SETTLE_MS, else 2000). */
  settleMs?: number;
  /** Completion → reversal of the `…13` amounts, ms (default 1000). */
  reverseMs?: number;
  /** Sends `amountMicro` USDC to `to` on the chain; returns the transaction hash. */
  deliverUsdc?: (to: `0x${string}`, amountMicro: bigint) => Promise<string>;
  log?: (line: string) => void;
}

interface OnRampSandboxStats {
  ordersCreated: number;
  ordersCompleted: number;
  ordersReversed: number;
  ordersFailed: number;
  webhooksSent: number;
  webhooksFailed: number;
  requests: number;
}

export interface OnRampSandbox {
  url: string;
  port: number;
  stop(): Promise<void>;
  stats(): OnRampSandboxStats;
  /** Sets (or replaces) the USDC delivery, e.g. once the local TestUSDC is deployed. */
  setDeliverUsdc(fn: (to: `0x${string}`, amountMicro: bigint) => Promise<string>): void;
}

interface SandboxOrder {
  ramp_payment_id: string;
  reference: string;
  status: 'PENDING' | 'COMPLETED' | 'FAILED' | 'REVERSED';
  source: { currency: string; amount: number };
  destination: { network: 'evm'; address: string };
  asset: 'USDC';
  usdc_amount: string;
  rate: string;
  transfer_tx_hash: string | null;
  failure_reason: string | null;
  created_at: string;
  completed_at: string | null;
  reversed_at: string | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Array<{ path: string; message: string }>,
  ) {
    super(message);
  }
}

const MAX_BODY_BYTES = 64 * 1024;
const WEBHOOK_ATTEMPTS = 3;
const WEBHOOK_RETRY_MS = 200;

const OrderRequestSchema = v.strictObject({
  reference: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'required: 1-128 characters of A-Z a-z 0-9 . _ : -')),
  source: v.strictObject({
    currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')),
    amount: v.pipe(
      v.number(),
      v.safeInteger('must be an integer'),
      v.minValue(1, 'must be positive'),
      v.maxValue(1e12, 'must be at most 10^12'),
    ),
  }),
  destination: v.strictObject({
    network: v.literal('evm', 'must be "evm"'),
    address: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address')),
  }),
  asset: v.literal('USDC', 'must be "USDC"'),
});

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function microToDecimal(micro: bigint): string {
  const whole = micro / 1_000_000n;
  const frac = (micro % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

/** Starts the sandbox on 127.0.0.1. @throws TypeError on a malformed webhook secret; the listen error when the port is taken */
export async function startOnRampSandbox(opts: OnRampSandboxOptions): Promise<OnRampSandbox> {
  const log = opts.log ?? (() => undefined);
  const settleMs = opts.settleMs ?? Number(process.env.ONRAMP_SANDBOX_SETTLE_MS ?? 2000);
  const reverseMs = opts.reverseMs ?? 1000;
  const webhook = new Webhook(opts.webhookSecret);
  let deliverUsdc = opts.deliverUsdc;
  const orders = new Map<string, SandboxOrder>();
  const byReference = new Map<string, SandboxOrder>();
  const timers = new Set<NodeJS.Timeout>();
  const stopController = new AbortController();
  let stopped = false;
  const stats: OnRampSandboxStats = {
    ordersCreated: 0,
    ordersCompleted: 0,
    ordersReversed: 0,
    ordersFailed: 0,
    webhooksSent: 0,
    webhooksFailed: 0,
    requests: 0,
  };

  const later = (ms: number, fn: () => void | Promise<void>): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!stopped) void Promise.resolve(fn()).catch((err) => log(`onramp-sandbox: ${(err as Error).stack ?? String(err)}`));
    }, ms);
    timers.add(t);
  };
  const pause = (ms: number) => new Promise<void>((resolve) => later(ms, resolve));

  async function send(
    type: 'onramp.order.completed' | 'onramp.order.reversed' | 'onramp.order.failed',
    order: SandboxOrder,
  ): Promise<void> {
    const id = `msg_${ulid()}`;
    const payload = JSON.stringify({
      type,
      data: {
        ramp_payment_id: order.ramp_payment_id,
        reference: order.reference,
        source_currency: order.source.currency,
        source_amount: order.source.amount,
        usdc_amount: order.usdc_amount,
        transfer_tx_hash: order.transfer_tx_hash,
        completed_at: order.completed_at,
        reversed_at: order.reversed_at,
        failure_reason: order.failure_reason,
      },
    });
    for (let attempt = 1; attempt <= WEBHOOK_ATTEMPTS && !stopped; attempt++) {
      if (attempt > 1) await pause(WEBHOOK_RETRY_MS);
      if (stopped) return;
      const now = new Date();
      let problem: string;
      try {
        const res = await fetch(typeof opts.webhookUrl === 'function' ? opts.webhookUrl() : opts.webhookUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'onramp-sandbox/1',
            'webhook-id': id,
            'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
            'webhook-signature': webhook.sign(id, now, payload),
          },
          body: payload,
          signal: AbortSignal.any([stopController.signal, AbortSignal.timeout(5000)]),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) {
          stats.webhooksSent++;
          log(`onramp-sandbox webhook ${type} ${order.reference} ${id} → ${res.status}`);
          return;
        }
        problem = `HTTP ${res.status}`;
      } catch (err) {
        if (stopped) return;
        problem = (err as Error).message;
      }
      log(`onramp-sandbox webhook ${type} ${order.reference} attempt ${attempt}/${WEBHOOK_ATTEMPTS} failed: ${problem}`);
    }
    if (!stopped) stats.webhooksFailed++;
  }

  async function settle(order: SandboxOrder): Promise<void> {
    const micro = sandboxUsdcMicro(order.source.currency, order.source.amount);
    try {
      if (!deliverUsdc) throw new Error('no USDC delivery configured');
      order.transfer_tx_hash = await deliverUsdc(order.destination.address as `0x${string}`, micro);
    } catch (err) {
      order.status = 'FAILED';
      order.failure_reason = `DELIVERY_FAILED: ${(err as Error).message}`;
      stats.ordersFailed++;
      log(`onramp-sandbox order ${order.ramp_payment_id} (${order.reference}) FAILED: ${order.failure_reason}`);
      await send('onramp.order.failed', order);
      return;
    }
    order.status = 'COMPLETED';
    order.usdc_amount = microToDecimal(micro);
    order.completed_at = new Date().toISOString();
    stats.ordersCompleted++;
    log(
      `onramp-sandbox order ${order.ramp_payment_id} (${order.reference}) COMPLETED: ${order.usdc_amount} USDC → ${order.destination.address} (${order.transfer_tx_hash})`,
    );
    await send('onramp.order.completed', order);
    if (String(order.source.amount).endsWith('13')) {
      later(reverseMs, async () => {
        order.status = 'REVERSED';
        order.reversed_at = new Date().toISOString();
        stats.ordersReversed++;
        log(`onramp-sandbox order ${order.ramp_payment_id} (${order.reference}) REVERSED (amount ending in 13)`);
        await send('onramp.order.reversed', order);
      });
    }
  }

  function postOrder(body: unknown, idempotencyKey: string | undefined): [number, unknown] {
    const parsed = v.safeParse(OrderRequestSchema, body, { abortEarly: false });
    const details = parsed.success ? [] : parsed.issues.map((i) => ({ path: v.getDotPath(i) ?? '(body)', message: i.message }));
    if (idempotencyKey !== undefined && parsed.success && idempotencyKey !== parsed.output.reference)
      details.push({ path: 'headers.idempotency-key', message: 'must equal reference' });
    if (!parsed.success || details.length) throw new HttpError(400, 'VALIDATION_ERROR', 'The request body is invalid.', details);
    const { reference, source, destination } = parsed.output;
    const existing = byReference.get(reference);
    if (existing) return [200, existing];
    const rate = SANDBOX_ONRAMP_RATES[source.currency];
    if (rate === undefined)
      throw new HttpError(
        422,
        'UNSUPPORTED_CURRENCY',
        `The on-ramp does not take ${source.currency}; supported: ${Object.keys(SANDBOX_ONRAMP_RATES).join(', ')}.`,
      );
    if (sandboxUsdcMicro(source.currency, source.amount) < 1n)
      throw new HttpError(422, 'AMOUNT_TOO_SMALL', 'The amount converts to less than 0.000001 USDC.');
    const order: SandboxOrder = {
      ramp_payment_id: `ramp_${ulid()}`,
      reference,
      status: 'PENDING',
      source: { currency: source.currency, amount: source.amount },
      destination: { network: 'evm', address: destination.address },
      asset: 'USDC',
      usdc_amount: '0',
      rate: String(rate),
      transfer_tx_hash: null,
      failure_reason: null,
      created_at: new Date().toISOString(),
      completed_at: null,
      reversed_at: null,
    };
    orders.set(order.ramp_payment_id, order);
    byReference.set(reference, order);
    stats.ordersCreated++;
    later(settleMs, () => settle(order));
    log(
      `onramp-sandbox order ${order.ramp_payment_id} (${reference}) created: ${source.amount} ${source.currency} → USDC to ${destination.address}`,
    );
    return [201, order];
  }

  const readBody = (req: IncomingMessage) =>
    readBoundedBody(req, MAX_BODY_BYTES, () => new HttpError(413, 'PAYLOAD_TOO_LARGE', 'The body exceeds 64 KiB.'));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    const method = req.method ?? 'GET';
    const rawPath = req.url ?? '/';
    const url = new URL(rawPath, 'http://sandbox.invalid');
    const raw = await readBody(req);
    if (method === 'GET' && url.pathname === '/v1/sandbox/stats') return sendJson(res, 200, stats);
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!m || !safeEqual(m[1] ?? '', opts.apiKey)) throw new HttpError(401, 'UNAUTHORIZED', 'Missing or invalid API key.');
    const check = verifyProviderRequest({
      secret: opts.apiSecret,
      method,
      path: rawPath,
      body: raw,
      timestamp: req.headers['x-timestamp'] as string | undefined,
      signature: req.headers['x-signature'] as string | undefined,
    });
    if (!check.ok) throw new HttpError(401, 'INVALID_SIGNATURE', `Request signature invalid (${check.reason}).`);
    const path = url.pathname.replace(/\/+$/, '');
    if (path === '/v1/onramp/orders') {
      if (method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} not allowed on ${path}.`);
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
        throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json.');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new HttpError(400, 'VALIDATION_ERROR', 'The body is not valid JSON.');
      }
      const key = req.headers['idempotency-key'];
      const [status, out] = postOrder(body, Array.isArray(key) ? key[0] : key);
      return sendJson(res, status, out);
    }
    if (path.startsWith('/v1/onramp/orders/') && path.split('/').length === 5) {
      if (method !== 'GET') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} not allowed on ${path}.`);
      const order = orders.get(decodeURIComponent(path.slice('/v1/onramp/orders/'.length)));
      if (!order) throw new HttpError(404, 'ORDER_NOT_FOUND', 'No such order.');
      return sendJson(res, 200, order);
    }
    throw new HttpError(404, 'ROUTE_NOT_FOUND', `No route ${method} ${path}.`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent || req.socket.destroyed) return;
      if (err instanceof HttpError)
        sendJson(res, err.status, { error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } });
      else {
        sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Unexpected sandbox error.' } });
        log(`onramp-sandbox ${req.method} ${req.url} → 500 ${(err as Error)?.stack ?? String(err)}`);
      }
    });
  });
  const listening = await listenOnLoopback(server, opts.port ?? 0);
  const url = `http://127.0.0.1:${listening.port}`;
  log(`onramp-sandbox listening on ${url} (settle ${settleMs} ms)`);
  return {
    url,
    port: listening.port,
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      stopController.abort();
      await listening.close();
    },
    stats: () => ({ ...stats }),
    setDeliverUsdc(fn) {
      deliverUsdc = fn;
    },
  };
}

/**
 * The local on-ramp's USDC delivery: `mint(to, amount)` on the local TestUSDC, signed by the dev
 * on-ramp account (which holds MINTER_ROLE), one at a time (one account, so nonces in order), each
 * awaited until mined. @returns the delivery's `deliverUsdc`; it throws when the mint reverts or the chain fails
 */
export function mintingDelivery(input: {
  rpcUrl: string;
  chainId: number;
  minterKey: `0x${string}`;
  usdcAddress: `0x${string}`;
}): (to: `0x${string}`, amountMicro: bigint) => Promise<string> {
  const chain = ledgerChain(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 1 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ account: privateKeyToAccount(input.minterKey), chain, transport });
  let queue: Promise<unknown> = Promise.resolve();
  return (to, amountMicro) => {
    const run = queue.then(async () => {
      const hash = await wallet.writeContract({
        address: input.usdcAddress,
        abi: testUsdcAbi,
        functionName: 'mint',
        args: [to, amountMicro],
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 });
      if (receipt.status !== 'success') throw new Error(`TestUSDC mint ${hash} reverted`);
      return hash;
    });
    queue = run.catch(() => undefined);
    return run;
  };
}
