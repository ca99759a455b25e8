import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { createPublicClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { EvmVaultReader } from '../../shared/adapters/ledger/vault-reader';
import { runBuyerPay } from '../../infra/local/buyer-pay';
import { DEV_CHAIN_WEBHOOK_SECRET, devBuyerKey } from '../../infra/local/dev-keys';
import { testUsdcAbi } from '../../shared/adapters/ledger/abi';
import { runVerify } from '../../infra/tools/verify-cli';
import { api, stackDataDir, stackUrl, token, uid, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Settlement on the local stack (docs/api/settlement.md#settlement): a purchase order of two exported
 * batches, one with a loan, names the dev buyer's address; a dust payment (`buyer-pay --amount
 * 0.000001`) leaves it AWAITING_PAYMENT with no batch SETTLED; the buyer's payment of the amount
 * due (`npm run buyer-pay`) then settles it exactly once on the signed `purchase_order.paid` events: the loan repaid with interest (its
 * BatchToken unlocked), both batches SETTLED in the trace log and the audit log, the remainder
 * released to the cooperative, the vault's share price up. A forged event changes nothing; the
 * event delivered twice settles once. A payment after the settlement, and one from the dev buyer to
 * an order naming another buyer_address, are listed as unapplied and refunded to the payer by an
 * ADMIN (the payer's USDC back on chain).
 */

const stack = () =>
  JSON.parse(readFileSync(join(stackDataDir(), 'stack.json'), 'utf8')) as {
    endpoints: { ledger: string; lending_vault: Hex; vault_asset: Hex; batch_token: Hex; trace_log: Hex; audit_anchor: Hex };
  };
const hook = new Webhook(DEV_CHAIN_WEBHOOK_SECRET);
const BUYER = {
  name: 'Hamburg Coffee Importers GmbH',
  eori: 'DE123456789012345',
  address: 'Am Sandtorkai 1, 20457 Hamburg',
  email: 'dds@hci.example',
  country: 'DE',
};

let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
let farmer: string;
let admin: string;
let buyerAddress: Hex;

function post(body: unknown, id = `evt_test_${Math.random().toString(36).slice(2)}`) {
  const raw = JSON.stringify(body);
  const at = new Date();
  return api('POST', '/api/webhooks/chain-events', {
    raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': hook.sign(id, at, raw),
    },
  });
}

/** A minted batch carried to WAREHOUSED. */
async function warehousedBatch(): Promise<string> {
  const res = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
  const batchId: string = res.body.data?.batch_id ?? res.body.batch_id;
  await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.status === 200,
    20_000,
  );
  for (const [stage, evidence] of [
    ['GRADED', { grade: 'screen18', moisture_pct: 11 }],
    ['MILLED', { mill_id: 'M1', outturn_kg: 100 }],
    ['WAREHOUSED', { warehouse_id: 'WH-1' }],
  ] as const) {
    const r = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: stage, evidence },
    });
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
  buyerAddress = privateKeyToAccount(devBuyerKey(stackDataDir())).address;
  farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000321');
  const mfi = await token({ role: 'MFI', mfi_id: uid('MFI'), sub: 'mfi-settlement-test' });
  const dep = await api('POST', '/mfi/deposits', { token: mfi, body: { source_currency: 'USD', source_amount: 3_000 } });
  await waitFor(
    () => api('GET', `/payments/${dep.body.payment_id}`, { token: mfi }),
    (r) => r.body.status === 'COMPLETED',
    30_000,
    250,
  );
}, 90_000);

describe('a buyer payment settles its purchase order', () => {
  it('repays the loan with interest, unlocks the token, records both batches SETTLED, releases the remainder — once', async () => {
    const [withLoan, withoutLoan] = [await warehousedBatch(), await warehousedBatch()];
    const loan = await api('POST', '/loans', { token: ctx.coop, body: { batch_id: withLoan, amount_usdc: 200 } });
    expect(loan.status).toBe(202);
    await waitFor(
      () => api('GET', `/loans/${loan.body.loan_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'ACTIVE',
      30_000,
      250,
    );

    const po = await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: {
        batch_ids: [withLoan, withoutLoan],
        buyer: BUYER.name,
        price_usd_per_kg: 6.4,
        buyer_operator: BUYER,
        buyer_address: buyerAddress,
      },
    });
    const poId: string = po.body.purchase_order_id;
    expect((await api('POST', `/purchase-orders/${poId}/confirm`, { token: ctx.coop })).status).toBe(200);
    for (const b of [withLoan, withoutLoan]) {
      const r = await api('PATCH', `/batch/${b}/stage`, {
        token: ctx.coop,
        body: { cooperative_id: ctx.id, new_stage: 'EXPORTED', evidence: { export_permit: 'UCDA-EXP-1', destination_country: 'DE' } },
      });
      expect([200, 202]).toContain(r.status);
    }
    // Nothing paid yet: AWAITING_PAYMENT, with the amount due = 2 × 100 kg milled outturn × 6.40 USD/kg.
    expect(po.body).toMatchObject({ amount_due_usdc: 1280, paid_usdc: 0, buyer_address: buyerAddress.toLowerCase() });
    const awaiting = await api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop });
    expect(awaiting.status).toBe(200);
    expect(awaiting.body).toMatchObject({
      status: 'AWAITING_PAYMENT',
      amount_due_usdc: 1280,
      paid_usdc: 0,
      payments: [],
      unapplied_payments: [],
      repayments: [],
    });
    const priceBefore = await sharePrice();

    // A dust payment (0.000001 USDC, `buyer-pay --amount`) counts but settles nothing.
    const dust = await payAndReport([poId, '--amount', '0.000001']);
    expect(dust.outcome).toBe('AWAITING_PAYMENT');
    const afterDust = (await api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop })).body;
    expect(afterDust).toMatchObject({
      status: 'AWAITING_PAYMENT',
      paid_usdc: 0.000001,
      amount_due_usdc: 1280,
      payments: [expect.objectContaining({ tx_hash: dust.txHash, amount_usdc: 0.000001, status: 'COUNTED' })],
    });
    for (const b of [withLoan, withoutLoan]) expect((await api('GET', `/batch/${b}`, { token: ctx.coop })).body.stage).toBe('EXPORTED');
    expect((await api('GET', `/loans/${loan.body.loan_id}`, { token: ctx.coop })).body.status).toBe('ACTIVE');

    // The buyer pays the amount due (buyer-pay's default): 1,280 USDC; with the dust, 1,280.000001 is applied.
    const lines: string[] = [];
    expect(
      await runBuyerPay(
        [poId],
        (l) => lines.push(l),
        (l) => lines.push(l),
        stackDataDir(),
      ),
    ).toBe(0);
    const txHash = lines.find((l) => /^0x[0-9a-f]{64}$/.test(l)) as Hex;
    const s = stack();
    const [payment] = await new EvmVaultReader({
      rpcUrl: s.endpoints.ledger,
      chainId: 31337,
      lendingVaultAddress: s.endpoints.lending_vault,
    }).purchaseOrderPaymentsInTx(txHash);
    expect(payment).toMatchObject({ purchaseOrderId: poId, amountUsdMicro: 1_280_000_000n });
    const event = {
      type: 'purchase_order.paid',
      data: {
        purchase_order_id: poId,
        payer: payment!.payer,
        amount_usd_micro: '1280000000',
        tx_hash: txHash,
        block_number: Number(payment!.blockNumber),
        log_index: payment!.logIndex,
      },
    };

    // Forged: another amount → MISMATCH, nothing changes.
    const forged = await post({ ...event, data: { ...event.data, amount_usd_micro: '1' } });
    expect(forged.body).toMatchObject({ received: true, outcome: 'MISMATCH' });

    // The event delivered twice (two webhook-ids, as from two senders): settled once.
    const [first, second] = await Promise.all([post(event), post(event)]);
    expect([first.status, second.status]).toEqual([200, 200]);

    const done = await waitFor(
      () => api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      40_000,
      250,
    );
    const settled = done.body;
    expect(settled).toMatchObject({
      status: 'COMPLETED',
      amount_usdc: 1280.000001,
      paid_usdc: 1280.000001,
      amount_due_usdc: 1280,
      short_payment: false,
      payment_tx_hash: txHash,
      remainder_status: 'RELEASED',
      remainder_tx_hash: expect.stringMatching(/^0x/),
      unpaid_loan_ids: [],
    });
    expect(settled.payments.map((p: { tx_hash: string }) => p.tx_hash).sort()).toEqual([dust.txHash, txHash].sort());
    expect(settled.settled_batch_ids.sort()).toEqual([withLoan, withoutLoan].sort());
    expect(settled.repayments).toEqual([
      expect.objectContaining({
        loan_id: loan.body.loan_id,
        principal_usdc: 200,
        interest_usdc: 0.065754,
        amount_usdc: 200.065754,
        status: 'REPAID',
      }),
    ]);
    expect(settled.remainder_usdc).toBeCloseTo(1280.000001 - 200.065754, 6);

    const repaid = await api('GET', `/loans/${loan.body.loan_id}`, { token: ctx.coop });
    expect(repaid.body).toMatchObject({
      status: 'REPAID',
      repaid_usdc: 200.065754,
      repay_tx_hash: expect.stringMatching(/^0x/),
      repaid_by_purchase_order_id: poId,
    });
    expect((await api('GET', `/batch/${withLoan}/loan`, { token: ctx.coop })).status).toBe(404);

    for (const b of [withLoan, withoutLoan]) {
      const batch = await waitFor(
        () => api('GET', `/batch/${b}`, { token: ctx.coop }),
        (r) => r.body.stage_history?.at(-1)?.chain_tx_hash != null && r.body.stage === 'SETTLED',
        20_000,
        250,
      );
      expect(batch.body.stage).toBe('SETTLED');
      // Verified once the periodic anchor (every 3 s here) has committed the settlement's entries.
      const audit = await waitFor(
        () => api('GET', `/batch/${b}/audit`, { token: ctx.coop }),
        (r) => r.body.verified === true,
        30_000,
        250,
      );
      const entries: Array<{ type: string; payload: { stage?: string; evidence?: Record<string, unknown>; evidence_ipfs_cid?: string } }> =
        audit.body.entries;
      const types = entries.map((e) => e.type);
      const settledEntries = entries.filter((e) => e.type === 'STAGE_CHANGED' && e.payload.stage === 'SETTLED');
      expect(settledEntries).toHaveLength(1);
      // The SETTLED evidence is public (/ipfs/{cid}, no token): the order and the payments' hashes, no amounts.
      expect(settledEntries[0]!.payload.evidence).toEqual({
        purchase_order_id: poId,
        payment_tx_hashes: expect.arrayContaining([dust.txHash, txHash]),
        loan_id: b === withLoan ? loan.body.loan_id : null,
      });
      expect(
        JSON.stringify(settledEntries.concat(entries.filter((e) => e.payload.stage === 'COMMITTED')).map((e) => e.payload.evidence)),
      ).not.toMatch(/usdc|amount|price/i);
      expect(types.filter((t) => t === 'BUYER_PAYMENT_RECEIVED')).toHaveLength(2);
      expect(types).toContain('SETTLEMENT_STARTED');
      expect(audit.body.verified).toBe(true);
      if (b === withLoan) expect(types).toContain('LOAN_REPAID');
    }
    expect(await sharePrice()).toBeGreaterThan(priceBefore);
    // `npm run verify` (no trust in the service): the settled batch's whole trail checks out.
    const report: string[] = [];
    const e = stack().endpoints;
    const code = await runVerify(
      [
        withLoan,
        '--api',
        stackUrl(),
        '--token',
        admin,
        '--rpc',
        e.ledger,
        '--chain-id',
        '31337',
        '--batch-token',
        e.batch_token,
        '--trace-log',
        e.trace_log,
        '--audit-anchor',
        e.audit_anchor,
      ],
      (l) => report.push(l),
      (l) => report.push(l),
    );
    if (code !== 0) throw new Error(report.join('\n'));
    expect(report.join('\n')).toMatch(/VERIFIED/);

    // Once more, later: nothing new.
    const again = await post(event);
    expect(again.body.outcome).toBe('SETTLEMENT_STARTED');
    expect((await api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop })).body.repayments).toHaveLength(1);

    // A payment after the settlement stays in escrow: listed unapplied, refunded to its payer by an ADMIN.
    const late = await payAndReport([poId, '--amount', '3']);
    expect(late.outcome).toBe('ALREADY_SETTLED');
    const listed = (await api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop })).body;
    expect(listed.unapplied_payments).toEqual([
      expect.objectContaining({
        tx_hash: late.txHash,
        payer: buyerAddress,
        amount_usdc: 3,
        status: 'UNAPPLIED',
        unapplied_reason: 'AFTER_SETTLEMENT',
      }),
    ]);
    expect(listed.paid_usdc).toBe(1280.000001);
    await refundAndCheck(poId, late, 3);
    expect(
      (await api('POST', `/purchase-orders/${poId}/settle`, { token: admin, body: { accept_short_payment: true } })).body.error.code,
    ).toBe('PO_ALREADY_SETTLED');
  }, 180_000);

  it('a payment from another address than buyer_address does not count: listed unapplied, refunded to its payer; settle refusals', async () => {
    const batchRes = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    const batchId: string = batchRes.body.data?.batch_id ?? batchRes.body.batch_id;
    await waitFor(
      () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
      (r) => r.status === 200,
      20_000,
    );
    const someoneElse = privateKeyToAccount(generatePrivateKey()).address;
    const bad = await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: { batch_ids: [batchId], buyer: BUYER.name, price_usd_per_kg: 6.4, buyer_address: '0x1234' },
    });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const po = await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: { batch_ids: [batchId], buyer: BUYER.name, price_usd_per_kg: 6.4, buyer_address: someoneElse },
    });
    expect(po.status).toBe(201);
    expect(po.body.amount_due_usdc).toBeNull(); // not milled yet
    const poId: string = po.body.purchase_order_id;
    expect((await api('POST', `/purchase-orders/${poId}/confirm`, { token: ctx.coop })).status).toBe(200);

    const stray = await payAndReport([poId, '--amount', '2.5']);
    expect(stray.outcome).toBe('OTHER_PAYER');
    const view = (await api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop })).body;
    expect(view).toMatchObject({ status: 'AWAITING_PAYMENT', paid_usdc: 0, buyer_address: someoneElse.toLowerCase(), payments: [] });
    expect(view.unapplied_payments).toEqual([
      expect.objectContaining({
        tx_hash: stray.txHash,
        payer: buyerAddress,
        amount_usdc: 2.5,
        unapplied_reason: 'OTHER_PAYER',
        status: 'UNAPPLIED',
      }),
    ]);

    // Settling by hand: ADMIN only; nothing counted → 409 NO_PAYMENT_RECEIVED.
    expect((await api('POST', `/purchase-orders/${poId}/settle`, { token: ctx.coop, body: { accept_short_payment: true } })).status).toBe(
      403,
    );
    const nothing = await api('POST', `/purchase-orders/${poId}/settle`, { token: admin, body: { accept_short_payment: true } });
    expect([nothing.status, nothing.body.error.code]).toEqual([409, 'NO_PAYMENT_RECEIVED']);

    await refundAndCheck(poId, stray, 2.5);
  }, 120_000);
});

