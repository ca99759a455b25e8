import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { EvmVaultReader } from '../../shared/adapters/ledger/vault-reader';
import type { Hex } from '../../shared/domain/ports';
import { runBuyerPay } from '../../infra/local/buyer-pay';
import { DEV_CHAIN_WEBHOOK_SECRET } from '../../infra/local/dev-keys';
import { runVerify } from '../../infra/tools/verify-cli';
import { api, stackDataDir, stackUrl, token, uid, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Settlement on the local stack (decisions §10, §10.1): a purchase order of two exported batches,
 * one with a loan, is paid by the buyer into the vault (`npm run buyer-pay`); the signed
 * `purchase_order.paid` chain event settles it exactly once: the loan repaid with interest (its
 * BatchToken unlocked), both batches SETTLED in the trace log and the audit log, the remainder
 * released to the cooperative, the vault's share price up. A forged event changes nothing; the
 * event delivered twice settles once.
 */

const stack = () => JSON.parse(readFileSync(join(stackDataDir(), 'stack.json'), 'utf8')) as { endpoints: { ledger: string; lending_vault: Hex; batch_token: Hex; trace_log: Hex; audit_anchor: Hex } };
const hook = new Webhook(DEV_CHAIN_WEBHOOK_SECRET);
const BUYER = { name: 'Hamburg Coffee Importers GmbH', eori: 'DE123456789012345', address: 'Am Sandtorkai 1, 20457 Hamburg', email: 'dds@hci.example', country: 'DE' };

let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
let farmer: string;
let admin: string;

function post(body: unknown, id = `evt_test_${Math.random().toString(36).slice(2)}`) {
  const raw = JSON.stringify(body);
  const at = new Date();
  return api('POST', '/api/webhooks/chain-events', {
    raw, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': hook.sign(id, at, raw) },
  });
}

/** A minted batch carried to WAREHOUSED. */
async function warehousedBatch(): Promise<string> {
  const res = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
  const batchId: string = res.body.data?.batch_id ?? res.body.batch_id;
  await waitFor(() => api('GET', `/batch/${batchId}`, { token: ctx.coop }), (r) => r.status === 200, 20_000);
  for (const [stage, evidence] of [['GRADED', { grade: 'screen18', moisture_pct: 11 }], ['MILLED', { mill_id: 'M1', outturn_kg: 100 }], ['WAREHOUSED', { warehouse_id: 'WH-1' }]] as const) {
    const r = await api('PATCH', `/batch/${batchId}/stage`, { token: ctx.coop, body: { cooperative_id: ctx.id, new_stage: stage, evidence } });
    if (r.status !== 200 && r.status !== 202) throw new Error(`${stage}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return batchId;
}

async function sharePrice(): Promise<number> {
  return (await api('GET', '/mfi/vault', { token: admin })).body.share_price_usdc;
}

beforeAll(async () => {
  ctx = await setUpCooperative();
  admin = ctx.admin;
  farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000321');
  const mfi = await token({ role: 'MFI', mfi_id: uid('MFI'), sub: 'mfi-settlement-test' });
  const dep = await api('POST', '/mfi/deposits', { token: mfi, body: { source_currency: 'USD', source_amount: 3_000 } });
  await waitFor(() => api('GET', `/payments/${dep.body.payment_id}`, { token: mfi }), (r) => r.body.status === 'COMPLETED', 30_000, 250);
}, 90_000);

describe('a buyer payment settles its purchase order', () => {
  it('repays the loan with interest, unlocks the token, records both batches SETTLED, releases the remainder — once', async () => {
    const [withLoan, withoutLoan] = [await warehousedBatch(), await warehousedBatch()];
    const loan = await api('POST', '/loans', { token: ctx.coop, body: { batch_id: withLoan, amount_usdc: 200 } });
    expect(loan.status).toBe(202);
    await waitFor(() => api('GET', `/loans/${loan.body.loan_id}`, { token: ctx.coop }), (r) => r.body.status === 'ACTIVE', 30_000, 250);

    const po = await api('POST', '/purchase-orders', { token: ctx.coop, body: { batch_ids: [withLoan, withoutLoan], buyer: BUYER.name, price_usd_per_kg: 6.4, buyer_operator: BUYER } });
    const poId: string = po.body.purchase_order_id;
    expect((await api('POST', `/purchase-orders/${poId}/confirm`, { token: ctx.coop })).status).toBe(200);
    for (const b of [withLoan, withoutLoan]) {
      const r = await api('PATCH', `/batch/${b}/stage`, { token: ctx.coop, body: { cooperative_id: ctx.id, new_stage: 'EXPORTED', evidence: { export_permit: 'UCDA-EXP-1', destination_country: 'DE' } } });
      expect([200, 202]).toContain(r.status);
    }
    expect((await api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop })).status).toBe(404);
    const priceBefore = await sharePrice();

    // The buyer pays 2 × 120.5 kg × 6.40 USD/kg = 1,542.40 USDC into the vault.
    const lines: string[] = [];
    expect(await runBuyerPay([poId], (l) => lines.push(l), (l) => lines.push(l), stackDataDir())).toBe(0);
    const txHash = lines.find((l) => /^0x[0-9a-f]{64}$/.test(l)) as Hex;
    const s = stack();
    const [payment] = await new EvmVaultReader({ rpcUrl: s.endpoints.ledger, chainId: 31337, lendingVaultAddress: s.endpoints.lending_vault }).purchaseOrderPaymentsInTx(txHash);
    expect(payment).toMatchObject({ purchaseOrderId: poId, amountUsdMicro: 1_542_400_000n });
    const event = { type: 'purchase_order.paid', data: { purchase_order_id: poId, payer: payment!.payer, amount_usd_micro: '1542400000', tx_hash: txHash, block_number: Number(payment!.blockNumber), log_index: payment!.logIndex } };

    // Forged: another amount → MISMATCH, nothing changes.
    const forged = await post({ ...event, data: { ...event.data, amount_usd_micro: '1' } });
    expect(forged.body).toMatchObject({ received: true, outcome: 'MISMATCH' });

    // The event delivered twice (two webhook-ids, as from two senders): settled once.
    const [first, second] = await Promise.all([post(event), post(event)]);
    expect([first.status, second.status]).toEqual([200, 200]);

    const done = await waitFor(() => api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop }), (r) => r.body.status === 'COMPLETED', 40_000, 250);
    const settled = done.body;
    expect(settled).toMatchObject({ status: 'COMPLETED', amount_usdc: 1542.4, payment_tx_hash: txHash, remainder_status: 'RELEASED', remainder_tx_hash: expect.stringMatching(/^0x/), unpaid_loan_ids: [] });
    expect(settled.settled_batch_ids.sort()).toEqual([withLoan, withoutLoan].sort());
    expect(settled.repayments).toEqual([expect.objectContaining({ loan_id: loan.body.loan_id, principal_usdc: 200, interest_usdc: 0.065754, amount_usdc: 200.065754, status: 'REPAID' })]);
    expect(settled.remainder_usdc).toBeCloseTo(1542.4 - 200.065754, 6);

    const repaid = await api('GET', `/loans/${loan.body.loan_id}`, { token: ctx.coop });
    expect(repaid.body).toMatchObject({ status: 'REPAID', repaid_usdc: 200.065754, repay_tx_hash: expect.stringMatching(/^0x/), repaid_by_purchase_order_id: poId });
    expect((await api('GET', `/batch/${withLoan}/loan`, { token: ctx.coop })).status).toBe(404);

    for (const b of [withLoan, withoutLoan]) {
      const batch = await waitFor(() => api('GET', `/batch/${b}`, { token: ctx.coop }), (r) => r.body.stage_history?.at(-1)?.chain_tx_hash != null && r.body.stage === 'SETTLED', 20_000, 250);
      expect(batch.body.stage).toBe('SETTLED');
      // Verified once the periodic anchor (every 3 s here) has committed the settlement's entries.
      const audit = await waitFor(() => api('GET', `/batch/${b}/audit`, { token: ctx.coop }), (r) => r.body.verified === true, 30_000, 250);
      const entries: Array<{ type: string; payload: { stage?: string; evidence?: { purchase_order_id?: string } } }> = audit.body.entries;
      const types = entries.map((e) => e.type);
      const settledEntries = entries.filter((e) => e.type === 'STAGE_CHANGED' && e.payload.stage === 'SETTLED');
      expect(settledEntries).toHaveLength(1);
      expect(settledEntries[0]!.payload.evidence?.purchase_order_id).toBe(poId);
      expect(audit.body.verified).toBe(true);
      if (b === withLoan) expect(types).toContain('LOAN_REPAID');
    }
    expect(await sharePrice()).toBeGreaterThan(priceBefore);
    // `npm run verify` (no trust in the service): the settled batch's whole trail checks out.
    const report: string[] = [];
    const e = stack().endpoints;
    const code = await runVerify([withLoan, '--api', stackUrl(), '--token', admin, '--rpc', e.ledger, '--chain-id', '31337', '--batch-token', e.batch_token, '--trace-log', e.trace_log, '--audit-anchor', e.audit_anchor], (l) => report.push(l), (l) => report.push(l));
    if (code !== 0) throw new Error(report.join('\n'));
    expect(report.join('\n')).toMatch(/VERIFIED/);

    // Once more, later: nothing new.
    const again = await post(event);
    expect(again.body.outcome).toBe('SETTLEMENT_STARTED');
    expect((await api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop })).body.repayments).toHaveLength(1);
  }, 120_000);
});
