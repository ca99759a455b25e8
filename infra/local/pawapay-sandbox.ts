/**
 * Local pawaPay sandbox (docs/api/payouts.md#pawapay): the part of pawaPay's Merchant API v2 this
 * service uses, on a loopback port, in memory, sending callbacks signed as pawaPay signs them
 * (RFC 9421, ecdsa-p256-sha256, Content-Digest sha-512). `PawaPayProvider` talks to it as to
 * pawaPay's own sandbox (https://docs.pawapay.io/v2/api-reference/payouts/initiate-payout).
 *
 * API (every request: `Authorization: Bearer <api token>`, else 401 `{failureReason:
 * {failureCode: "AUTHENTICATION_ERROR"}}`):
 * - `POST /v2/predict-provider {phoneNumber}` → 200 `{country: "UGA", provider, phoneNumber}`
 *   (2567[0 or 5]… Airtel `AIRTEL_OAPI_UGA`, 2567[6-8]… and 2563… MTN `MTN_MOMO_UGA`); 400 INVALID_PHONE_NUMBER otherwise
 * - `POST /v2/payouts {payoutId, amount, currency, recipient: {type: MMO, accountDetails}, metadata}`
 *   → 200 `{payoutId, status: ACCEPTED|DUPLICATE_IGNORED|REJECTED, created, failureReason?}`
 * - `GET /v2/payouts/{payoutId}` → 200 `{status: FOUND, data}` or `{status: NOT_FOUND}`
 * - `GET /v2/wallet-balances[?country=UGA]` → 200 `{balances: [{country, balance, currency, provider}]}`
 * - `GET /v2/public-key/http` → 200 `[{id, key}]`, the callback signing key (PEM)
 * Sandbox only (not pawaPay's API), without credentials like the payout sandbox's: `GET /v2/sandbox/stats`
 * → the counters and `completedPerReference` (completed payouts per the `reference` metadata our
 * adapter sends), so a benchmark in another process can count what was paid under each reference.
 *
 * Test phones (the service's, docs/api/payouts.md#payout-sandbox): +256700000001 every payout fails
 * (UNSPECIFIED_FAILURE); +256700000003 completes but no callback is sent; +256700000004 pawaPay is
 * unreachable for it (socket destroyed); +256700000008 RECIPIENT_NOT_FOUND (not a wallet);
 * +256700000006 completes here (it is the other provider that is down for it); any other completes
 * after `settleMs`. A completed payout takes its amount off the UGX wallet.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Big from 'big.js';
import { signHttpMessage } from '../../shared/http/http-message-signature';
import { DEV_PAWAPAY_API_TOKEN } from './dev-keys';
import { listenOnLoopback, readBoundedBody, sendJson } from './loopback';

/** Options of {@link startPawaPaySandbox}. */
export interface PawaPaySandboxOptions {
  port?: number;
  apiToken: string;
  /** Where callbacks go; a function is read at each delivery. */
  callbackUrl: string | (() => string);
  /** Delay from acceptance to the final status, ms (default 300). */
  settleMs?: number;
  /** Opening UGX wallet balance, whole shillings (default 500,000,000). */
  walletUgx?: number;
  log?: (line: string) => void;
}

/** A running pawaPay sandbox. */
export interface PawaPaySandbox {
  url: string;
  /** The callback signing key's public half (PEM): what `GET /v2/public-key/http` gives. */
  publicKeyPem: string;
  stats(): PawaPaySandboxStats;
  stop(): Promise<void>;
}

/** The sandbox's counters (`GET /v2/sandbox/stats`). */
export interface PawaPaySandboxStats {
  payoutsAccepted: number;
  payoutsCompleted: number;
  payoutsFailed: number;
  callbacksSent: number;
  duplicates: number;
  /** COMPLETED payouts per `reference` metadata value (a payout without it counts under its payoutId). */
  completedPerReference: Record<string, number>;
}

interface Payout {
  payoutId: string;
  status: 'ACCEPTED' | 'COMPLETED' | 'FAILED';
  amount: string;
  currency: 'UGX';
  country: 'UGA';
  recipient: { type: 'MMO'; accountDetails: { phoneNumber: string; provider: string } };
  customerMessage?: string;
  created: string;
  providerTransactionId?: string;
  failureReason?: { failureCode: string; failureMessage: string };
  metadata: Record<string, string>;
}

const PHONES = { ALWAYS_FAILS: '256700000001', NO_CALLBACK: '256700000003', UNREACHABLE: '256700000004', NOT_A_WALLET: '256700000008' };

