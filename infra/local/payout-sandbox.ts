/**
 * Local payout-provider sandbox (docs/api/payouts.md#payout-sandbox): the provider's HTTP API on a loopback port, in
 * memory, sending Standard Webhooks-signed settlement events. `HttpPayoutProvider` talks to it
 * exactly as to the real provider.
 *
 * API (all requests: `Authorization: Bearer <api_key>`, `X-Timestamp`, `X-Signature`, see
 * `shared/adapters/payout-provider/signing.ts`; 401 otherwise):
 * - `POST /v1/quotes` → 200 quote (valid 60 s)
 * - `POST /v1/orders` (`Idempotency-Key: <reference>`) → 201 new order, 200 existing order for that reference
 * - `GET /v1/orders/{order_id}`, `GET /v1/orders?reference=<ref>` → 200 order, 404 when none
 * - `GET /v1/recipients?phone=<E.164>` → 200 `{phone, network, account_holder: {name} | null}`, 404 ACCOUNT_NOT_FOUND (not a wallet)
 * - `GET /v1/balances` → 200 `{balances: [{currency: "USD", amount: "<decimal>"}]}`: the merchant balance, which
 *   falls by each settled order's deposit amount (it is not checked before paying: it may go negative)
 * Sandbox only, without credentials: `GET /v1/sandbox/stats` (counters) and `PUT /v1/sandbox/balance`
 * `{amount: "<USD decimal>"}` (sets the merchant balance, e.g. low to try the balance alarm).
 * Errors are `{error: {code, message, details?}}`: 400 validation (bodies checked with the valibot
 * schemas of payout-sandbox-requests.ts; `details` = `[{path, message}]`), 401, 404, 405, 413, 415, 422 business rejection.
 *
 * Test phones: +256700000001 every order fails; +256700000002 orders alternate: the first fails, the
 * next settles, the third fails again… (so each payout to it, one after another, fails once then settles); +256700000003 settles but no webhook is ever sent; +256700000004 the provider is
 * unreachable (the socket of `POST /v1/orders` is destroyed unanswered); +256700000005 the wallet's holder is someone else (the lookup names another person);
 * +256700000008 is not a wallet (the lookup answers 404, an order fails with `INVALID_MSISDN`); any other settles after `settleMs`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomInt } from 'node:crypto';
import Big from 'big.js';
import * as v from 'valibot';
import { Webhook } from 'standardwebhooks';
import { ulid } from 'ulid';
import { verifyProviderRequest } from '../../shared/adapters/payout-provider/signing';
import { listenOnLoopback, readBoundedBody, sendJson } from './loopback';
import {
  HttpError,
  MAX_BODY_BYTES,
  OrderRequestSchema,
  QUOTE_TTL_MS,
  QuoteRequestSchema,
  RATE_RE,
  WEBHOOK_ATTEMPTS,
  WEBHOOK_RETRY_MS,
  WEBHOOK_TIMEOUT_MS,
  floorUgx,
  invalidBody,
  isObject,
  networkOf,
  safeEqual,
  toDetails,
} from './payout-sandbox-requests';

/** The sandbox's test phone numbers (docs/api/payouts.md#payout-sandbox), like a card network's test cards. */
export const SANDBOX_TEST_PHONES = {
  ALWAYS_FAILS: '+256700000001',
  FAILS_FIRST: '+256700000002',
  NO_WEBHOOK: '+256700000003',
  UNREACHABLE: '+256700000004',
  /** The wallet's holder is someone else (the account-holder lookup names another person). */
  OTHER_HOLDER: '+256700000005',
  /**
   * This provider is unreachable for new orders to this number (the socket of `POST /v1/orders` is
   * destroyed, as for UNREACHABLE) while its look-ups answer: with a second provider configured
   * (PAYOUT_PROVIDERS), the payout fails over to it (docs/api/payouts.md#payout-providers-and-failover).
   */
  PRIMARY_DOWN: '+256700000006',
  /** The number is not a mobile-money wallet: the account-holder lookup answers 404, an order fails with INVALID_MSISDN (not retryable). */
  NOT_A_WALLET: '+256700000008',
} as const;

