import { Webhook } from 'standardwebhooks';
import { DEV_ONRAMP_WEBHOOK_SECRET } from '../../infra/local/onramp-sandbox';
import { api, token, uid, waitFor } from '../support/api';
import { setUpCooperative } from './fixtures';

/**
 * MFI deposits on the local stack (docs/api/lending.md#mfi-deposits): POST /mfi/deposits → the on-ramp
 * sandbox delivers USDC to the treasury and sends its signed completion → the webhook is confirmed
 * with the on-ramp → the single ledger writer deposits into the vault → COMPLETED with shares; an
 * amount ending in 13 is reversed by the sandbox → REFUNDED.
 */

const hook = new Webhook(DEV_ONRAMP_WEBHOOK_SECRET);

function signed(body: unknown, id = `msg_test_${Math.random().toString(36).slice(2)}`) {
  const raw = JSON.stringify(body);
  const at = new Date();
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': hook.sign(id, at, raw),
    },
  };
}

describe('MFI deposits', () => {
  const mfiA = uid('MFI-A');
  const mfiB = uid('MFI-B');
  let a: string;
  let b: string;
  let admin: string;

  beforeAll(async () => {
    a = await token({ role: 'MFI', mfi_id: mfiA, sub: `user-${mfiA}` });
    b = await token({ role: 'MFI', mfi_id: mfiB, sub: `user-${mfiB}` });
    admin = await token({ role: 'ADMIN', sub: 'admin-test' });
  });

  it('a deposit completes: 202 PROCESSING, then COMPLETED with the USDC, the vault transaction and the shares; only its MFI (and ADMIN) may read it', async () => {
    const res = await api('POST', '/mfi/deposits', { token: a, body: { source_currency: 'UGX', source_amount: 3_700_000 } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      payment_type: 'MFI_DEPOSIT',
      status: 'PROCESSING',
      mfi_id: mfiA,
      source_currency: 'UGX',
      source_amount: 3_700_000,
      amount_usdc: 0,
      ramp_payment_id: expect.stringMatching(/^ramp_/),
    });
    const id: string = res.body.payment_id;
    expect(id).toMatch(/^DEP-\d{4}-\d{6}$/);
    expect(res.headers.get('location')).toBe(`/payments/${id}`);

    const done = await waitFor(
      () => api('GET', `/payments/${id}`, { token: a }),
      (r) => r.body.status === 'COMPLETED',
      30_000,
      250,
    );
    expect(done.body).toMatchObject({
      payment_id: id,
      payment_type: 'MFI_DEPOSIT',
      status: 'COMPLETED',
      mfi_id: mfiA,
      amount_usdc: 1000,
      source_currency: 'UGX',
      source_amount: 3_700_000,
      ramp_payment_id: res.body.ramp_payment_id,
      chain_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      completed_at: expect.any(String),
    });
    expect(done.body.vault_shares_issued).toBeGreaterThan(0);
    expect(Number.isInteger(done.body.vault_shares_issued)).toBe(true);

    expect((await api('GET', `/payments/${id}`, { token: admin })).status).toBe(200);
    const other = await api('GET', `/payments/${id}`, { token: b });
    expect([other.status, other.body.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    const coop = await setUpCooperative();
    const c = await api('GET', `/payments/${id}`, { token: coop.coop });
    expect([c.status, c.body.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);

    const vault = await api('GET', '/mfi/vault', { token: a });
    expect(vault.status).toBe(200);
    expect(vault.body).toMatchObject({ apr: 0.12, shares: done.body.vault_shares_issued });
    expect(vault.body.value_usdc).toBeGreaterThanOrEqual(999.99);
    expect(vault.body.total_assets_usdc).toBeGreaterThanOrEqual(1000);
    const adminVault = await api('GET', '/mfi/vault', { token: admin });
    expect(adminVault.status).toBe(200);
    expect(adminVault.body).not.toHaveProperty('shares');
  });

  it('an amount ending in 13 completes and is reversed by the on-ramp: REFUNDED, the shares withdrawn', async () => {
    const res = await api('POST', '/mfi/deposits', { token: b, body: { source_currency: 'USD', source_amount: 513 } });
    expect(res.status).toBe(202);
    const id: string = res.body.payment_id;
    const refunded = await waitFor(
      () => api('GET', `/payments/${id}`, { token: b }),
      (r) => r.body.status === 'REFUNDED',
      40_000,
      250,
    );
    expect(refunded.body).toMatchObject({
      status: 'REFUNDED',
      amount_usdc: 513,
      refund_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      refunded_at: expect.any(String),
      chain_tx_hash: expect.stringMatching(/^0x/),
    });
    expect(refunded.body.vault_shares_issued).toBeGreaterThan(0);
    const vault = await api('GET', '/mfi/vault', { token: b });
    expect(vault.body.shares).toBe(0);
  });

  it('Idempotency-Key: the retry gets the first answer, one deposit', async () => {
    const headers = { 'idempotency-key': uid('key') };
    const body = { source_currency: 'KES', source_amount: 12_900 };
    const first = await api('POST', '/mfi/deposits', { token: a, body, headers });
    const again = await api('POST', '/mfi/deposits', { token: a, body, headers });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.payment_id).toBe(first.body.payment_id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses what it must: roles, another MFI, ADMIN without mfi_id, unsupported currency, amounts', async () => {
    const coop = await setUpCooperative();
    const cases: Array<[string, unknown, number, string]> = [
      [coop.coop, { source_currency: 'UGX', source_amount: 1000 }, 403, 'INSUFFICIENT_PERMISSIONS'],
      [a, { source_currency: 'UGX', source_amount: 1000, mfi_id: mfiB }, 403, 'INSUFFICIENT_PERMISSIONS'],
      [admin, { source_currency: 'UGX', source_amount: 1000 }, 400, 'VALIDATION_ERROR'],
      [a, { source_currency: 'EUR', source_amount: 1000 }, 400, 'VALIDATION_ERROR'],
      [a, { source_currency: 'ugx', source_amount: 1000 }, 400, 'VALIDATION_ERROR'],
      [a, { source_currency: 'UGX', source_amount: 0 }, 400, 'VALIDATION_ERROR'],
      [a, { source_currency: 'UGX', source_amount: 10.5 }, 400, 'VALIDATION_ERROR'],
      [a, { source_currency: 'UGX', source_amount: 1e15 }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [tok, body, status, code] of cases) {
      const r = await api('POST', '/mfi/deposits', { token: tok, body });
      expect([JSON.stringify(body), r.status, r.body.error?.code]).toEqual([JSON.stringify(body), status, code]);
    }
    const byAdmin = await api('POST', '/mfi/deposits', { token: admin, body: { source_currency: 'USD', source_amount: 50, mfi_id: mfiB } });
    expect([byAdmin.status, byAdmin.body.mfi_id]).toEqual([202, mfiB]);
    expect((await api('GET', '/mfi/vault', { token: coop.coop })).status).toBe(403);
    expect((await api('GET', '/payments/DEP-2026-999999', { token: admin })).status).toBe(404);
  });

  it('on-ramp webhooks: unsigned 401; a signed claim the on-ramp does not confirm is MISMATCH and changes nothing', async () => {
    const res = await api('POST', '/mfi/deposits', { token: a, body: { source_currency: 'USD', source_amount: 70 } });
    const id: string = res.body.payment_id;
    const claim = {
      type: 'onramp.order.completed',
      data: { ramp_payment_id: res.body.ramp_payment_id, reference: id, usdc_amount: '7000' },
    };
    const unsigned = await api('POST', '/api/webhooks/onramp', { body: claim });
    expect([unsigned.status, unsigned.body.error?.code]).toEqual([401, 'INVALID_SIGNATURE']);
    const w = signed(claim);
    const forged = await api('POST', '/api/webhooks/onramp', { raw: w.raw, headers: w.headers });
    expect([forged.status, forged.body]).toEqual([200, { received: true, outcome: 'MISMATCH' }]);
    const replay = await api('POST', '/api/webhooks/onramp', { raw: w.raw, headers: w.headers });
    expect(replay.body.outcome).toBe('DUPLICATE_WEBHOOK');
    const done = await waitFor(
      () => api('GET', `/payments/${id}`, { token: a }),
      (r) => r.body.status === 'COMPLETED',
      30_000,
      250,
    );
    expect(done.body.amount_usdc).toBe(70);
  });
});