/** Pays with `buyer-pay` and delivers the signed chain event of the payment; its outcome and tx. */
async function payAndReport(args: string[]): Promise<{ txHash: Hex; logIndex: number; outcome: string }> {
  const lines: string[] = [];
  if (
    (await runBuyerPay(
      args,
      (l) => lines.push(l),
      (l) => lines.push(l),
      stackDataDir(),
    )) !== 0
  )
    throw new Error(`buyer-pay ${args.join(' ')}: ${lines.join(' | ')}`);
  const txHash = lines.find((l) => /^0x[0-9a-f]{64}$/.test(l)) as Hex;
  const s = stack();
  const [p] = await new EvmVaultReader({
    rpcUrl: s.endpoints.ledger,
    chainId: 31337,
    lendingVaultAddress: s.endpoints.lending_vault,
  }).purchaseOrderPaymentsInTx(txHash);
  const res = await post({
    type: 'purchase_order.paid',
    data: {
      purchase_order_id: p!.purchaseOrderId,
      payer: p!.payer,
      amount_usd_micro: p!.amountUsdMicro.toString(),
      tx_hash: txHash,
      block_number: Number(p!.blockNumber),
      log_index: p!.logIndex,
    },
  });
  expect(res.status).toBe(200);
  return { txHash, logIndex: p!.logIndex, outcome: res.body.outcome };
}

