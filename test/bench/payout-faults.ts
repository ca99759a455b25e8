import { appendFileSync } from 'node:fs';
import { signDevToken } from '../../infra/local/dev-keys';
import type { PawaPaySandboxStats } from '../../infra/local/pawapay-sandbox';
import { parseBlockTimeSeconds } from '../../infra/local/hardhat-node';
import { startStackProcess, type StackProcess } from '../support/stack-process';
import { acceptedBatch, apiCaller, blockTimeLabel, untilMinted } from './submission';

/**
 * The payout-faults benchmark (issue: payouts that never pay twice and never get lost), on a local
 * stack whose payout sandbox rejects 20 % of orders at random and drops 10 % of its webhooks,
 * with LOCAL_TIME_SCALE=0.01 (waits 0.3/0.6/1.2 s, attempt timeout 9 s, reconciliation after 3 s),
 * on the chain's block time (LEDGER_BLOCK_TIME_S, default 2 s):
 *  - 200 batches, each paying its farmer (NET_COFFEE_PAYMENT) once minted: a submission answered
 *    201 or 202 (accepted, minted when its ledger write lands) counts as submitted;
 *  - 50-way concurrent identical TOP_UP requests on 4 of those batches;
 *  - 5 farmers whose every order fails (+256700000001), for the time to MANUAL_REVIEW.
 * Prints: payouts reaching a final state, settled orders per payout (max), duplicates created,
 * COMPLETED payouts without a settled order and payouts paid but not COMPLETED, p50/p95 time to
 * COMPLETED of first-attempt settlements, time to MANUAL_REVIEW; then the verdict (PASS, or FAIL
 * and a non-zero exit). Described with its figures in docs/api/payouts.md#faults-benchmark.
 */

const PAYOUTS = Number(process.env.BENCH_FAULT_PAYOUTS ?? 200);
const SETTLE_MS = 500;
/** How long the local stack may take to start (a loaded machine needs minutes, not the 90 s default). */
const STACK_START_MS = 600_000;
const pct = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]! : NaN;
const say = (l: string) => process.stdout.write(`${l}\n`);

/** Settled orders per payout id from counts per reference `<payout_id>-A<attempt>`. */
function settledPerPayout(perReference: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [ref, k] of Object.entries(perReference)) {
    const id = ref.replace(/-A\d+$/, '');
    out[id] = (out[id] ?? 0) + k;
  }
  return out;
}

const share = (k: number, of: number) => `${((100 * k) / Math.max(1, of)).toFixed(1)} %`;

/**
 * Prints PASS, or FAIL with every broken invariant, and then makes the bench exit non-zero: a
 * payout not final or paid twice is a failed run, not a figure.
 */
function verdict(part: string, checks: Array<[ok: boolean, problem: string]>): void {
  const failed = checks.filter(([ok]) => !ok).map(([, problem]) => problem);
  say(failed.length ? `  ${part}: FAIL: ${failed.join('; ')}` : `  ${part}: PASS (every payout final, none paid twice)`);
  if (failed.length) process.exitCode = 1;
}

/** With BENCH_STACK_LOG=<file>, everything the local stack prints is appended to that file (to explain a payout that is not final). */
function keepStackLog(stack: StackProcess): void {
  const file = process.env.BENCH_STACK_LOG;
  if (!file) return;
  for (const s of [stack.child.stdout, stack.child.stderr]) s?.on('data', (d: Buffer) => appendFileSync(file, d));
}

