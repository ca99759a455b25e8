import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { createPublicClient, http, type Hex } from 'viem';
import { runBuyerPay } from '../../infra/local/buyer-pay';
import { DEV_CHAIN_WEBHOOK_SECRET } from '../../infra/local/dev-keys';
import { EvmVaultReader } from '../../shared/adapters/ledger/vault-reader';
import { MAX_PURCHASE_ORDER_BATCHES, ORDER_TRANSACTION_MAX_BATCHES } from '../../shared/domain/purchase-order-limits';
import { api, stackDataDir, token, uid, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * A purchase order of 200 batches, through the API on the local stack
 * (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): N warehoused batches on one
 * order, LOANS of them with a loan; it is created (202 CREATING, the order worker binding each batch with its audit entry),
 * confirmed by the order worker (the call answers 202 at once; GET shows the progress until
 * CONFIRMED, every batch COMMITTED), exported, paid by the dev buyer — the payment event answered
 * 200 at once, delivered twice at once and again later beside an ADMIN's settle call (202 with the
 * order, or 409 once the settlement exists) — and settled once by the order worker:
 * settlement COMPLETED, the loans REPAID by one repayLoans transaction, every batch SETTLED on the
 * trace log, each order-level audit entry once per batch and the logs verified. More than
 * MAX_PURCHASE_ORDER_BATCHES is refused; the order's creation answers 202 at once (CREATING) and
 * the order worker binds its batches (DRAFT); a second order naming bound batches ends FAILED and
 * leaves nothing bound. Runs on the suite's chain (LEDGER_BLOCK_TIME_S=0 unless set).
 */
/**
 * 60 in the test run: above the 40 batches confirmed in one transaction, so the order worker
 * confirms and settles it (one 100-batch step each). LARGE_PO_BATCHES=200 runs the 200-batch order
 * in two steps of each (about 10 minutes on two cores with LEDGER_BLOCK_TIME_S=2, most of it
 * carrying the batches to WAREHOUSED). The test prints the confirmation time and how many blocks
 * after the payment's block the loans were repaid and the last batch recorded SETTLED.
 */
const N = Number(process.env.LARGE_PO_BATCHES ?? 60);
const LOANS = 3;
/** The most a request of the payment event may take: its per-batch work is the order worker's. */
const QUICK_MS = 5_000;
const WIDTH = 6;
const hook = new Webhook(DEV_CHAIN_WEBHOOK_SECRET);
const stack = () =>
  JSON.parse(readFileSync(join(stackDataDir(), 'stack.json'), 'utf8')) as { endpoints: { ledger: string; lending_vault: Hex } };

let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
let farmer: string;

/** `fn` over `items`, WIDTH at a time. */
async function pool<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: WIDTH }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function stage(batchId: string, newStage: string, evidence: Record<string, unknown>): Promise<void> {
  const r = await api('PATCH', `/batch/${batchId}/stage`, {
    token: ctx.coop,
    body: { cooperative_id: ctx.id, new_stage: newStage, evidence },
  });
  if (r.status !== 200 && r.status !== 202) throw new Error(`${batchId} ${newStage}: ${r.status} ${JSON.stringify(r.body)}`);
}

