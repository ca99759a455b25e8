import createClient from 'openapi-fetch';
import { createPublicClient, http, isAddressEqual } from 'viem';
import { batchTokenAbi } from '../../shared/adapters/ledger/abi';
import type { paths } from '../../clients/typescript/api-types';
import { runVerify } from '../tools/verify-cli';
import { runBuyerPay } from './buyer-pay';
import { localDataDir, signDevToken } from './dev-keys';
import { readLocalStackFile } from './stack-file';

/**
 * `npm run demo`: drives a full batch lifecycle over HTTP against a running local service
 * (`npm start` in another terminal) and prints what happened, with timings (docs/architecture.md#the-local-stack).
 * A Bugisu cooperative on Mt Elgon registers its farmers, delivers batches, each batch becomes a
 * BatchToken on the ledger, and each farmer is paid to mobile money until PAYMENT_CONFIRMED.
 * Then the lending story (docs/api/lending.md#mfi-deposits): an MFI deposits USD 20,000 through the on-ramp
 * into the vault (shares, share price); a GRADED batch backs a loan of about half its maximum (the
 * BatchToken locked in the vault, the LOAN_DISBURSEMENT paid to the farmer's mobile money); the
 * batch is milled, warehoused, committed to a purchase order and exported; the buyer pays the
 * purchase order into the vault on chain (as `npm run buyer-pay`); the settlement repays the loan
 * with interest (share price up), marks the batch SETTLED and credits the remainder to the
 * cooperative; last the batch's custody trail is checked independently as `npm run verify` does.
 * Every wait is bounded and fails with what it was waiting for (exit code 1). Every call goes
 * through the typed client: openapi-fetch over the types generated from the service's OpenAPI
 * document (clients/typescript/api-types.d.ts, `npm run gen:client`), so paths, parameters and bodies are
 * checked against the document at compile time.
 * Environment: DEMO_URL (default http://127.0.0.1:$PORT, PORT default 3000), LOCAL_DATA_DIR
 * (the running service's, for its token key, its chain endpoints and the dev buyer's key).
 */