/** Options of {@link startPayoutSandbox}. */
export interface PayoutSandboxOptions {
  /** TCP port on 127.0.0.1; 0 or absent picks a free one. */
  port?: number;
  apiKey: string;
  apiSecret: string;
  /** Where webhooks go; a function is read at each delivery (the receiver may start later). */
  webhookUrl: string | (() => string);
  /** Standard Webhooks signing secret, `whsec_<base64>`. */
  webhookSecret: string;
  /** Delay from order creation to settlement/failure, ms (default env PAYOUT_SANDBOX_SETTLE_MS, else 2000). */
  settleMs?: number;
  /** UGX per USD, decimal string (default env PAYOUT_SANDBOX_RATE, else "3700.25"). */
  rate?: string;
  /** The merchant balance at start, USD decimal string (default env PAYOUT_SANDBOX_BALANCE_USD, else "1000000"). */
  balanceUsd?: string;
  faults?: {
    /** Fraction [0,1] of new-order requests answered 422 ORDER_REJECTED. */
    rejectRate?: number;
    /** Fraction [0,1] of webhooks never sent. */
    dropWebhookRate?: number;
    /**
     * Fraction [0,1] of references for which this provider is unreachable: every `POST /v1/orders`
     * with such a reference has its socket destroyed (decided once per reference, so all attempts fail).
     */
    unreachableRate?: number;
    /** Random source in [0,1) for the faults (default Math.random). */
    random?: () => number;
  };
  log?: (line: string) => void;
}

/** Counters since start. */
interface PayoutSandboxStats {
  ordersCreated: number;
  ordersSettled: number;
  ordersFailed: number;
  /** New-order requests answered 422 (fault injection, expired/unknown quote, amount too small). */
  ordersRejected: number;
  /** Webhook events delivered (a 2xx received). */
  webhooksSent: number;
  /** Webhook events not sent because of `faults.dropWebhookRate`. */
  webhooksDropped: number;
  /** Webhook events given up after all delivery attempts failed. */
  webhooksFailed: number;
  /** Webhook POSTs made, including retries. */
  webhookAttempts: number;
  /** HTTP requests received (including those whose socket was destroyed). */
  requests: number;
  /** TCP connections accepted. */
  connections: number;
  /** `POST /v1/orders` requests for the unreachable test phone, answered by destroying the socket. */
  unreachableDrops: number;
  /** How many times an order with each reference settled (must never exceed 1). */
  settledPerReference: Record<string, number>;
}

/** A running sandbox. */
export interface PayoutSandbox {
  /** Base URL, `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Closes the server and its connections, cancels pending settlements and webhook deliveries. */
  stop(): Promise<void>;
  stats(): PayoutSandboxStats;
  /** Changes where subsequent webhooks go. */
  setWebhookUrl(url: string): void;
  /** Sets the merchant balance (USD decimal string, at most 6 decimals, may be negative). @throws TypeError on anything else */
  setBalance(usd: string): void;
  /** The merchant balance, USD decimal string. */
  balance(): string;
}

interface SandboxOrder {
  order_id: string;
  reference: string;
  quote_id: string | null;
  status: 'PENDING' | 'SETTLED' | 'FAILED';
  deposit: { channel: 'MERCHANT_BALANCE'; currency: 'USD'; amount: string };
  payout: { channel: 'MOBILE_MONEY'; currency: 'UGX'; network: string | null; amount: number };
  exchange_rate: string;
  recipient: { phone: string; name: string };
  mobile_money_transaction_id: string | null;
  settled_at: string | null;
  failure_reason: string | null;
  created_at: string;
  updated_at: string;
}

interface Quote {
  quote_id: string;
  rate: string;
  source_amount: string | null;
  target_amount: string | null;
  expiresAtMs: number;
}

/**
 * Starts the sandbox on 127.0.0.1.
 * @returns the running sandbox (URL, port, stats, stop)
 * @throws TypeError on an invalid rate, webhook secret or fault rate; the listen error when the port is taken
 */