/** The buyer's USDC on chain. */
async function buyerUsdc(): Promise<bigint> {
  const s = stack();
  return createPublicClient({ transport: http(s.endpoints.ledger) }).readContract({
    address: s.endpoints.vault_asset,
    abi: testUsdcAbi,
    functionName: 'balanceOf',
    args: [buyerAddress],
  });
}

/** An ADMIN refunds an unapplied payment: 403 for others, 202, REFUNDED once mined, the payer's USDC back on chain; twice → 409. */
async function refundAndCheck(poId: string, paid: { txHash: Hex; logIndex: number }, usdc: number): Promise<void> {
  const body = { tx_hash: paid.txHash, log_index: paid.logIndex };
  expect((await api('POST', `/purchase-orders/${poId}/refunds`, { token: ctx.coop, body })).status).toBe(403);
  const unknown = await api('POST', `/purchase-orders/${poId}/refunds`, { token: admin, body: { ...body, log_index: paid.logIndex + 50 } });
  expect([unknown.status, unknown.body.error.code]).toEqual([404, 'BUYER_PAYMENT_NOT_FOUND']);
  const before = await buyerUsdc();
  const asked = await api('POST', `/purchase-orders/${poId}/refunds`, { token: admin, body });
  expect(asked.status).toBe(202);
  expect(asked.body).toMatchObject({
    tx_hash: paid.txHash,
    status: 'REFUND_REQUESTED',
    refund_id: expect.stringMatching(/^RFD-[0-9a-f]{28}$/),
  });
  const done = await waitFor(
    () => api('GET', `/purchase-orders/${poId}/settlement`, { token: admin }),
    (r) => r.body.unapplied_payments?.find((p: { tx_hash: string }) => p.tx_hash === paid.txHash)?.status === 'REFUNDED',
    30_000,
    250,
  );
  const refunded = done.body.unapplied_payments.find((p: { tx_hash: string }) => p.tx_hash === paid.txHash);
  expect(refunded).toMatchObject({ refund_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), refunded_at: expect.any(String) });
  expect(await buyerUsdc()).toBe(before + BigInt(Math.round(usdc * 1e6)));
  const twice = await api('POST', `/purchase-orders/${poId}/refunds`, { token: admin, body });
  expect([twice.status, twice.body.error.code]).toEqual([409, 'PAYMENT_ALREADY_REFUNDED']);
}
