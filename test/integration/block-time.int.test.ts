import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { runBuyerPay } from '../../infra/local/buyer-pay';
import { devBuyerKey } from '../../infra/local/dev-keys';
import { runVerify } from '../../infra/tools/verify-cli';
import { api, token, uid, waitFor } from '../support/api';
import { useOwnStack } from '../support/stack-process';
import { batchBody, registerFarmer, setUpCooperative, purchaseOrderBody } from './fixtures';

/**
 * The service on a local chain with 2-second blocks, the default of `npm start`
 * (LEDGER_BLOCK_TIME_S=2, docs/ledger.md#the-local-chain). This file runs its own stack (the shared
 * one mines each transaction at once): the chain makes a block every 2 s whether or not anything is
 * pending, and a batch goes the whole way on it — submitted and minted, GRADED, backing a loan
 * (vault writes), MILLED, WAREHOUSED, sold on a confirmed purchase order, EXPORTED, paid by the
 * buyer into the vault, settled (loan repaid, SETTLED on the trace log, remainder released) and its
 * trail verified by `npm run verify` against the chain.
 */

const BLOCK_TIME_S = 2;
const stack = useOwnStack({ LEDGER_BLOCK_TIME_S: String(BLOCK_TIME_S) });
const chain = () => createPublicClient({ transport: http(stack().info.endpoints.ledger), pollingInterval: 100 });

it('makes a block every 2 seconds, with nothing pending too', async () => {
  const first = await chain().getBlockNumber();
  await new Promise((r) => setTimeout(r, 3 * BLOCK_TIME_S * 1000 + 500));
  const later = await chain().getBlockNumber();
  // 3 intervals elapsed: 3 blocks (one more or fewer at the edges of the window, on a busy machine).
  expect(Number(later - first)).toBeGreaterThanOrEqual(2);
  expect(Number(later - first)).toBeLessThanOrEqual(4);
  const [a, b] = await Promise.all([chain().getBlock({ blockNumber: later - 1n }), chain().getBlock({ blockNumber: later })]);
  expect(Number(b.timestamp - a.timestamp)).toBeGreaterThanOrEqual(1);
  expect(Number(b.timestamp - a.timestamp)).toBeLessThanOrEqual(BLOCK_TIME_S + 1);
}, 30_000);