/** The Ugandan operator of a sanitised number, as predict-provider answers. */
function ugandanProvider(msisdn: string): string | null {
  if (!/^256\d{9}$/.test(msisdn)) return null;
  if (/^2567[05]/.test(msisdn)) return 'AIRTEL_OAPI_UGA';
  if (/^2567[6-8]/.test(msisdn) || /^2563/.test(msisdn)) return 'MTN_MOMO_UGA';
  return null;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Starts the sandbox on 127.0.0.1 with a fresh P-256 callback signing key.
 * @returns the running sandbox; @throws the listen error when the port is taken
 */
export async function startPawaPaySandbox(opts: PawaPaySandboxOptions): Promise<PawaPaySandbox> {
  const log = opts.log ?? (() => {});
  const settleMs = opts.settleMs ?? 300;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyId = 'HTTP_EC_P256_KEY:1';
  const payouts = new Map<string, Payout>();
  const timers = new Set<NodeJS.Timeout>();
  let wallet = new Big(opts.walletUgx ?? 500_000_000);
  const stats: PawaPaySandboxStats = {
    payoutsAccepted: 0,
    payoutsCompleted: 0,
    payoutsFailed: 0,
    callbacksSent: 0,
    duplicates: 0,
    completedPerReference: {},
  };
  const snapshot = (): PawaPaySandboxStats => ({ ...stats, completedPerReference: { ...stats.completedPerReference } });

  async function callback(p: Payout): Promise<void> {
    const target = new URL(typeof opts.callbackUrl === 'function' ? opts.callbackUrl() : opts.callbackUrl);
    const body = JSON.stringify(p);
    const headers = { 'content-type': 'application/json' };
    const signed = signHttpMessage({ method: 'POST', authority: target.host, path: target.pathname, headers, body }, privatePem, keyId);
    for (let attempt = 1; attempt <= 5; attempt++) {
      try {
        const res = await fetch(target, { method: 'POST', headers: { ...headers, ...signed }, body, signal: AbortSignal.timeout(10_000) });
        await res.text();
        if (res.ok) {
          stats.callbacksSent++;
          return;
        }
        log(`pawapay-sandbox callback ${p.payoutId}: HTTP ${res.status} (attempt ${attempt})`);
      } catch (err) {
        log(`pawapay-sandbox callback ${p.payoutId}: ${(err as Error).message} (attempt ${attempt})`);
      }
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }

  function finish(p: Payout): void {
    const phone = p.recipient.accountDetails.phoneNumber;
    if (phone === PHONES.ALWAYS_FAILS || phone === PHONES.NOT_A_WALLET) {
      p.status = 'FAILED';
      p.failureReason =
        phone === PHONES.NOT_A_WALLET
          ? { failureCode: 'RECIPIENT_NOT_FOUND', failureMessage: 'The recipient is not a mobile-money customer.' }
          : { failureCode: 'UNSPECIFIED_FAILURE', failureMessage: 'The provider failed the payout (sandbox).' };
      stats.payoutsFailed++;
    } else if (wallet.lt(p.amount)) {
      p.status = 'FAILED';
      p.failureReason = { failureCode: 'PAWAPAY_WALLET_OUT_OF_FUNDS', failureMessage: 'The UGX wallet has too little balance.' };
      stats.payoutsFailed++;
    } else {
      wallet = wallet.minus(p.amount);
      p.status = 'COMPLETED';
      p.providerTransactionId = `PP${Date.now()}${Math.floor(Math.random() * 1e6)}`;
      stats.payoutsCompleted++;
      const ref = p.metadata.reference ?? p.payoutId;
      stats.completedPerReference[ref] = (stats.completedPerReference[ref] ?? 0) + 1;
    }
    if (phone !== PHONES.NO_CALLBACK) void callback(p);
  }

  function initiate(body: Record<string, unknown>): Record<string, unknown> {
    const payoutId = body.payoutId;
    if (typeof payoutId !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(payoutId))
      throw new Refusal(400, 'INVALID_PARAMETER', 'payoutId must be a UUID');
    const existing = payouts.get(payoutId);
    if (existing) {
      stats.duplicates++;
      return { payoutId, status: 'DUPLICATE_IGNORED', created: existing.created };
    }
    const created = new Date().toISOString();
    const rec = (body.recipient ?? {}) as { type?: unknown; accountDetails?: { phoneNumber?: unknown; provider?: unknown } };
    const phone = String(rec.accountDetails?.phoneNumber ?? '');
    const provider = ugandanProvider(phone);
    const refuse = (failureCode: string, failureMessage: string) => ({
      payoutId,
      status: 'REJECTED',
      created,
      failureReason: { failureCode, failureMessage },
    });
    if (rec.type !== 'MMO') throw new Refusal(400, 'INVALID_PARAMETER', 'recipient.type must be MMO');
    if (!provider) return refuse('INVALID_PHONE_NUMBER', 'The phone number is not an MSISDN of a Ugandan provider.');
    if (rec.accountDetails?.provider !== provider) return refuse('INVALID_PROVIDER', `The number belongs to ${provider}.`);
    if (body.currency !== 'UGX') return refuse('INVALID_CURRENCY', 'UGX only.');
    if (typeof body.amount !== 'string' || !/^[1-9]\d{0,15}$/.test(body.amount)) return refuse('INVALID_AMOUNT', 'Whole UGX only.');
    const metadata: Record<string, string> = {};
    for (const m of Array.isArray(body.metadata) ? (body.metadata as Record<string, unknown>[]) : [])
      for (const [k, v] of Object.entries(m)) if (k !== 'isPII' && typeof v === 'string') metadata[k] = v;
    const p: Payout = {
      payoutId,
      status: 'ACCEPTED',
      amount: body.amount,
      currency: 'UGX',
      country: 'UGA',
      recipient: { type: 'MMO', accountDetails: { phoneNumber: phone, provider } },
      created,
      metadata,
      ...(typeof body.customerMessage === 'string' ? { customerMessage: body.customerMessage } : {}),
    };
    payouts.set(payoutId, p);
    stats.payoutsAccepted++;
    const t = setTimeout(() => {
      timers.delete(t);
      finish(p);
    }, settleMs);
    timers.add(t);
    return { payoutId, status: 'ACCEPTED', created };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const raw = await readBoundedBody(req, 64 * 1024, () => new Refusal(413, 'INVALID_INPUT', 'body too large'));
    let body: Record<string, unknown> = {};
    if (req.method === 'POST') {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        throw new Refusal(400, 'INVALID_INPUT', 'The body is not JSON.');
      }
      const phone = String(
        (body.recipient as { accountDetails?: { phoneNumber?: unknown } } | undefined)?.accountDetails?.phoneNumber ?? '',
      );
      if (url.pathname === '/v2/payouts' && phone === PHONES.UNREACHABLE) {
        log(`pawapay-sandbox POST /v2/payouts for ${phone}: socket destroyed (unreachable test phone)`);
        req.socket.destroy();
        return;
      }
    }
    if (req.method === 'GET' && url.pathname === '/v2/sandbox/stats') return sendJson(res, 200, snapshot());
    if (req.headers.authorization !== `Bearer ${opts.apiToken}`)
      throw new Refusal(401, 'AUTHENTICATION_ERROR', 'The API token is not valid.');
    if (req.method === 'POST' && url.pathname === '/v2/predict-provider') {
      const msisdn = String(body.phoneNumber ?? '').replace(/[^0-9]/g, '');
      const provider = ugandanProvider(msisdn);
      if (!provider) throw new Refusal(400, 'INVALID_PHONE_NUMBER', 'The phone number is not an MSISDN of a supported provider.');
      return sendJson(res, 200, { country: 'UGA', provider, phoneNumber: msisdn });
    }
    if (req.method === 'POST' && url.pathname === '/v2/payouts') return sendJson(res, 200, initiate(body));
    const one = /^\/v2\/payouts\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const p = payouts.get(decodeURIComponent(one[1]!));
      return sendJson(res, 200, p ? { status: 'FOUND', data: p } : { status: 'NOT_FOUND' });
    }
    if (req.method === 'GET' && url.pathname === '/v2/wallet-balances') {
      const country = url.searchParams.get('country');
      const balances = country && country !== 'UGA' ? [] : [{ country: 'UGA', balance: wallet.toFixed(2), currency: 'UGX', provider: '' }];
      return sendJson(res, 200, { balances });
    }
    if (req.method === 'GET' && url.pathname === '/v2/public-key/http') return sendJson(res, 200, [{ id: keyId, key: publicPem }]);
    throw new Refusal(404, 'NOT_FOUND', `${req.method} ${url.pathname} is not part of this sandbox`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent || req.socket.destroyed) return;
      const r = err instanceof Refusal ? err : new Refusal(500, 'UNKNOWN_ERROR', (err as Error).message);
      sendJson(res, r.status, { failureReason: { failureCode: r.code, failureMessage: r.message } });
    });
  });
  const listening = await listenOnLoopback(server, opts.port ?? 0);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    publicKeyPem: publicPem,
    stats: snapshot,
    async stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await listening.close();
    },
  };
}

