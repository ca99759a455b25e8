import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPawaPaySandbox, type PawaPaySandbox } from '../../infra/local/pawapay-sandbox';
import { PawaPayProvider, pawaPayFailure, pawaPayPayoutId } from '../../shared/adapters/payout-provider/pawapay';
import { ProviderRejectedError, ProviderUnavailableError } from '../../shared/domain/errors';
import { verifyHttpMessageSignature } from '../../shared/http/http-message-signature';

/**
 * The pawaPay v2 adapter against the local pawaPay sandbox (real HTTP on loopback), and the
 * sandbox's RFC 9421-signed callbacks verified as the callback route verifies them.
 */

const TOKEN = 'pawapay-test-token';
let sandbox: PawaPaySandbox;
let receiver: Server;
const callbacks: Array<{ headers: Record<string, string>; body: string; path: string; host: string }> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      callbacks.push({ headers: req.headers as Record<string, string>, body, path: req.url ?? '/', host: req.headers.host ?? '' });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  sandbox = await startPawaPaySandbox({ apiToken: TOKEN, callbackUrl: `http://127.0.0.1:${port}/api/webhooks/pawapay`, settleMs: 20 });
});

afterAll(async () => {
  await sandbox.stop();
  await new Promise((r) => receiver.close(r));
});

function provider(overrides: Partial<ConstructorParameters<typeof PawaPayProvider>[0]> = {}): PawaPayProvider {
  return new PawaPayProvider({ baseUrl: sandbox.url, apiToken: TOKEN, usdUgxRate: '3700', backoffMs: 1, timeoutMs: 2000, ...overrides });
}

async function settled(p: PawaPayProvider, ref: string) {
  for (let i = 0; i < 100; i++) {
    const o = await p.findOrderByReference(ref);
    if (o && o.status !== 'PENDING') return o;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('never final');
}

describe('pawaPayPayoutId', () => {
  it('is a deterministic UUIDv5 of the reference, different per reference', () => {
    const a = pawaPayPayoutId('PAY-2026-000001-001-A1');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pawaPayPayoutId('PAY-2026-000001-001-A1')).toBe(a);
    expect(pawaPayPayoutId('PAY-2026-000001-001-A2')).not.toBe(a);
  });
});

describe('pawaPayFailure', () => {
  it.each([
    ['RECIPIENT_NOT_FOUND', 'INVALID_MSISDN'],
    ['PAWAPAY_WALLET_OUT_OF_FUNDS', 'INSUFFICIENT_BALANCE'],
    ['RECIPIENT_NOT_ALLOWED_TO_RECEIVE', 'WALLET_LIMIT_EXCEEDED'],
    ['UNSPECIFIED_FAILURE', 'PROVIDER_ERROR'],
  ])('%s → %s', (code, reason) => {
    expect(pawaPayFailure({ failureCode: code, failureMessage: 'm' })).toEqual({ reason, detail: `${code}: m` });
  });
});

describe('PawaPayProvider against the pawaPay sandbox', () => {
  it('pays UGX at the payout rate, once per reference, and the signed callback verifies', async () => {
    const p = provider();
    const input = {
      reference: 'PAY-2026-000001-001-A1',
      amount_usd_micro: 10_000_000,
      exchange_rate: '3750.5',
      recipient: { phone: '+256772000111', name: 'Aisha Nambi' },
    };
    const order = await p.createOrder(input);
    expect(order).toMatchObject({
      order_id: pawaPayPayoutId(input.reference),
      status: 'PENDING',
      amount_ugx: 37_505,
      exchange_rate: '3750.5',
    });
    const again = await p.createOrder(input); // DUPLICATE_IGNORED: the same order, nothing new
    expect(again.order_id).toBe(order.order_id);
    expect(sandbox.stats().payoutsAccepted).toBe(1);
    const done = await settled(p, input.reference);
    expect(done).toMatchObject({ status: 'SETTLED', reference: input.reference, amount_usd_micro: 10_000_000, amount_ugx: 37_505 });
    expect(done.mobile_money_transaction_id).toBeTruthy();

    for (let i = 0; i < 100 && !callbacks.length; i++) await new Promise((r) => setTimeout(r, 10));
    const cb = callbacks[0]!;
    const req = { method: 'POST', authority: cb.host, path: cb.path, headers: cb.headers, body: cb.body };
    expect(() => verifyHttpMessageSignature(req, [sandbox.publicKeyPem])).not.toThrow();
    expect(() => verifyHttpMessageSignature({ ...req, body: cb.body.replace('COMPLETED', 'FAILED') }, [sandbox.publicKeyPem])).toThrow(
      /Content-Digest/,
    );
    expect(() => verifyHttpMessageSignature({ ...req, path: '/other' }, [sandbox.publicKeyPem])).toThrow(/no configured key/);
  });

  it('maps a number that is not a wallet to INVALID_MSISDN on the failed order', async () => {
    const p = provider();
    await p.createOrder({
      reference: 'PAY-2026-000001-002-A1',
      amount_usd_micro: 1_000_000,
      recipient: { phone: '+256700000008', name: 'X' },
    });
    const failed = await settled(p, 'PAY-2026-000001-002-A1');
    expect(failed.status).toBe('FAILED');
    expect(failed.failure).toMatchObject({ reason: 'INVALID_MSISDN' });
  });

  it('looks a number up without a name (the name check is skipped on this rail), refuses a foreign number', async () => {
    const p = provider();
    await expect(p.lookupAccountHolder('+256700000005')).resolves.toEqual({ found: true, name: null });
    await expect(p.lookupAccountHolder('+254712345678')).resolves.toEqual({ found: false });
    await expect(
      p.createOrder({ reference: 'PAY-2026-000001-003-A1', amount_usd_micro: 1_000_000, recipient: { phone: '+254712345678', name: 'X' } }),
    ).rejects.toMatchObject({ failure: 'INVALID_MSISDN' });
  });

  it('reads the UGX wallet balance as whole shillings', async () => {
    const [b] = await provider().merchantBalance();
    expect(b).toEqual({ currency: 'UGX', amount_minor: expect.any(Number) });
    expect(b!.amount_minor).toBeLessThan(500_000_000);
  });

  it('is unavailable after 3 attempts when the connection dies, and a bad token is a rejection', async () => {
    await expect(
      provider().createOrder({
        reference: 'PAY-2026-000001-004-A1',
        amount_usd_micro: 1_000_000,
        recipient: { phone: '+256700000004', name: 'X' },
      }),
    ).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(provider({ apiToken: 'wrong' }).getOrder(pawaPayPayoutId('x'))).rejects.toBeInstanceOf(ProviderRejectedError);
    await expect(provider().findOrderByReference('PAY-2026-000001-004-A1')).resolves.toBeNull();
  });
});