it('submit → mint → stages → loan → purchase order → buyer payment → settlement, verified, on 2-second blocks', async () => {
  const ctx = await setUpCooperative();
  const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000654');
  const buyerAddress = privateKeyToAccount(devBuyerKey(stack().info.dataDir)).address;

  // The vault needs liquidity for the loan: an MFI deposit through the on-ramp sandbox.
  const mfi = await token({ role: 'MFI', mfi_id: uid('MFI'), sub: 'mfi-block-time-test' });
  const dep = await api('POST', '/mfi/deposits', { token: mfi, body: { source_currency: 'USD', source_amount: 2_000 } });
  expect(dep.status).toBe(202);

  // Submitted: 201 when the mint is mined within the submission's wait, else 202 with a job; minted either way.
  const submitted = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
  expect([201, 202]).toContain(submitted.status);
  const batchId: string = submitted.body.data?.batch_id ?? submitted.body.batch_id;
  const minted = await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.status === 200 && r.body.chain_tx_hash != null,
    30_000,
    250,
  );
  const mintReceipt = await chain().getTransactionReceipt({ hash: minted.body.chain_tx_hash as Hex });
  expect(mintReceipt.status).toBe('success');

  const stage = async (new_stage: string, evidence: Record<string, unknown>) => {
    const r = await api('PATCH', `/batch/${batchId}/stage`, { token: ctx.coop, body: { cooperative_id: ctx.id, new_stage, evidence } });
    if (r.status !== 200 && r.status !== 202) throw new Error(`${new_stage}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await stage('GRADED', { grade: 'screen18', moisture_pct: 11 });

  await waitFor(
    () => api('GET', `/payments/${dep.body.payment_id}`, { token: mfi }),
    (r) => r.body.status === 'COMPLETED',
    60_000,
    250,
  );
  const loan = await api('POST', '/loans', { token: ctx.coop, body: { batch_id: batchId, amount_usdc: 100 } });
  expect(loan.status).toBe(202);
  const active = await waitFor(
    () => api('GET', `/loans/${loan.body.loan_id}`, { token: ctx.coop }),
    (r) => r.body.status === 'ACTIVE',
    60_000,
    250,
  );
  expect(active.body.status).toBe('ACTIVE');

  await stage('MILLED', { mill_id: 'M1', outturn_kg: 100 });
  await stage('WAREHOUSED', { warehouse_id: 'WH-1' });
  const po = await api('POST', '/purchase-orders', {
    token: ctx.coop,
    body: purchaseOrderBody([batchId], { buyer_address: buyerAddress }),
  });
  expect(po.status).toBe(201);
  const poId: string = po.body.purchase_order_id;
  expect((await api('POST', `/purchase-orders/${poId}/confirm`, { token: ctx.coop })).status).toBe(200);
  await stage('EXPORTED', { export_permit: 'UCDA-EXP-1', destination_country: 'DE' });

  // The buyer pays the amount due into the vault; the local chain watcher reports the payment, which starts the settlement.
  const lines: string[] = [];
  expect(
    await runBuyerPay(
      [poId],
      (l) => lines.push(l),
      (l) => lines.push(l),
      stack().info.dataDir,
    ),
  ).toBe(0);
  const settled = await waitFor(
    () => api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop }),
    (r) => r.body.status === 'COMPLETED',
    90_000,
    250,
  );
  expect(settled.body).toMatchObject({
    status: 'COMPLETED',
    amount_due_usdc: 640,
    settled_batch_ids: [batchId],
    remainder_status: 'RELEASED',
    repayments: [expect.objectContaining({ loan_id: loan.body.loan_id, status: 'REPAID' })],
  });
  const batch = await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.body.stage === 'SETTLED' && r.body.stage_history?.at(-1)?.chain_tx_hash != null,
    30_000,
    250,
  );
  expect(batch.body.stage).toBe('SETTLED');

  // Every stage's record is on chain and every audit entry anchored (the periodic anchor runs every 3 s here).
  const audit = await waitFor(
    () => api('GET', `/batch/${batchId}/audit`, { token: ctx.coop }),
    (r) => r.body.verified === true,
    60_000,
    500,
  );
  expect(audit.body.verified).toBe(true);
  const e = stack().info.endpoints;
  const report: string[] = [];
  const code = await runVerify(
    [
      batchId,
      '--api',
      stack().info.url,
      '--token',
      ctx.admin,
      '--rpc',
      e.ledger!,
      '--chain-id',
      '31337',
      '--batch-token',
      e.batch_token!,
      '--trace-log',
      e.trace_log!,
      '--audit-anchor',
      e.audit_anchor!,
    ],
    (l) => report.push(l),
    (l) => report.push(l),
  );
  if (code !== 0) throw new Error(report.join('\n'));
  expect(report.join('\n')).toMatch(/VERIFIED/);
}, 400_000);

it('a burst of submissions shares mint transactions: at most one BatchToken transaction per block, each token on chain', async () => {
  const ctx = await setUpCooperative();
  const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000655');
  const n = 12;
  const answers = await Promise.all(
    Array.from({ length: n }, () => api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) })),
  );
  for (const a of answers) expect([201, 202]).toContain(a.status);
  const ids = answers.map((a) => (a.body.data?.batch_id ?? a.body.batch_id) as string);
  const minted = await Promise.all(
    ids.map((id) =>
      waitFor(
        () => api('GET', `/batch/${id}`, { token: ctx.coop }),
        (r) => r.status === 200 && r.body.chain_tx_hash != null,
        60_000,
        250,
      ),
    ),
  );
  const hashes = [...new Set(minted.map((m) => m.body.chain_tx_hash as Hex))];
  // Shared: fewer transactions than submissions (the first may go alone, the rest pile up behind it).
  expect(hashes.length).toBeLessThan(n);
  const batchToken = stack().info.endpoints.batch_token!.toLowerCase();
  const receipts = await Promise.all(hashes.map((hash) => chain().getTransactionReceipt({ hash })));
  for (const r of receipts) expect(r.status).toBe('success');
  const blocks = receipts.map((r) => r.blockNumber);
  expect(new Set(blocks).size).toBe(blocks.length);
  for (const r of receipts) expect(r.to?.toLowerCase()).toBe(batchToken);
}, 200_000);