/**
 * The local stack's pawaPay: the sandbox with the dev token, and for the functions PAWAPAY_API_URL,
 * PAWAPAY_CREDENTIALS (the callback key's public half in the secret, as an operator copies it from
 * `GET /v2/public-key/http`), and the defaults PAYOUT_PROVIDERS=provider-api (today's single provider)
 * and PAWAPAY_USD_UGX_RATE (PAYOUT_SANDBOX_RATE, else 3700.25, the payout sandbox's rate) unless set.
 * It runs whatever PAYOUT_PROVIDERS says.
 */
export async function startLocalPawaPay(
  callbackUrl: () => string,
  settleMs: number | undefined,
  log: (l: string) => void,
): Promise<PawaPaySandbox> {
  const pawapay = await startPawaPaySandbox({
    apiToken: DEV_PAWAPAY_API_TOKEN,
    callbackUrl,
    ...(settleMs !== undefined ? { settleMs } : {}),
    log: (l) => log(`pawapay-sandbox: ${l}`),
  });
  process.env.PAWAPAY_API_URL = pawapay.url;
  process.env.PAWAPAY_CREDENTIALS = JSON.stringify({ api_token: DEV_PAWAPAY_API_TOKEN, callback_public_keys: [pawapay.publicKeyPem] });
  process.env.PAYOUT_PROVIDERS ||= 'provider-api';
  process.env.PAWAPAY_USD_UGX_RATE ||= process.env.PAYOUT_SANDBOX_RATE || '3700.25';
  return pawapay;
}