export async function startPayoutSandbox(opts: PayoutSandboxOptions): Promise<PayoutSandbox> {
  const rate = opts.rate ?? process.env.PAYOUT_SANDBOX_RATE ?? '3700.25';
  if (!RATE_RE.test(rate) || new Big(rate).lte(0)) throw new TypeError(`payout sandbox: invalid rate ${rate}`);
  const envSettle = Number(process.env.PAYOUT_SANDBOX_SETTLE_MS);
  const settleMs = opts.settleMs ?? (process.env.PAYOUT_SANDBOX_SETTLE_MS && Number.isFinite(envSettle) ? envSettle : 2000);
  const rejectRate = opts.faults?.rejectRate ?? 0;
  const dropWebhookRate = opts.faults?.dropWebhookRate ?? 0;
  const unreachableRate = opts.faults?.unreachableRate ?? 0;
  /** Whether each reference was drawn unreachable (faults.unreachableRate). */
  const unreachableRefs = new Map<string, boolean>();
  for (const [name, v] of [
    ['rejectRate', rejectRate],
    ['unreachableRate', unreachableRate],
    ['dropWebhookRate', dropWebhookRate],
  ] as const) {
    if (!(v >= 0 && v <= 1)) throw new TypeError(`payout sandbox: faults.${name} must be within [0, 1]`);
  }
  const random = opts.faults?.random ?? Math.random;
  let balanceUsd = parseBalance(opts.balanceUsd ?? process.env.PAYOUT_SANDBOX_BALANCE_USD ?? '1000000');
  const webhook = new Webhook(opts.webhookSecret); // throws on a malformed secret
  const log = opts.log ?? (() => {});
  let webhookUrl: string | (() => string) = opts.webhookUrl;

  const orders = new Map<string, SandboxOrder>();
  const byReference = new Map<string, SandboxOrder>();
  const quotes = new Map<string, Quote>();
  const ordersPerPhone = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const stopController = new AbortController();
  let stopped = false;
  const stats: PayoutSandboxStats = {
    ordersCreated: 0,
    ordersSettled: 0,
    ordersFailed: 0,
    ordersRejected: 0,
    webhooksSent: 0,
    webhooksDropped: 0,
    webhooksFailed: 0,
    webhookAttempts: 0,
    requests: 0,
    connections: 0,
    unreachableDrops: 0,
    settledPerReference: {},
  };

  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!stopped) fn();
    }, ms);
    timers.add(t);
  };
  const pause = (ms: number) => new Promise<void>((resolve) => later(ms, resolve));

  // ---------------------------------------------------------------- webhooks

  async function deliver(type: 'order.settled' | 'order.failed', order: SandboxOrder): Promise<void> {
    const id = `msg_${ulid()}`;
    const payload = JSON.stringify({
      type,
      data: {
        order_id: order.order_id,
        reference: order.reference,
        amount_ugx: order.payout.amount,
        exchange_rate: order.exchange_rate,
        mobile_money_transaction_id: order.mobile_money_transaction_id,
        settled_at: order.settled_at,
        failure_reason: order.failure_reason,
      },
    });
    let problem = '';
    for (let attempt = 1; attempt <= WEBHOOK_ATTEMPTS && !stopped; attempt++) {
      if (attempt > 1) await pause(WEBHOOK_RETRY_MS);
      if (stopped) return;
      const target = typeof webhookUrl === 'function' ? webhookUrl() : webhookUrl;
      const now = new Date();
      stats.webhookAttempts++;
      try {
        const res = await fetch(target, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'payout-sandbox/1',
            'webhook-id': id,
            'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
            'webhook-signature': webhook.sign(id, now, payload),
          },
          body: payload,
          signal: AbortSignal.any([stopController.signal, AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)]),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) {
          stats.webhooksSent++;
          log(`payout-sandbox webhook ${type} ${order.reference} ${id} → ${res.status} (attempt ${attempt})`);
          return;
        }
        problem = `HTTP ${res.status}`;
      } catch (err) {
        if (stopped) return;
        const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
        problem = e?.name === 'TimeoutError' ? 'timeout' : (e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err));
      }
      log(`payout-sandbox webhook ${type} ${order.reference} ${id} attempt ${attempt}/${WEBHOOK_ATTEMPTS} failed: ${problem}`);
    }
    if (!stopped) stats.webhooksFailed++;
  }

  function finish(order: SandboxOrder, outcome: 'SETTLED' | 'FAILED', failureReason: string | null): void {
    const now = new Date().toISOString();
    order.status = outcome;
    order.updated_at = now;
    if (outcome === 'SETTLED') {
      order.settled_at = now;
      order.mobile_money_transaction_id = `MP${randomInt(10 ** 9, 10 ** 10)}`;
      balanceUsd = balanceUsd.minus(order.deposit.amount);
      stats.ordersSettled++;
      stats.settledPerReference[order.reference] = (stats.settledPerReference[order.reference] ?? 0) + 1;
    } else {
      order.failure_reason = failureReason;
      stats.ordersFailed++;
    }
    log(`payout-sandbox order ${order.order_id} (${order.reference}) ${outcome}${failureReason ? `: ${failureReason}` : ''}`);
    if (order.recipient.phone === SANDBOX_TEST_PHONES.NO_WEBHOOK) {
      log(`payout-sandbox no webhook for ${order.reference} (test phone ${SANDBOX_TEST_PHONES.NO_WEBHOOK})`);
      return;
    }
    if (dropWebhookRate > 0 && random() < dropWebhookRate) {
      stats.webhooksDropped++;
      log(`payout-sandbox webhook for ${order.reference} dropped (fault injection)`);
      return;
    }
    void deliver(outcome === 'SETTLED' ? 'order.settled' : 'order.failed', order);
  }

  // ---------------------------------------------------------------- endpoints

  function postQuote(body: unknown): [number, unknown] {
    if (!isObject(body)) throw new HttpError(400, 'VALIDATION_ERROR', 'The body must be a JSON object.');
    const parsed = v.safeParse(QuoteRequestSchema, body, { abortEarly: false });
    if (!parsed.success) throw invalidBody(toDetails(parsed.issues));
    const { source_amount: src, target_amount: tgt } = parsed.output;
    let source: string | null = null;
    let target: string | null = null;
    if (typeof src === 'string') {
      source = src;
      target = String(floorUgx(src, rate));
    } else if (typeof tgt === 'string') {
      source = new Big(tgt).div(rate).round(6, 3).toFixed(); // round up: buys at least the target
      target = String(floorUgx(source, rate));
    }
    const quote: Quote = {
      quote_id: `qt_${ulid()}`,
      rate,
      source_amount: source,
      target_amount: target,
      expiresAtMs: Date.now() + QUOTE_TTL_MS,
    };
    quotes.set(quote.quote_id, quote);
    return [
      200,
      {
        quote_id: quote.quote_id,
        source_currency: 'USD',
        target_currency: 'UGX',
        rate,
        source_amount: source,
        target_amount: target,
        expires_at: new Date(quote.expiresAtMs).toISOString(),
      },
    ];
  }

  function postOrder(body: unknown, idempotencyKey: string | undefined): [number, unknown] {
    if (!isObject(body)) throw new HttpError(400, 'VALIDATION_ERROR', 'The body must be a JSON object.');
    const parsed = v.safeParse(OrderRequestSchema, body, { abortEarly: false });
    const details = parsed.success ? [] : toDetails(parsed.issues);
    if (idempotencyKey !== undefined && idempotencyKey !== body.reference)
      details.push({ path: 'headers.idempotency-key', message: 'must equal reference' });
    if (!parsed.success || details.length) throw invalidBody(details);
    const { reference: ref, deposit: dep, payout: pay, recipient: rcp } = parsed.output;

    // From here to the insert there is no await: concurrent identical requests cannot both create.
    const existing = byReference.get(ref);
    if (existing) return [200, existing];

    let orderRate = rate;
    const quoteId = parsed.output.quote_id ?? null;
    if (quoteId !== null) {
      const q = quotes.get(quoteId);
      if (!q) {
        stats.ordersRejected++;
        throw new HttpError(422, 'QUOTE_NOT_FOUND', `No quote ${quoteId}.`);
      }
      if (q.expiresAtMs < Date.now()) {
        stats.ordersRejected++;
        throw new HttpError(422, 'QUOTE_EXPIRED', `Quote ${quoteId} expired at ${new Date(q.expiresAtMs).toISOString()}.`);
      }
      orderRate = q.rate;
    }
    if (rejectRate > 0 && random() < rejectRate) {
      stats.ordersRejected++;
      throw new HttpError(422, 'ORDER_REJECTED', 'The order was rejected by the provider (sandbox fault injection).');
    }
    const amountUgx = floorUgx(dep.amount, orderRate);
    if (amountUgx < 1) {
      stats.ordersRejected++;
      throw new HttpError(422, 'AMOUNT_TOO_SMALL', 'The deposit converts to less than 1 UGX.');
    }
    const now = new Date().toISOString();
    const order: SandboxOrder = {
      order_id: `ord_${ulid()}`,
      reference: ref,
      quote_id: quoteId,
      status: 'PENDING',
      deposit: { channel: 'MERCHANT_BALANCE', currency: 'USD', amount: new Big(dep.amount).toFixed() },
      payout: { channel: 'MOBILE_MONEY', currency: 'UGX', network: pay.network ?? networkOf(rcp.phone), amount: amountUgx },
      exchange_rate: orderRate,
      recipient: { phone: rcp.phone, name: rcp.name },
      mobile_money_transaction_id: null,
      settled_at: null,
      failure_reason: null,
      created_at: now,
      updated_at: now,
    };
    orders.set(order.order_id, order);
    byReference.set(ref, order);
    stats.ordersCreated++;
    const nth = (ordersPerPhone.get(rcp.phone) ?? 0) + 1;
    ordersPerPhone.set(rcp.phone, nth);
    let outcome: 'SETTLED' | 'FAILED' = 'SETTLED';
    let reason: string | null = null;
    if (rcp.phone === SANDBOX_TEST_PHONES.ALWAYS_FAILS) {
      outcome = 'FAILED';
      reason = 'RECIPIENT_WALLET_REJECTED: the mobile-money wallet refused the transfer';
    } else if (rcp.phone === SANDBOX_TEST_PHONES.NOT_A_WALLET) {
      outcome = 'FAILED';
      reason = 'INVALID_MSISDN: the number is not registered for mobile money';
    } else if (rcp.phone === SANDBOX_TEST_PHONES.FAILS_FIRST && nth % 2 === 1) {
      outcome = 'FAILED';
      reason = 'MOBILE_NETWORK_TIMEOUT: the mobile-money network did not confirm in time';
    }
    later(settleMs, () => finish(order, outcome, reason));
    log(`payout-sandbox order ${order.order_id} (${ref}) created: ${order.deposit.amount} USD → ${amountUgx} UGX to ${rcp.phone}`);
    return [201, order];
  }

  /**
   * `GET /v1/recipients?phone=<E.164>`: the account-holder lookup. 404 ACCOUNT_NOT_FOUND for the
   * not-a-wallet test phone; the other holder's name for +256700000005; for any other number the
   * wallet exists and its holder's name is not disclosed (`account_holder: null`).
   */
  function getRecipient(params: URLSearchParams): [number, unknown] {
    const phone = params.get('phone');
    if (!phone || !/^\+\d{8,15}$/.test(phone))
      throw new HttpError(400, 'VALIDATION_ERROR', 'Query parameter phone (E.164) is required.', [
        { path: 'phone', message: 'E.164 number required' },
      ]);
    if (phone === SANDBOX_TEST_PHONES.NOT_A_WALLET) throw new HttpError(404, 'ACCOUNT_NOT_FOUND', `${phone} is not a mobile-money wallet.`);
    const holder = phone === SANDBOX_TEST_PHONES.OTHER_HOLDER ? { name: 'Grace Nakato Ssemwogerere' } : null;
    return [200, { phone, network: networkOf(phone), account_holder: holder }];
  }

  function getOrderById(id: string): [number, unknown] {
    const order = orders.get(id);
    if (!order) throw new HttpError(404, 'ORDER_NOT_FOUND', `No order ${id}.`);
    return [200, order];
  }

  function getOrderByReference(params: URLSearchParams): [number, unknown] {
    const ref = params.get('reference');
    if (!ref)
      throw new HttpError(400, 'VALIDATION_ERROR', 'Query parameter reference is required.', [{ path: 'reference', message: 'required' }]);
    const order = byReference.get(ref);
    if (!order) throw new HttpError(404, 'ORDER_NOT_FOUND', `No order with reference ${ref}.`);
    return [200, order];
  }

  // ---------------------------------------------------------------- HTTP plumbing

  const readBody = (req: IncomingMessage) =>
    readBoundedBody(req, MAX_BODY_BYTES, () => new HttpError(413, 'PAYLOAD_TOO_LARGE', 'The body exceeds 1 MiB.'));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    const method = req.method ?? 'GET';
    const rawPath = req.url ?? '/';
    const url = new URL(rawPath, 'http://sandbox.invalid');
    const raw = await readBody(req);
    let body: unknown;
    let invalidJson = false;
    if (method === 'POST' || method === 'PUT') {
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        invalidJson = true;
      }
      // The unreachable test phone: the connection dies before any answer (network-level, so before auth).
      if (url.pathname === '/v1/orders' && isObject(body) && isObject(body.recipient)) {
        const phone = body.recipient.phone;
        const ref = typeof body.reference === 'string' ? body.reference : '';
        if (unreachableRate > 0 && ref && !unreachableRefs.has(ref)) unreachableRefs.set(ref, random() < unreachableRate);
        if (phone === SANDBOX_TEST_PHONES.UNREACHABLE || phone === SANDBOX_TEST_PHONES.PRIMARY_DOWN || unreachableRefs.get(ref)) {
          stats.unreachableDrops++;
          log(`payout-sandbox POST /v1/orders for ${String(phone)} (${ref}): socket destroyed (unreachable)`);
          req.socket.destroy();
          return;
        }
      }
    }
    if (method === 'PUT' && url.pathname === '/v1/sandbox/balance') {
      // Sandbox only, like the stats: sets the merchant balance (a test hook for the balance alarm).
      const amount = isObject(body) ? body.amount : undefined;
      try {
        balanceUsd = parseBalance(amount);
      } catch {
        throw new HttpError(400, 'VALIDATION_ERROR', 'Body {amount}: a USD decimal string with at most 6 decimals.', [
          { path: 'amount', message: 'must be a decimal string with at most 6 decimals' },
        ]);
      }
      log(`payout-sandbox merchant balance set to ${balanceUsd.toFixed()} USD`);
      sendJson(res, 200, { balances: [{ currency: 'USD', amount: balanceUsd.toFixed() }] });
      return;
    }
    if (method === 'GET' && url.pathname === '/v1/sandbox/stats') {
      // Sandbox only (no real provider has it, so it needs no credentials): the counters, for
      // benchmarks that run the sandbox in another process.
      sendJson(res, 200, { ...stats, settledPerReference: { ...stats.settledPerReference } });
      return;
    }
    const auth = req.headers.authorization ?? '';
    const m = /^Bearer (.+)$/.exec(auth);
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
    if (method === 'POST') {
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
        throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json.');
      }
      if (invalidJson) throw new HttpError(400, 'VALIDATION_ERROR', 'The body is not valid JSON.');
    }

    const path = url.pathname.replace(/\/+$/, '');
    let result: [number, unknown];
    if (path === '/v1/quotes') {
      if (method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} not allowed on ${path}.`);
      result = postQuote(body);
    } else if (path === '/v1/orders') {
      if (method === 'POST') {
        const key = req.headers['idempotency-key'];
        result = postOrder(body, Array.isArray(key) ? key[0] : key);
      } else if (method === 'GET') result = getOrderByReference(url.searchParams);
      else throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} not allowed on ${path}.`);
    } else if (path === '/v1/balances') {
      if (method !== 'GET') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} not allowed on ${path}.`);
      result = [200, { balances: [{ currency: 'USD', amount: balanceUsd.toFixed() }] }];
    } else if (path === '/v1/recipients') {
      if (method !== 'GET') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} not allowed on ${path}.`);
      result = getRecipient(url.searchParams);
    } else if (path.startsWith('/v1/orders/') && path.split('/').length === 4) {
      if (method !== 'GET') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} not allowed on ${path}.`);
      result = getOrderById(decodeURIComponent(path.slice('/v1/orders/'.length)));
    } else {
      throw new HttpError(404, 'ROUTE_NOT_FOUND', `No route ${method} ${path}.`);
    }
    sendJson(res, result[0], result[1]);
    log(`payout-sandbox ${method} ${rawPath} → ${result[0]}`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent || req.socket.destroyed) return;
      if (err instanceof HttpError) {
        sendJson(res, err.status, { error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } });
        log(`payout-sandbox ${req.method} ${req.url} → ${err.status} ${err.code}`);
      } else {
        sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Unexpected sandbox error.' } });
        log(`payout-sandbox ${req.method} ${req.url} → 500 ${(err as Error)?.stack ?? String(err)}`);
      }
    });
  });
  server.on('connection', () => {
    stats.connections++;
  });
  const listening = await listenOnLoopback(server, opts.port ?? 0);
  const port = listening.port;
  const url = `http://127.0.0.1:${port}`;
  log(`payout-sandbox listening on ${url} (rate ${rate}, settle ${settleMs} ms)`);

  return {
    url,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      stopController.abort();
      await listening.close();
    },
    stats() {
      return { ...stats, settledPerReference: { ...stats.settledPerReference } };
    },
    setWebhookUrl(next: string) {
      webhookUrl = next;
    },
    setBalance(usd: string) {
      balanceUsd = parseBalance(usd);
    },
    balance() {
      return balanceUsd.toFixed();
    },
  };
}

/** A USD balance: a decimal string with at most 6 decimals, possibly negative. @throws TypeError otherwise */
function parseBalance(raw: unknown): Big {
  if (typeof raw !== 'string' || !/^-?\d{1,12}(\.\d{1,6})?$/.test(raw))
    throw new TypeError(`payout sandbox: invalid balance ${String(raw)}`);
  return new Big(raw);
}