const base = process.env.DEMO_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
const t0 = Date.now();
const say = (line: string) => process.stdout.write(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

/** The typed client of the API (openapi-fetch over the generated types). */
const api = createClient<paths>({ baseUrl: base });
/** Request options carrying a bearer token. */
const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** The service's error envelope (`details` differ by code). */
interface ErrorBody {
  error?: {
    code?: string;
    message?: string;
    // biome-ignore lint/suspicious/noExplicitAny: `details` differ by error code; the demo reads the loan-limit figures from them
    details?: any;
  };
}
/** A call's outcome: the status, the typed success body or the error envelope. */
interface Outcome<D> {
  status: number;
  data?: D;
  error?: ErrorBody;
}

/** Awaits a typed call and keeps what the demo reads of it. */
async function done<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<Outcome<D>> {
  const r = await call;
  return { status: r.response.status, data: r.data, error: r.error as ErrorBody | undefined };
}

const COOP = 'BUGISU-CU-01';
const farmers = [
  {
    farmer_id: 'UG-BUD-004512',
    full_name: 'Nabulo Mirembe',
    phone: '+256772418305',
    district: 'Bududa',
    gps: { lat: 1.011812, lng: 34.331245 },
  },
  {
    farmer_id: 'UG-SIR-001877',
    full_name: 'Wanyera Moses',
    phone: '+256701552760',
    district: 'Sironko',
    gps: { lat: 1.231004, lng: 34.248713 },
  },
  {
    farmer_id: 'UG-KAP-000931',
    full_name: 'Chebet Rose',
    phone: '+256783104422',
    district: 'Kapchorwa',
    gps: { lat: 1.396245, lng: 34.450118 },
  },
  {
    farmer_id: 'UG-MAN-002208',
    full_name: 'Mafabi Peter',
    phone: '+256752906613',
    district: 'Manafwa',
    gps: { lat: 0.978511, lng: 34.337902 },
  },
];
const deliveries = [
  { farmer: 0, weight_kg: 182.4, grade: 'screen18', moisture_pct: 11.2 },
  { farmer: 1, weight_kg: 96.0, grade: 'screen15', moisture_pct: 12.0 },
  { farmer: 2, weight_kg: 240.75, grade: 'PB', moisture_pct: 11.8 },
  { farmer: 3, weight_kg: 58.3, grade: 'FAQ', moisture_pct: 12.5 },
] as const;

async function main() {
  try {
    await api.GET('/openapi.json');
  } catch {
    say(`No service answers at ${base}. Start it first with \`npm start\` (or set DEMO_URL).`);
    process.exit(2);
  }
  say(`Service at ${base}`);
  const admin = await signDevToken({ role: 'ADMIN', sub: 'demo-admin' });
  const manager = await signDevToken({ role: 'COOPERATIVE', cooperative_id: COOP, sub: 'demo-manager' });
  const agent = await signDevToken({ role: 'AGENT', cooperative_id: COOP, sub: 'demo-field-agent' });

  const coop = await done(
    api.POST('/cooperatives', {
      ...as(admin),
      body: {
        cooperative_id: COOP,
        name: 'Bugisu Cooperative Union',
        district: 'Mbale',
        licence_status: 'ACTIVE',
        licence_expires_at: '2027-06-30',
        manager: { name: 'Sarah Wanyama', email: 'manager@bugisu-cu.example', phone: '+256772650019' },
        prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
        export_premium_ugx_per_kg: 400,
      },
    }),
  );
  say(
    coop.status === 201
      ? `Cooperative ${COOP} (Bugisu Cooperative Union, Mbale) registered`
      : `Cooperative ${COOP}: ${coop.error?.error?.code ?? coop.status}`,
  );
  for (const f of farmers) {
    const r = await done(
      api.POST('/farmers/register', {
        ...as(agent),
        body: {
          farmer_id: f.farmer_id,
          full_name: f.full_name,
          cooperative_id: COOP,
          phone: f.phone,
          district: f.district,
          farm: { gps: f.gps, area_ha: 1.2 },
        },
      }),
    );
    say(
      r.status === 201 && r.data && 'gfw_status' in r.data
        ? `Farmer ${f.farmer_id} ${f.full_name} (${f.district}), phone ${r.data.phone}, forest check ${r.data.gfw_status}`
        : `Farmer ${f.farmer_id}: ${r.error?.error?.code ?? r.status}`,
    );
  }

  const runs: Array<{
    batch: string;
    payout?: string;
    started: number;
    minted: number;
    token: string;
    tx: string;
    farmer: string;
    ugx: number;
  }> = [];
  for (const d of deliveries) {
    const f = farmers[d.farmer]!;
    const started = Date.now();
    const r = await done(
      api.POST('/batch/submit', {
        ...as(agent),
        body: {
          farmer_id: f.farmer_id,
          cooperative_id: COOP,
          weight_kg: d.weight_kg,
          grade: d.grade,
          moisture_pct: d.moisture_pct,
          collection_point_gps: f.gps,
          collector_agent_id: 'AGENT-MBL-07',
        },
      }),
    );
    if (r.status !== 201 || !r.data || !('data' in r.data)) {
      say(`Batch for ${f.full_name} refused: ${r.status} ${r.error?.error?.code} ${r.error?.error?.message}`);
      continue;
    }
    const data = r.data.data;
    runs.push({
      batch: data.batch_id,
      started,
      minted: Date.now(),
      token: data.token_id ?? '',
      tx: data.chain_tx_hash ?? '',
      farmer: f.full_name,
      ugx: data.payment_amount_ugx,
    });
    say(
      `${data.batch_id}: ${d.weight_kg} kg ${d.grade} from ${f.full_name} → BatchToken #${data.token_id}, tx ${data.chain_tx_hash} (${Date.now() - started} ms); payment ${data.payment_status} ${data.payment_amount_ugx.toLocaleString('en-US')} UGX to ${data.farmer_phone}`,
    );
  }

  say('Waiting for the mobile-money settlements…');
  const pending = new Set(runs.map((r) => r.batch));
  const deadline = Date.now() + 120_000;
  while (pending.size && Date.now() < deadline) {
    for (const run of runs.filter((x) => pending.has(x.batch))) {
      if (!run.payout) {
        const list = await done(api.GET('/payments', { ...as(manager), params: { query: { batch_id: run.batch } } }));
        run.payout = list.data?.payments?.[0]?.payment_id;
        if (run.payout) say(`${run.batch}: payout ${run.payout} PROCESSING with the provider`);
        continue;
      }
      const p = (await done(api.GET('/payments/{id}', { ...as(manager), params: { path: { id: run.payout } } }))).data;
      if (!p || !('retry_count' in p)) continue; // a farmer payout (PAY-…)
      if (p.status === 'COMPLETED') {
        const b = (await done(api.GET('/batch/{id}', { ...as(agent), params: { path: { id: run.batch } } }))).data;
        if (b?.payment_status !== 'PAYMENT_CONFIRMED') continue;
        pending.delete(run.batch);
        say(
          `${run.batch}: payout ${run.payout} COMPLETED — ${(p.amount_ugx ?? 0).toLocaleString('en-US')} UGX (${p.amount_usdc} USDC at ${p.exchange_rate} UGX/USDC), M-money ${p.mobile_money_transaction_id}; batch ${b.payment_status} ${((Date.now() - run.started) / 1000).toFixed(1)} s after submission (service: ${p.elapsed_seconds} s)`,
        );
      } else if (p.status === 'MANUAL_REVIEW') {
        pending.delete(run.batch);
        say(`${run.batch}: payout ${run.payout} MANUAL_REVIEW after ${p.retry_count} retries`);
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  if (pending.size) {
    say(`Not settled within 120 s: ${[...pending].join(', ')}`);
    process.exit(1);
  }
  say(`${runs.length} batches minted and their farmers paid.`);

  if (!runs[0]) throw new Error('no batch was minted: the lending part needs one');
  await lendingStory(runs[0].batch, admin);
  say(`Done. API reference: ${base}/docs`);
}

/** Polls `read` every 250 ms until `done`; throws naming `what` after `timeoutMs`. */
async function waitFor<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}; last seen: ${JSON.stringify(v).slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The success body; throws with the response's error when the status is not one of `ok`. */
function expectStatus<D>(what: string, res: Outcome<D>, ...ok: number[]): D {
  if (!ok.includes(res.status) || res.data === undefined)
    throw new Error(
      `${what}: HTTP ${res.status} ${res.error?.error?.code ?? ''} ${res.error?.error?.message ?? JSON.stringify(res.error ?? res.data)}`,
    );
  return res.data;
}

/** Vault shares are integers of 6-decimal units. */
const shares = (units: number) => `${(Number(units) / 1e6).toLocaleString('en-US', { maximumFractionDigits: 6 })} shares`;
const usd = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });

/**
 * The lending story on `batchId` (a DELIVERED batch of the demo cooperative): deposit → loan →
 * custody to EXPORTED under a purchase order → buyer payment → settlement → independent verification.
 */
async function lendingStory(batchId: string, admin: string) {
  say("— Lending: an MFI funds the vault, a batch backs a loan, the buyer's payment settles it —");
  const mfi = await signDevToken({ role: 'MFI', mfi_id: 'MFI-ELGON-01', sub: 'demo-mfi-officer' });
  const duty = (d: string) => signDevToken({ role: 'COOPERATIVE', cooperative_id: COOP, duties: [d], sub: `demo-${d.toLowerCase()}` });
  const [loanOfficer, grader, miller, storekeeper, exporter] = await Promise.all([
    duty('MANAGER'),
    duty('QUALITY_OFFICER'),
    duty('MILL_OPERATOR'),
    duty('WAREHOUSE_MANAGER'),
    duty('EXPORTER'),
  ]);

  // 1. The MFI deposits USD 20,000 through the fiat on-ramp; USDC enters the vault, shares are issued.
  const vault = async () => expectStatus('GET /mfi/vault', await done(api.GET('/mfi/vault', as(mfi))), 200);
  const vault0 = await vault();
  const dep = expectStatus(
    'POST /mfi/deposits',
    await done(api.POST('/mfi/deposits', { ...as(mfi), body: { source_currency: 'USD', source_amount: 20_000 } })),
    202,
  );
  say(`MFI-ELGON-01 deposits USD 20,000: ${dep.payment_id} ${dep.status} with the on-ramp`);
  const deposit = await waitFor(
    `deposit ${dep.payment_id} COMPLETED`,
    async () => (await done(api.GET('/payments/{id}', { ...as(mfi), params: { path: { id: dep.payment_id } } }))).data,
    (d) => d?.status === 'COMPLETED' || d?.status === 'FAILED' || d?.status === 'REFUNDED',
    30_000,
  );
  if (!deposit || !('vault_shares_issued' in deposit) || deposit.status !== 'COMPLETED')
    throw new Error(`deposit ${dep.payment_id} ended ${deposit?.status}`);
  const vault1 = await vault();
  say(
    `${dep.payment_id} COMPLETED: ${usd(deposit.amount_usdc)} USDC into the vault (tx ${deposit.chain_tx_hash}), ${shares(deposit.vault_shares_issued ?? 0)} issued`,
  );
  say(
    `Vault: ${usd(vault1.total_assets_usdc)} USDC, share price ${vault1.share_price_usdc} USDC (was ${vault0.share_price_usdc}), MFI-ELGON-01 holds ${shares(vault1.shares ?? 0)} worth ${usd(vault1.value_usdc ?? 0)} USDC`,
  );

  // 2. The batch is graded; its BatchToken backs a loan of about half the most it can support.
  type StageBody = NonNullable<paths['/batch/{id}/stage']['patch']['requestBody']>['content']['application/json'];
  const patch = async (tok: string, change: Omit<StageBody, 'cooperative_id'>) => {
    const r = expectStatus(
      `PATCH /batch/${batchId}/stage ${change.new_stage}`,
      await done(
        api.PATCH('/batch/{id}/stage', {
          ...as(tok),
          params: { path: { id: batchId } },
          body: { cooperative_id: COOP, ...change } as StageBody,
        }),
      ),
      200,
      202,
    );
    say(
      `${batchId}: ${r.previous_stage} → ${r.new_stage}, evidence ${r.evidence_ipfs_cid}, trace-log tx ${r.chain_tx_hash ?? `pending (job ${'job_id' in r ? r.job_id : '?'})`}`,
    );
  };
  await patch(grader, {
    new_stage: 'GRADED',
    evidence: { grade: 'screen18', moisture_pct: 11.2, screen_size: 18, defect_count: 3, cupping_score: 84.5 },
  });
  const probe = await done(api.POST('/loans', { ...as(loanOfficer), body: { batch_id: batchId, amount_usdc: 100_000 } }));
  const figures = probe.error?.error?.details;
  if (probe.status !== 422 || typeof figures?.max_loan_usdc !== 'number')
    expectStatus('POST /loans (asking more than the collateral allows)', probe, 422);
  say(
    `Loan limit of ${batchId}: collateral ${usd(figures.collateral_value_usdc)} USDC (${figures.price_usd_per_kg} USD/kg), at most ${usd(figures.max_loan_usdc)} USDC at 60 % loan-to-value`,
  );
  const principal = Math.floor(figures.max_loan_usdc * 50) / 100;
  const asked = expectStatus(
    'POST /loans',
    await done(api.POST('/loans', { ...as(loanOfficer), body: { batch_id: batchId, amount_usdc: principal } })),
    202,
  );
  const readLoan = async () => (await done(api.GET('/loans/{id}', { ...as(loanOfficer), params: { path: { id: asked.loan_id } } }))).data;
  say(`${asked.loan_id}: ${usd(asked.principal_usdc)} USDC at ${asked.apr * 100} % APR, loan-to-value ${asked.ltv}, ${asked.status}`);
  const active = await waitFor(
    `loan ${asked.loan_id} ACTIVE`,
    readLoan,
    (l) => l?.status === 'ACTIVE' || l?.status === 'CANCELLED',
    45_000,
  );
  if (active?.status !== 'ACTIVE') throw new Error(`loan ${asked.loan_id} ended ${active?.status}`);
  const disb = expectStatus(
    `GET /payments/${asked.disbursement_payment_id}`,
    await done(api.GET('/payments/{id}', { ...as(loanOfficer), params: { path: { id: asked.disbursement_payment_id } } })),
    200,
  );
  if (!('amount_ugx' in disb)) throw new Error(`${asked.disbursement_payment_id} is not a disbursement`);
  say(
    `${asked.loan_id} ACTIVE: BatchToken locked in the vault (tx ${active.lock_tx_hash}); ${disb.payment_id} ${disb.status}, ${usd(disb.amount_usdc)} USDC = ${Number(disb.amount_ugx).toLocaleString('en-US')} UGX to the farmer's mobile money`,
  );

  // 3. Milled, warehoused, committed to a purchase order, exported.
  await patch(miller, { new_stage: 'MILLED', evidence: { mill_id: 'MILL-MBALE-2', outturn_kg: 150.2 } });
  await patch(storekeeper, {
    new_stage: 'WAREHOUSED',
    evidence: { warehouse_id: 'WH-MBALE-1', lot_number: 'LOT-2026-118', position: 'A-3' },
  });
  const readBatch = async () => (await done(api.GET('/batch/{id}', { ...as(loanOfficer), params: { path: { id: batchId } } }))).data;
  const po = expectStatus(
    'POST /purchase-orders',
    await done(
      api.POST('/purchase-orders', {
        ...as(loanOfficer),
        body: {
          batch_ids: [batchId],
          buyer: 'Hamburg Coffee Importers GmbH',
          price_usd_per_kg: 7.1,
          buyer_operator: {
            name: 'Hamburg Coffee Importers GmbH',
            eori: 'DE123456789012345',
            address: 'Am Sandtorkai 1, 20457 Hamburg',
            email: 'dds@hci.example',
            country: 'DE',
          },
        },
      }),
    ),
    201,
  );
  expectStatus(
    `POST /purchase-orders/${po.purchase_order_id}/confirm`,
    await done(api.POST('/purchase-orders/{id}/confirm', { ...as(loanOfficer), params: { path: { id: po.purchase_order_id } } })),
    200,
  );
  await waitFor(`${batchId} COMMITTED`, readBatch, (b) => b?.stage === 'COMMITTED', 15_000);
  say(`${po.purchase_order_id}: ${batchId} at 7.10 USD/kg for Hamburg Coffee Importers GmbH, confirmed → ${batchId} COMMITTED`);
  await patch(exporter, {
    new_stage: 'EXPORTED',
    evidence: { export_permit: 'UCDA-EXP-2026-0091', destination_country: 'DE', vessel_name: 'MSC Kampala', bill_of_lading: 'MSCU1234567' },
  });

  // 4. The buyer pays the purchase order into the vault on chain (what `npm run buyer-pay` does).
  const vaultBefore = await vault();
  const paidAt = Date.now();
  const lines: string[] = [];
  const code = await runBuyerPay(
    [po.purchase_order_id],
    (l) => lines.push(l),
    (l) => lines.push(l),
    localDataDir(),
  );
  if (code !== 0) throw new Error(`the buyer's payment failed (exit ${code}): ${lines.join(' | ')}`);
  say(`Buyer: ${lines.slice(0, -1).join(' ')}; tx ${lines[lines.length - 1]}`);

  // 5. The settlement: loan repaid with interest, token unlocked, batch SETTLED, remainder credited.
  const settlement = (await waitFor(
    `the settlement of ${po.purchase_order_id} COMPLETED`,
    async () =>
      (
        await done(api.GET('/purchase-orders/{id}/settlement', { ...as(loanOfficer), params: { path: { id: po.purchase_order_id } } }))
      ).data,
    (st) => st?.status === 'COMPLETED',
    30_000,
  ))!;
  // SETTLED and its trace-log record mined (on a chain with block time it lands in a later block than the settlement's answer).
  const settled = (await waitFor(
    `${batchId} SETTLED on the trace log`,
    readBatch,
    (b) => b?.stage === 'SETTLED' && b.stage_history?.at(-1)?.chain_tx_hash != null,
    20_000,
  ))!;
  const repaid = (await waitFor(`loan ${asked.loan_id} REPAID`, readLoan, (l) => l?.status === 'REPAID', 20_000))!;
  say(
    `Settlement of ${po.purchase_order_id} COMPLETED ${((Date.now() - paidAt) / 1000).toFixed(1)} s after the payment: ${usd(settlement.amount_usdc)} USDC received (tx ${settlement.payment_tx_hash})`,
  );
  for (const r of settlement.repayments ?? [])
    say(`  ${r.loan_id} (${r.batch_id}) ${r.status}: ${usd(r.amount_usdc)} USDC = principal + ${usd(r.interest_usdc)} USDC interest`);
  const chain = readLocalStackFile(localDataDir()) as { endpoints: Record<string, `0x${string}`> } | undefined;
  if (!chain) throw new Error(`no stack.json in ${localDataDir()}: start the local stack first (npm start)`);
  const holder = await createPublicClient({ transport: http(chain.endpoints.ledger) }).readContract({
    address: chain.endpoints.batch_token!,
    abi: batchTokenAbi,
    functionName: 'ownerOf',
    args: [BigInt(settled.token_id!)],
  });
  if (isAddressEqual(holder, chain.endpoints.lending_vault!))
    throw new Error(`BatchToken #${settled.token_id} is still held by the vault after the settlement`);
  say(
    `${asked.loan_id} ${repaid.status}: ${usd(repaid.repaid_usdc ?? 0)} USDC (principal ${usd(repaid.principal_usdc)}), tx ${repaid.repay_tx_hash}; ${batchId} ${settled.stage}, BatchToken #${settled.token_id} back with ${holder}`,
  );
  say(`Remainder ${usd(settlement.remainder_usdc)} USDC credited to ${COOP} (tx ${settlement.remainder_tx_hash})`);
  const vault2 = await vault();
  say(
    `Vault: ${usd(vault2.total_assets_usdc)} USDC (was ${usd(vaultBefore.total_assets_usdc)}), share price ${vault2.share_price_usdc} USDC (was ${vaultBefore.share_price_usdc}); MFI-ELGON-01's shares now worth ${usd(vault2.value_usdc ?? 0)} USDC`,
  );
  if (!(vault2.total_assets_usdc > vaultBefore.total_assets_usdc)) throw new Error("the vault's assets did not grow by the interest");

  // 6. Anyone can check the custody trail without trusting the service (`npm run verify -- <batch>`).
  const report: string[] = [];
  const verified = await runVerify(
    [batchId, '--api', base, '--token', admin],
    (l) => report.push(l),
    (l) => report.push(l),
  );
  const last = report.filter((l) => l.startsWith('VERIFIED') || l.startsWith('NOT VERIFIED')).pop() ?? '';
  // Entries written in the last ANCHOR_INTERVAL_S (300 s × LOCAL_TIME_SCALE) wait for the next
  // periodic anchor (docs/api/anchoring.md#anchoring-of-the-audit-log): every other check must pass, and the demo says what waits.
  const failed = report.filter((l) => l.startsWith('✗'));
  const awaitingAnchor = failed.filter((l) => / anchor\s+not yet anchored/.test(l));
  if (verified !== 0 && (failed.length === 0 || awaitingAnchor.length !== failed.length)) {
    throw new Error(`npm run verify -- ${batchId} did not verify (exit ${verified}):\n${report.join('\n')}`);
  }
  if (verified === 0) say(`npm run verify -- ${batchId}: ${last.trim()}`);
  else
    say(
      `npm run verify -- ${batchId}: every check passes except that ${awaitingAnchor.length} recent entries await the next periodic anchor (every ANCHOR_INTERVAL_S, 300 s by default); run it again after that to see VERIFIED`,
    );
}

main().catch((err) => {
  process.stderr.write(`demo failed: ${(err as Error).message}\n`);
  process.exit(1);
});