async function warehousedBatches(n: number): Promise<string[]> {
  const ids: string[] = [];
  await pool(
    Array.from({ length: n }, (_, i) => i),
    async () => {
      const res = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
      if (res.status !== 201 && res.status !== 202) throw new Error(`submit: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(res.body.data?.batch_id ?? res.body.batch_id);
    },
  );
  await pool(ids, async (b) => {
    await waitFor(
      () => api('GET', `/batch/${b}`, { token: ctx.coop }),
      (r) => r.status === 200,
      120_000,
      250,
    );
    await stage(b, 'GRADED', { grade: 'screen18', moisture_pct: 11 });
    await stage(b, 'MILLED', { mill_id: 'M1', outturn_kg: 100 });
    await stage(b, 'WAREHOUSED', { warehouse_id: 'WH-1' });
  });
  return ids.sort();
}

const order = (batchIds: string[]) => ({ batch_ids: batchIds, buyer: 'Hamburg Coffee Importers GmbH', price_usd_per_kg: 6.4 });

beforeAll(async () => {
  ctx = await setUpCooperative();
  farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000654');
  // Liquidity in the vault for the loans.
  const mfi = await token({ role: 'MFI', mfi_id: uid('MFI'), sub: 'mfi-large-order-test' });
  const dep = await api('POST', '/mfi/deposits', { token: mfi, body: { source_currency: 'USD', source_amount: 1_000 } });
  await waitFor(
    () => api('GET', `/payments/${dep.body.payment_id}`, { token: mfi }),
    (r) => r.body.status === 'COMPLETED',
    60_000,
    250,
  );
}, 120_000);

describe(`a purchase order of ${N} batches`, () => {
  it('more batches than the most an order holds is a validation error', async () => {
    const ids = Array.from({ length: MAX_PURCHASE_ORDER_BATCHES + 1 }, (_, i) => `BATCH-2026-${String(900_000 + i).padStart(6, '0')}`);
    const r = await api('POST', '/purchase-orders', { token: ctx.coop, body: order(ids) });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('is created, confirmed, paid and settled batch by batch: every batch COMMITTED then SETTLED, each audit entry once', async () => {
    expect(N).toBeGreaterThan(ORDER_TRANSACTION_MAX_BATCHES);
    const batches = await warehousedBatches(N + 1);
    const spare = batches.pop()!;

    // Answered 202 at once (CREATING); the order worker binds the batches, GET shows the progress until DRAFT.
    const createdAt = Date.now();
    const created = await api('POST', '/purchase-orders', { token: ctx.coop, body: order(batches) });
    expect(Date.now() - createdAt).toBeLessThan(QUICK_MS);
    expect(created.status).toBe(202);
    const poId: string = created.body.purchase_order_id;
    expect(created.body).toMatchObject({ status: 'CREATING', batch_count: N, bound_batch_count: 0, amount_due_usdc: 640 * N });
    const drafted = await waitFor(
      () => api('GET', `/purchase-orders/${poId}`, { token: ctx.coop }),
      (r) => r.body.status !== 'CREATING',
      120_000,
      250,
    );
    expect(drafted.body).toMatchObject({
      status: 'DRAFT',
      batch_count: N,
      bound_batch_count: N,
      confirmed_batch_count: 0,
      creation_error: null,
    });

    // A second order naming bound batches (and the spare one) fails: FAILED naming a bound batch, and the spare stays free.
    const clash = await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: order([spare, ...batches.slice(0, ORDER_TRANSACTION_MAX_BATCHES + 5)]),
    });
    expect(clash.status).toBe(202);
    const failed = await waitFor(
      () => api('GET', `/purchase-orders/${clash.body.purchase_order_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'FAILED',
      120_000,
      250,
    );
    expect(failed.body).toMatchObject({ status: 'FAILED', bound_batch_count: 0, creation_error: { code: 'BATCH_ON_ANOTHER_ORDER' } });
    expect(batches).toContain(failed.body.creation_error.batch_id);
    expect((await api('POST', `/purchase-orders/${clash.body.purchase_order_id}/confirm`, { token: ctx.coop })).status).toBe(409);
    const alone = await api('POST', '/purchase-orders', { token: ctx.coop, body: order([spare]) });
    expect(alone.status).toBe(201);

    // Loans on the first LOANS batches, ACTIVE before the order is paid.
    const loanIds: string[] = [];
    for (const b of batches.slice(0, LOANS)) {
      const loan = await api('POST', '/loans', { token: ctx.coop, body: { batch_id: b, amount_usdc: 60 } });
      expect([loan.status, loan.body.error]).toEqual([202, undefined]);
      loanIds.push(loan.body.loan_id);
    }
    for (const id of loanIds)
      await waitFor(
        () => api('GET', `/loans/${id}`, { token: ctx.coop }),
        (r) => r.body.status === 'ACTIVE',
        60_000,
        250,
      );

    const confirmedAt = Date.now();
    // The call answers 202 at once (CONFIRMING); the order worker confirms the batches, GET shows the progress.
    const confirming = await api('POST', `/purchase-orders/${poId}/confirm`, { token: ctx.coop });
    expect(Date.now() - confirmedAt).toBeLessThan(QUICK_MS);
    expect(confirming.status).toBe(202);
    expect(confirming.body).toMatchObject({ status: 'CONFIRMING', batch_count: N, committed_batch_ids: [] });
    const seen: number[] = [];
    const read = await waitFor(
      () => api('GET', `/purchase-orders/${poId}`, { token: ctx.coop }),
      (r) => {
        seen.push(r.body.confirmed_batch_count);
        return r.body.status === 'CONFIRMED';
      },
      300_000,
      500,
    );
    expect(read.body).toMatchObject({ status: 'CONFIRMED', batch_count: N, confirmed_batch_count: N });
    expect([...seen].sort((a, b) => a - b)).toEqual(seen); // the progress never goes back
    process.stdout.write(`confirmed ${N} batches in ${Date.now() - confirmedAt} ms (progress seen: ${[...new Set(seen)].join(', ')})\n`);
    // Confirming again changes nothing.
    const again = await api('POST', `/purchase-orders/${poId}/confirm`, { token: ctx.coop });
    expect(again.body).toMatchObject({ status: 'CONFIRMED', committed_batch_ids: [] });

    await pool(batches, async (b) => {
      await waitFor(
        () => api('GET', `/batch/${b}`, { token: ctx.coop }),
        (r) => r.body.stage === 'COMMITTED',
        60_000,
        250,
      );
      await stage(b, 'EXPORTED', { export_permit: 'UCDA-EXP-1', destination_country: 'DE' });
    });

    // The dev buyer pays the amount due (buyer-pay's default); the signed event reports it.
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
    const [p] = await new EvmVaultReader({
      rpcUrl: s.endpoints.ledger,
      chainId: 31337,
      lendingVaultAddress: s.endpoints.lending_vault,
    }).purchaseOrderPaymentsInTx(txHash);
    const raw = JSON.stringify({
      type: 'purchase_order.paid',
      data: {
        purchase_order_id: poId,
        payer: p!.payer,
        amount_usd_micro: p!.amountUsdMicro.toString(),
        tx_hash: txHash,
        block_number: Number(p!.blockNumber),
        log_index: p!.logIndex,
      },
    });
    const post = () => {
      const id = `evt_large_${Math.random().toString(36).slice(2)}`;
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
    };
    // Delivered twice at once (as by two senders), then once more: each answered 200 at once (the
    // per-batch work is the order worker's); the order is settled once.
    const paidAt = Date.now();
    const [first, second] = await Promise.all([post(), post()]);
    expect(Date.now() - paidAt).toBeLessThan(QUICK_MS);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([first.body.outcome, second.body.outcome]).toEqual(['SETTLEMENT_STARTED', 'SETTLEMENT_STARTED']);
    // Once more, and at the same moment an ADMIN's settle call: the call answers at once, 202 with the
    // order while the worker has not started the settlement (the worker then starts the same one, as
    // that ADMIN), or 409 PO_ALREADY_SETTLED once it has; either way one settlement follows.
    const settleAt = Date.now();
    const [third, bySettle] = await Promise.all([post(), api('POST', `/purchase-orders/${poId}/settle`, { token: ctx.admin, body: {} })]);
    expect(Date.now() - settleAt).toBeLessThan(QUICK_MS);
    expect(third.status).toBe(200);
    if (bySettle.status === 202) expect(bySettle.body).toMatchObject({ purchase_order_id: poId, status: 'CONFIRMED', batch_count: N });
    else expect([bySettle.status, bySettle.body.error?.code]).toEqual([409, 'PO_ALREADY_SETTLED']);
    process.stdout.write(`ADMIN settle call beside the payment event: ${bySettle.status}\n`);
    const settlement = await waitFor(
      () => api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      300_000,
      500,
    );
    process.stdout.write(`payment → settlement COMPLETED in ${Date.now() - paidAt} ms\n`);
    expect(settlement.body.status).toBe('COMPLETED');
    expect(settlement.body.amount_usdc).toBe(640 * N);
    expect(settlement.body.short_payment).toBe(false);
    // The ADMIN, unless the worker had already begun planning it from the payment when the call was kept.
    expect(bySettle.status === 202 ? ['admin-test', 'system:lending-vault'] : ['system:lending-vault']).toContain(
      settlement.body.settled_by,
    );
    // Settled: another ADMIN call is refused.
    const late = await api('POST', `/purchase-orders/${poId}/settle`, { token: ctx.admin, body: {} });
    expect([late.status, late.body.error?.code]).toEqual([409, 'PO_ALREADY_SETTLED']);
    expect([...settlement.body.settled_batch_ids].sort()).toEqual(batches);
    // The loans repaid by one repayLoans transaction (one chunk), each loan REPAID.
    const repayTxs = new Set(settlement.body.repayments.map((r: { repay_tx_hash: string }) => r.repay_tx_hash));
    expect(settlement.body.repayments.map((r: { loan_id: string; status: string }) => [r.loan_id, r.status]).sort()).toEqual(
      loanIds.map((id) => [id, 'REPAID']).sort(),
    );
    expect(repayTxs.size).toBe(1);
    for (const id of loanIds) expect((await api('GET', `/loans/${id}`, { token: ctx.coop })).body.status).toBe('REPAID');
    const settledTxs = new Set<Hex>();
    await pool(batches, async (b) => {
      const r = await waitFor(
        () => api('GET', `/batch/${b}`, { token: ctx.coop }),
        (r) => r.body.stage === 'SETTLED' && r.body.stage_history?.at(-1)?.chain_tx_hash != null,
        120_000,
        250,
      );
      settledTxs.add(r.body.stage_history.at(-1).chain_tx_hash);
    });
    // How many blocks after the payment's block the loans were repaid and the last batch recorded SETTLED.
    const chain = createPublicClient({ transport: http(s.endpoints.ledger) });
    const blockOf = async (tx: Hex) => (await chain.getTransactionReceipt({ hash: tx })).blockNumber;
    const settledBlocks = await Promise.all([...settledTxs].map(blockOf));
    const lastSettled = [...settledBlocks].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).at(-1)!;
    const repaidBlock = await blockOf([...repayTxs][0] as Hex);
    process.stdout.write(
      `payment in block ${p!.blockNumber}: loans repaid ${repaidBlock - p!.blockNumber} blocks after it, last batch SETTLED ${lastSettled - p!.blockNumber} blocks after it (${settledTxs.size} trace-log transactions), ${Date.now() - paidAt} ms after the payment event\n`,
    );

    // Each order-level audit entry is in every batch's log exactly once, and the logs verify.
    await pool(
      batches.filter((_, i) => i % 15 === 0),
      async (b) => {
        const audit = await waitFor(
          () => api('GET', `/batch/${b}/audit`, { token: ctx.coop }),
          (r) => r.body.verified === true,
          30_000,
          250,
        );
        const types: string[] = audit.body.entries.map((e: { type: string }) => e.type);
        for (const t of ['PURCHASE_ORDER_CREATED', 'PURCHASE_ORDER_CONFIRMED', 'BUYER_PAYMENT_RECEIVED', 'SETTLEMENT_STARTED'])
          expect([b, t, types.filter((x) => x === t).length]).toEqual([b, t, 1]);
      },
    );
  }, 1_800_000);
});