async function pool<T, R>(items: T[], width: number, fn: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

export async function payoutFaultsBench(): Promise<void> {
  say(
    `\nPayout faults: ${PAYOUTS} payouts, sandbox rejecting 20 % of orders and dropping 10 % of webhooks, settle ${SETTLE_MS} ms, LOCAL_TIME_SCALE=0.01, ${blockTimeLabel()}`,
  );
  const stack = await startStackProcess(
    {
      LOCAL_TIME_SCALE: '0.01',
      PAYOUT_SANDBOX_SETTLE_MS: String(SETTLE_MS),
      PAYOUT_SANDBOX_REJECT_RATE: '0.2',
      PAYOUT_SANDBOX_DROP_WEBHOOK_RATE: '0.1',
      LOCAL_RATE_LIMIT_RPS: '100000',
      LOCAL_RATE_LIMIT_BURST: '100000',
    },
    STACK_START_MS,
  );
  keepStackLog(stack);
  try {
    const url = stack.info.url;
    const admin = await signDevToken({ role: 'ADMIN', sub: 'bench-admin' }, 3600, stack.info.dataDir);
    const coopId = 'FAULTS-COOP';
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: coopId, sub: 'bench-coop' }, 3600, stack.info.dataDir);
    const call = apiCaller(url);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: coopId,
      name: 'Faults Cooperative',
      district: 'Mbale',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'Bench Manager', email: 'bench@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 400,
    });
    const farmer = (id: string, phone: string) =>
      call('POST', '/farmers/register', coop, {
        farmer_id: id,
        full_name: `Farmer ${id}`,
        cooperative_id: coopId,
        phone,
        district: 'Mbale',
        farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
      });
    await farmer('FAULT-F', '+256772000202');
    for (let i = 0; i < 5; i++) await farmer(`FAIL-F${i}`, '+256700000001');
    const batchBody = (f: string) => ({
      farmer_id: f,
      cooperative_id: coopId,
      weight_kg: (50 + Math.random() * 100) | 0,
      grade: 'screen15',
      moisture_pct: 12,
      collection_point_gps: { lat: 1.08, lng: 34.17 },
      collector_agent_id: 'AGENT-1',
    });

    const t0 = Date.now();
    let answered202 = 0;
    const batches = await pool(
      Array.from({ length: PAYOUTS }, (_, i) => i),
      6,
      async () => {
        const accepted = acceptedBatch(await call('POST', '/batch/submit', coop, batchBody('FAULT-F')));
        if (!accepted.minted) answered202++;
        return accepted.batchId;
      },
    );
    const failing = await pool(
      Array.from({ length: 5 }, (_, i) => i),
      5,
      async (i) => acceptedBatch(await call('POST', '/batch/submit', coop, batchBody(`FAIL-F${i}`))).batchId,
    );
    say(
      `  submitted ${batches.length + failing.length} batches in ${((Date.now() - t0) / 1000).toFixed(1)} s (${answered202} of the ${batches.length} answered 202: accepted, minted when the write lands)`,
    );

    // 50-way concurrent duplicates, on batches that are minted
    const dupBatches = batches.slice(0, 4);
    for (const b of dupBatches) await untilMinted(call, coop, b);
    const dupResults = await Promise.all(
      dupBatches.flatMap((b) =>
        Array.from({ length: 50 }, () =>
          call('POST', '/payments/farmer-payout', coop, {
            farmer_id: 'FAULT-F',
            batch_id: b,
            amount_usdc: 3.25,
            reason: 'TOP_UP',
            cooperative_id: coopId,
          }),
        ),
      ),
    );
    const dupStatus: Record<number, number> = {};
    for (const r of dupResults) dupStatus[r.status] = (dupStatus[r.status] ?? 0) + 1;
    say(
      `  50-way duplicate TOP_UP requests on ${dupBatches.length} batches: ${JSON.stringify(dupStatus)} (201 created, 500 PAYOUT_FAILED = created and rejected by the provider, 409 DUPLICATE_PAYOUT)`,
    );

    // wait for every payout to be final
    const all = [...batches, ...failing];
    // The payouts start as their mints land: one ledger write a block today, so allow for that on a chain with block time.
    const deadline = Date.now() + 240_000 + all.length * 1_500 * parseBlockTimeSeconds(process.env.LEDGER_BLOCK_TIME_S);
    let payouts: any[] = [];
    let open: any[] = [];
    for (;;) {
      // A batch whose mint has not landed yet has no payout listed (its answer may carry none).
      const lists = await pool(all, 8, async (b) => ((await call('GET', `/payments?batch_id=${b}`, coop)).body.payments ?? []) as any[]);
      const ids = lists.flat().map((p) => p.payment_id as string);
      payouts = await pool(ids, 8, async (id) => (await call('GET', `/payments/${id}`, coop)).body);
      open = payouts.filter((p) => p.status !== 'COMPLETED' && p.status !== 'MANUAL_REVIEW');
      const expected = all.length + dupBatches.length;
      if ((payouts.length >= expected && open.length === 0) || Date.now() > deadline) {
        say(
          `  payouts reaching a final state: ${payouts.length - open.length}/${payouts.length} (expected ${expected} payouts: ${all.length} NET_COFFEE_PAYMENT + ${dupBatches.length} TOP_UP) after ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        );
        for (const p of open) say(`    not final: ${p.payment_id} ${p.status} retry_count ${p.retry_count} updated ${p.updated_at}`);
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }

    const perKey: Record<string, number> = {};
    for (const p of payouts) perKey[`${p.batch_id}/${p.reason}`] = (perKey[`${p.batch_id}/${p.reason}`] ?? 0) + 1;
    const duplicates = Object.values(perKey).reduce((n, c) => n + (c - 1), 0);
    say(`  duplicates created (payouts beyond one per batch and reason): ${duplicates}`);

    const stats = (await (await fetch(`${stack.info.endpoints.payout_sandbox}/v1/sandbox/stats`)).json()) as {
      settledPerReference: Record<string, number>;
      ordersCreated: number;
      ordersRejected: number;
      webhooksDropped: number;
      ordersSettled: number;
    };
    const paid = settledPerPayout(stats.settledPerReference);
    const maxSettled = Math.max(0, ...Object.values(paid));
    const twice = Object.values(paid).filter((k) => k > 1).length;
    const completed = payouts.filter((p) => p.status === 'COMPLETED');
    const unpaidButCompleted = completed.filter((p) => !paid[p.payment_id]).length;
    const paidNotCompleted = Object.keys(paid).filter((id) => !completed.some((p) => p.payment_id === id)).length;
    say(
      `  sandbox: ${stats.ordersCreated} orders created, ${stats.ordersRejected} rejected, ${stats.ordersSettled} settled, ${stats.webhooksDropped} webhooks dropped`,
    );
    say(
      `  orders settled per payout: max ${maxSettled} (target ≤ 1); COMPLETED payouts without a settled order: ${unpaidButCompleted}; payouts paid but not COMPLETED: ${paidNotCompleted}`,
    );

    const first = completed.filter((p) => p.retry_count === 0);
    const toCompleted = first.map((p) => Date.parse(p.completed_at) - Date.parse(p.created_at));
    say(
      `  time to COMPLETED, first-attempt settlements (sandbox settles in ${SETTLE_MS} ms; target ≤ ${SETTLE_MS + 1000} ms): p50 ${pct(toCompleted, 50)} ms  p95 ${pct(toCompleted, 95)} ms  (n=${first.length}; a dropped webhook is found by reconciliation after 3 s)`,
    );
    // Recorded within a second of the provider's settlement = the webhook came; later = found by reconciliation.
    const byWebhook = first.filter((p) => Date.parse(p.completed_at) - Date.parse(p.settled_at) < 1000);
    const tw = byWebhook.map((p) => Date.parse(p.completed_at) - Date.parse(p.created_at));
    say(
      `    settled through the webhook (n=${byWebhook.length}): p50 ${pct(tw, 50)} ms  p95 ${pct(tw, 95)} ms; found by reconciliation (webhook dropped): n=${first.length - byWebhook.length}`,
    );
    const manual = payouts.filter((p) => p.status === 'MANUAL_REVIEW');
    const toManual = manual.map((p) => (Date.parse(p.updated_at) - Date.parse(p.created_at)) / 1000);
    say(
      `  MANUAL_REVIEW: ${manual.length} payouts (${manual.filter((p) => failing.includes(p.batch_id)).length} from the always-failing phone); time to MANUAL_REVIEW p50 ${pct(toManual, 50)?.toFixed(1)} s, max ${Math.max(...toManual).toFixed(1)} s (scaled waits 0.3 + 0.6 + 1.2 s = 2.1 s; unscaled 210 s)`,
    );
    verdict('faults', [
      [
        open.length === 0 && payouts.length >= all.length + dupBatches.length,
        `${open.length} payouts not final, ${payouts.length}/${all.length + dupBatches.length} listed`,
      ],
      [duplicates === 0, `${duplicates} duplicate payouts created`],
      [twice === 0, `${twice} payouts paid more than once`],
      [unpaidButCompleted === 0, `${unpaidButCompleted} COMPLETED payouts without a settled order`],
      [paidNotCompleted === 0, `${paidNotCompleted} payouts paid but not COMPLETED`],
    ]);
  } catch (err) {
    process.stderr.write(`local stack output:\n${stack.output()}\n`);
    throw err;
  } finally {
    await stack.stop();
  }
}

/**
 * The failover part of the faults benchmark (docs/api/payouts.md#payout-providers-and-failover): a
 * stack with PAYOUT_PROVIDERS=provider-api,pawapay whose primary is unreachable for 20 % of payout
 * references (PAYOUT_SANDBOX_UNREACHABLE_RATE=0.2: every order call for such a reference has its
 * socket destroyed, its look-ups answer). `BENCH_FAILOVER_PAYOUTS` batches (default 100), each
 * paying its farmer once minted. Prints: payouts final, COMPLETED per recorded provider, and from
 * both sandboxes' settled orders by payout reference: payouts paid per provider (share), settled
 * orders per payout across both (max; target 1), payouts paid twice or at both providers, COMPLETED
 * payouts not paid at their recorded provider, payouts paid but not COMPLETED (target 0 each); then
 * the verdict (PASS, or FAIL and a non-zero exit).
 */
export async function payoutFailoverBench(): Promise<void> {
  const n = Number(process.env.BENCH_FAILOVER_PAYOUTS ?? 100);
  say(
    `\nPayout failover: ${n} payouts, PAYOUT_PROVIDERS=provider-api,pawapay, the primary unreachable for 20 % of references, ${blockTimeLabel()}`,
  );
  const stack = await startStackProcess(
    {
      LOCAL_TIME_SCALE: '0.01',
      PAYOUT_SANDBOX_SETTLE_MS: String(SETTLE_MS),
      PAYOUT_PROVIDERS: 'provider-api,pawapay',
      PAYOUT_SANDBOX_UNREACHABLE_RATE: '0.2',
      LOCAL_RATE_LIMIT_RPS: '100000',
      LOCAL_RATE_LIMIT_BURST: '100000',
    },
    STACK_START_MS,
  );
  keepStackLog(stack);
  try {
    const call = apiCaller(stack.info.url);
    const admin = await signDevToken({ role: 'ADMIN', sub: 'bench-admin' }, 3600, stack.info.dataDir);
    const coopId = 'FAILOVER-COOP';
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: coopId, sub: 'bench-coop' }, 3600, stack.info.dataDir);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: coopId,
      name: 'Failover Cooperative',
      district: 'Mbale',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'Bench Manager', email: 'bench@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 400,
    });
    await call('POST', '/farmers/register', coop, {
      farmer_id: 'FAILOVER-F',
      full_name: 'Farmer Failover',
      cooperative_id: coopId,
      phone: '+256772000303',
      district: 'Mbale',
      farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
    });
    const t0 = Date.now();
    const batches = await pool(
      Array.from({ length: n }, (_, i) => i),
      6,
      async () =>
        acceptedBatch(
          await call('POST', '/batch/submit', coop, {
            farmer_id: 'FAILOVER-F',
            cooperative_id: coopId,
            weight_kg: (50 + Math.random() * 100) | 0,
            grade: 'screen15',
            moisture_pct: 12,
            collection_point_gps: { lat: 1.08, lng: 34.17 },
            collector_agent_id: 'AGENT-1',
          }),
        ).batchId,
    );
    const deadline = Date.now() + 240_000 + n * 1_500 * parseBlockTimeSeconds(process.env.LEDGER_BLOCK_TIME_S);
    let payouts: any[] = [];
    let open: any[] = [];
    for (;;) {
      const lists = await pool(
        batches,
        8,
        async (b) => ((await call('GET', `/payments?batch_id=${b}`, coop)).body.payments ?? []) as any[],
      );
      payouts = await pool(
        lists.flat().map((p) => p.payment_id as string),
        8,
        async (id) => (await call('GET', `/payments/${id}`, coop)).body,
      );
      open = payouts.filter((p) => p.status !== 'COMPLETED' && p.status !== 'MANUAL_REVIEW');
      if ((payouts.length >= n && open.length === 0) || Date.now() > deadline) {
        say(
          `  payouts final: ${payouts.length - open.length}/${payouts.length} (expected ${n}) after ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        );
        for (const p of open) say(`    not final: ${p.payment_id} ${p.status} provider ${p.provider}`);
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    const byProvider: Record<string, number> = {};
    for (const p of payouts.filter((x) => x.status === 'COMPLETED'))
      byProvider[p.provider ?? 'none'] = (byProvider[p.provider ?? 'none'] ?? 0) + 1;
    const done = Object.values(byProvider).reduce((a, b) => a + b, 0);
    say(
      `  COMPLETED by provider: ${Object.entries(byProvider)
        .map(([k, v]) => `${k} ${v} (${((100 * v) / Math.max(1, done)).toFixed(1)} %)`)
        .join(', ')}; MANUAL_REVIEW ${payouts.filter((p) => p.status === 'MANUAL_REVIEW').length}`,
    );
    // What each sandbox settled, by payout reference (`<payout_id>-A<attempt>`), whatever the payout records say.
    const primary = (await (await fetch(`${stack.info.endpoints.payout_sandbox}/v1/sandbox/stats`)).json()) as {
      settledPerReference: Record<string, number>;
      unreachableDrops: number;
      ordersCreated: number;
    };
    const second = (await (await fetch(`${stack.info.endpoints.pawapay_sandbox}/v2/sandbox/stats`)).json()) as PawaPaySandboxStats;
    const primaryPaid = settledPerPayout(primary.settledPerReference);
    const secondPaid = settledPerPayout(second.completedPerReference);
    const ids = new Set([...payouts.map((p) => p.payment_id as string), ...Object.keys(primaryPaid), ...Object.keys(secondPaid)]);
    let maxSettled = 0;
    let twice = 0;
    let both = 0;
    const paidAt: Record<string, number> = { 'provider-api': 0, pawapay: 0 };
    for (const id of ids) {
      const total = (primaryPaid[id] ?? 0) + (secondPaid[id] ?? 0);
      maxSettled = Math.max(maxSettled, total);
      if (total > 1) twice++;
      if (primaryPaid[id] && secondPaid[id]) both++;
      if (primaryPaid[id]) paidAt['provider-api']!++;
      if (secondPaid[id]) paidAt.pawapay!++;
    }
    const completed = payouts.filter((p) => p.status === 'COMPLETED');
    // A COMPLETED payout must be paid at the provider its record names; a payout paid anywhere must be COMPLETED.
    const recordMismatch = completed.filter((p) => !(p.provider === 'pawapay' ? secondPaid : primaryPaid)[p.payment_id]).length;
    const paidNotCompleted = [...ids].filter(
      (id) => (primaryPaid[id] || secondPaid[id]) && !completed.some((p) => p.payment_id === id),
    ).length;
    say(
      `  primary: ${primary.ordersCreated} orders created, ${primary.unreachableDrops} order calls refused (socket destroyed); pawaPay: ${second.payoutsAccepted} payouts accepted, ${second.duplicates} duplicates ignored`,
    );
    say(
      `  paid per provider (settled orders at each sandbox, by payout reference): provider-api ${paidAt['provider-api']} (${share(paidAt['provider-api']!, ids.size)}), pawapay ${paidAt.pawapay} (${share(paidAt.pawapay!, ids.size)})`,
    );
    say(
      `  settled orders per payout across both providers: max ${maxSettled} (target 1); payouts paid twice: ${twice}; at both providers: ${both} (target 0)`,
    );
    say(
      `  COMPLETED payouts not paid at the provider their record names: ${recordMismatch}; payouts paid but not COMPLETED: ${paidNotCompleted} (target 0 each)`,
    );
    verdict('failover', [
      [open.length === 0 && payouts.length >= n, `${open.length} payouts not final, ${payouts.length}/${n} listed`],
      [twice === 0, `${twice} payouts paid more than once`],
      [recordMismatch === 0, `${recordMismatch} COMPLETED payouts without a settled order at their provider`],
      [paidNotCompleted === 0, `${paidNotCompleted} payouts paid but not COMPLETED`],
      [primary.unreachableDrops > 0 && paidAt.pawapay! > 0, 'the primary never failed over (the fault was not exercised)'],
    ]);
  } catch (err) {
    process.stderr.write(`local stack output:\n${stack.output()}\n`);
    throw err;
  } finally {
    await stack.stop();
  }
}
