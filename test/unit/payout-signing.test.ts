import { createHmac } from 'node:crypto';
import { providerSigningPayload, signProviderRequest, verifyProviderRequest } from '../../shared/adapters/payout-provider/signing';

const secret = 'sk_test_secret';
const body = JSON.stringify({ reference: 'PAY-2025-000001-01-A1', deposit: { amount: '12.5' } });

describe('provider request signing', () => {
  it('signs "<ts>.<METHOD>.<path>.<body>" with hex HMAC-SHA256', () => {
    const h = signProviderRequest({ secret, method: 'post', path: '/v1/orders', body, timestamp: 1_700_000_000 });
    expect(h['X-Timestamp']).toBe('1700000000');
    const expected = createHmac('sha256', secret).update(`1700000000.POST./v1/orders.${body}`).digest('hex');
    expect(h['X-Signature']).toBe(`v1=${expected}`);
    expect(providerSigningPayload('1', 'get', '/v1/orders?reference=X', '')).toBe('1.GET./v1/orders?reference=X.');
  });

  it('verifies a fresh signature, with and without a body', () => {
    const h = signProviderRequest({ secret, method: 'POST', path: '/v1/orders', body });
    expect(
      verifyProviderRequest({ secret, method: 'POST', path: '/v1/orders', body, timestamp: h['X-Timestamp'], signature: h['X-Signature'] }),
    ).toEqual({ ok: true });
    const g = signProviderRequest({ secret, method: 'GET', path: '/v1/orders?reference=A%2FB' });
    expect(
      verifyProviderRequest({
        secret,
        method: 'GET',
        path: '/v1/orders?reference=A%2FB',
        body: '',
        timestamp: g['X-Timestamp'],
        signature: g['X-Signature'],
      }).ok,
    ).toBe(true);
  });

  it('accepts one matching entry among several (rotation)', () => {
    const h = signProviderRequest({ secret, method: 'GET', path: '/v1/orders/1' });
    const signature = `v1=${'0'.repeat(64)}, ${h['X-Signature']}`;
    expect(verifyProviderRequest({ secret, method: 'GET', path: '/v1/orders/1', timestamp: h['X-Timestamp'], signature }).ok).toBe(true);
  });

  it.each([
    ['body', { body: body.replace('12.5', '125') }],
    ['path', { path: '/v1/orders?reference=other' }],
    ['method', { method: 'PUT' }],
    ['secret', { secret: 'sk_test_other' }],
  ])('rejects a tampered %s', (_what, change) => {
    const h = signProviderRequest({ secret, method: 'POST', path: '/v1/orders', body });
    const input = { secret, method: 'POST', path: '/v1/orders', body, timestamp: h['X-Timestamp'], signature: h['X-Signature'], ...change };
    expect(verifyProviderRequest(input)).toEqual({ ok: false, reason: 'MISMATCH' });
  });

  it('rejects a tampered timestamp', () => {
    const h = signProviderRequest({ secret, method: 'POST', path: '/v1/orders', body });
    const ts = String(Number(h['X-Timestamp']) - 1);
    expect(verifyProviderRequest({ secret, method: 'POST', path: '/v1/orders', body, timestamp: ts, signature: h['X-Signature'] })).toEqual(
      { ok: false, reason: 'MISMATCH' },
    );
  });

  it('rejects stale and future timestamps beyond 5 minutes, accepts within', () => {
    const now = 1_700_000_000;
    const at = (ts: number) => {
      const h = signProviderRequest({ secret, method: 'GET', path: '/v1/orders/1', timestamp: ts });
      return verifyProviderRequest({
        secret,
        method: 'GET',
        path: '/v1/orders/1',
        timestamp: h['X-Timestamp'],
        signature: h['X-Signature'],
        nowSeconds: now,
      });
    };
    expect(at(now - 300).ok).toBe(true);
    expect(at(now + 300).ok).toBe(true);
    expect(at(now - 301)).toEqual({ ok: false, reason: 'STALE' });
    expect(at(now + 301)).toEqual({ ok: false, reason: 'STALE' });
  });

  it('reports missing and malformed headers', () => {
    const h = signProviderRequest({ secret, method: 'GET', path: '/x' });
    const base = { secret, method: 'GET', path: '/x' };
    expect(verifyProviderRequest({ ...base, timestamp: undefined, signature: h['X-Signature'] })).toEqual({ ok: false, reason: 'MISSING' });
    expect(verifyProviderRequest({ ...base, timestamp: h['X-Timestamp'], signature: undefined })).toEqual({ ok: false, reason: 'MISSING' });
    expect(verifyProviderRequest({ ...base, timestamp: 'yesterday', signature: h['X-Signature'] })).toEqual({
      ok: false,
      reason: 'MALFORMED',
    });
    expect(verifyProviderRequest({ ...base, timestamp: h['X-Timestamp'], signature: 'v2=abc' })).toEqual({
      ok: false,
      reason: 'MALFORMED',
    });
    expect(verifyProviderRequest({ ...base, timestamp: h['X-Timestamp'], signature: h['X-Signature'].slice(0, -2) })).toEqual({
      ok: false,
      reason: 'MALFORMED',
    });
  });

  it('refuses to sign with an empty secret', () => {
    expect(() => signProviderRequest({ secret: '', method: 'GET', path: '/' })).toThrow(TypeError);
  });
});
