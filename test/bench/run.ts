import { Webhook } from 'standardwebhooks';
import { DEV_PAYOUT_WEBHOOK_SECRET, signDevToken } from '../../infra/local/dev-keys';
import { startStackProcess } from '../support/stack-process';
import { acceptedBatch, apiCaller, blockTimeLabel } from './submission';
import { anchoringBench } from './anchoring';
import { bundleBench } from './bundles';
import { costBench } from './cost';
import { custodyBench } from './custody';
import { ledgerBench } from './ledger';
import { ledgerSoakBench } from './ledger-soak';
import { eudrBench } from './eudr';
import { loadBench, sandboxOrder, settlementPayload } from './load';
import { payoutFailoverBench, payoutFaultsBench } from './payout-faults';
import { purchaseOrderCreationBench } from './purchase-order-creation';
import { settlementBench } from './settlement';

/**
 * `npm run bench`: figures of the first slice on the local stack (not part of `npm test`).
 *  1. p50/p95 of POST /batch/submit (sequential, mint receipt included);
 *  2. p50/p95 of GET /payments/{id};
 *  3. the service's own time from a settlement webhook received to COMPLETED readable (the webhook
 *     carries the sandbox's settled order's values, read from the sandbox API, as the service confirms them).
 * Then the payout-faults run (./payout-faults.ts), custody, EUDR, and last every function bundle's
 * cold-load time against its budget and bytes against the baseline (./bundles.ts,
 * infra/bundle-policy.ts; no stack needed; a function over budget or a bundle grown over its
 * baseline makes the exit code 1 and the summary lines say which).
 * BENCH_ONLY=cost: AWS cost per payout and per batch lifecycle from metered counts (./cost.ts).
 * BENCH_ONLY=settlement: a buyer's payment of a 40-batch purchase order with loans → settlement
 * COMPLETED and the last batch SETTLED, and the ledger transactions it took (./settlement.ts).
 * Knobs: BENCH_SUBMISSIONS (default 60), BENCH_READS (500), BENCH_WEBHOOKS (60);
 * BENCH_ONLY=anchoring: 1,000 batches × 5 audit entries, one periodic anchor: anchor transactions per
 * hour and gas per anchored entry (./anchoring.ts).
 * BENCH_ONLY=ledger-soak: mixed traffic with a poison write at LOCAL_TIME_SCALE=0.01, then every job
 * COMPLETE and a new batch minted at once; writes landed, refused, parked, oldest open age (./ledger-soak.ts).
 * BENCH_ONLY=ledger: writes per second on a chain with 2-second blocks (submissions → mints, stage
 * updates → trace-log records: accepted/s, landed/s, blocks from acceptance, transactions per block,
 * gas per write) and the settlement part on it (./ledger.ts).
 * Every part runs on the chain's block time (LEDGER_BLOCK_TIME_S, default 2 s; 0 mines at once);
 * a submission or stage update answered 202 (accepted, lands with its ledger write) is a success.
 * BENCH_ONLY=faults also runs the failover part: two providers (PAYOUT_PROVIDERS=provider-api,pawapay), the primary
 * unreachable for 20 % of payout references; all payouts final, none paid twice, the share each provider paid.
 * BENCH_ONLY=po-create: creating purchase orders of 500, 1,000 and 2,000 batches on DynamoDB Local, timed (./purchase-order-creation.ts).
 * BENCH_ONLY=slice|faults|custody|eudr|load|bundles runs one part (load: ./load.ts, autocannon at 1/10/50 clients).
 */

const N_SUBMIT = Number(process.env.BENCH_SUBMISSIONS ?? 60);
const N_READ = Number(process.env.BENCH_READS ?? 500);
const N_HOOK = Number(process.env.BENCH_WEBHOOKS ?? 60);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const fmt = (xs: number[]) =>
  `p50 ${pct(xs, 50).toFixed(1)} ms  p95 ${pct(xs, 95).toFixed(1)} ms  (n=${xs.length}, min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`;
const say = (l: string) => process.stdout.write(`${l}\n`);

async function main() {
  say(`Starting the local stack for the benchmark (rate limit raised, LOCAL_TIME_SCALE=1, ${blockTimeLabel()})…`);
  const stack = await startStackProcess({
    LOCAL_TIME_SCALE: '1',
    PAYOUT_SANDBOX_SETTLE_MS: '500',
    LOCAL_RATE_LIMIT_RPS: '100000',
    LOCAL_RATE_LIMIT_BURST: '100000',
  });
  try {
    const url = stack.info.url;
    const dataDir = stack.info.dataDir;
    const admin = await signDevToken({ role: 'ADMIN', sub: 'bench-admin' }, 3600, dataDir);
    const coopId = 'BENCH-COOP';
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: coopId, sub: 'bench-coop' }, 3600, dataDir);
    const call = apiCaller(url);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: coopId,
      name: 'Bench Cooperative',
      district: 'Mbale',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'Bench Manager', email: 'bench@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 400,
    });
    const farmer = async (id: string, phone: string) =>
      call('POST', '/farmers/register', coop, {
        farmer_id: id,
        full_name: 'Bench Farmer',
        cooperative_id: coopId,
        phone,
        district: 'Mbale',
        farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
      });
    await farmer('BENCH-F1', '+256772000101');
    await farmer('BENCH-F3', '+256700000003'); // the sandbox never sends webhooks for this phone
    const batch = (f: string) => ({
      farmer_id: f,
      cooperative_id: coopId,
      weight_kg: 100,
      grade: 'screen18',
      moisture_pct: 11.5,
      collection_point_gps: { lat: 1.08, lng: 34.17 },
      collector_agent_id: 'AGENT-1',
    });

    // 1. batch submission
    for (let i = 0; i < 3; i++) await call('POST', '/batch/submit', coop, batch('BENCH-F1')); // warm-up
    const submit: number[] = [];
    const batches: string[] = [];
    let answered202 = 0;
    for (let i = 0; i < N_SUBMIT; i++) {
      const t = performance.now();
      const accepted = acceptedBatch(await call('POST', '/batch/submit', coop, batch('BENCH-F1')));
      submit.push(performance.now() - t);
      if (!accepted.minted) answered202++;
      batches.push(accepted.batchId);
    }
    say(`POST /batch/submit (mint + receipt + audit, 201):   ${fmt(submit)}; ${answered202} answered 202 (receipt not within the wait)`);

    // 2. payment reads
    let paymentId: string | undefined;
    for (let i = 0; i < 100 && !paymentId; i++) {
      paymentId = (await call('GET', `/payments?batch_id=${batches[0]}`, coop)).body.payments?.[0]?.payment_id;
      if (!paymentId) await new Promise((r) => setTimeout(r, 100));
    }
    if (!paymentId) throw new Error('no payout appeared for the first batch');
    for (let i = 0; i < 20; i++) await call('GET', `/payments/${paymentId}`, coop);
    const reads: number[] = [];
    for (let i = 0; i < N_READ; i++) {
      const t = performance.now();
      const r = await call('GET', `/payments/${paymentId}`, coop);
      reads.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`read failed: ${r.status}`);
    }
    say(`GET /payments/{id}:                                 ${fmt(reads)}`);

    // 3. settlement webhook → COMPLETED readable, for payouts whose orders the sandbox never reports
    const hook = new Webhook(DEV_PAYOUT_WEBHOOK_SECRET);
    const settle: number[] = [];
    for (let i = 0; i < N_HOOK; i++) {
      const b = await call('POST', '/batch/submit', coop, batch('BENCH-F3'));
      const batchId = acceptedBatch(b).batchId;
      let p: any;
      for (let k = 0; k < 200; k++) {
        const list = await call('GET', `/payments?batch_id=${batchId}`, coop);
        const id = list.body.payments?.[0]?.payment_id;
        if (id) {
          p = (await call('GET', `/payments/${id}`, coop)).body;
          if (p.provider_order_id) break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      // The service confirms a webhook with the provider before applying it (shared/use-cases/payout-webhook.ts):
      // wait until the sandbox settled the order (it sends no webhook for this phone), then send its real values.
      let order: any = null;
      for (let k = 0; k < 500; k++) {
        order = await sandboxOrder(stack.info.endpoints.payout_sandbox!, `${p.payment_id}-A1`);
        if (order?.status === 'SETTLED') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      if (order?.status !== 'SETTLED') throw new Error(`sandbox order of ${p.payment_id} not SETTLED: ${JSON.stringify(order)}`);
      const payload = settlementPayload(order);
      const id = `msg_bench_${Date.now()}_${i}`;
      const at = new Date();
      const headers = {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': hook.sign(id, at, payload),
      };
      const t = performance.now();
      const res = await fetch(`${url}/api/webhooks/payout-provider`, { method: 'POST', headers, body: payload });
      await res.text();
      for (;;) {
        const r = await call('GET', `/payments/${p.payment_id}`, coop);
        if (r.body.status === 'COMPLETED') break;
        if (performance.now() - t > 10_000) throw new Error(`payout ${p.payment_id} not COMPLETED 10 s after its webhook`);
      }
      settle.push(performance.now() - t);
    }
    say(`settlement webhook received → COMPLETED readable:   ${fmt(settle)}  (target p95 < 100 ms)`);
  } finally {
    await stack.stop();
  }
}

async function all() {
  const only = process.env.BENCH_ONLY;
  if (!only || only === 'slice') await main();
  if (!only || only === 'faults') {
    await payoutFaultsBench();
    await payoutFailoverBench();
  }
  if (!only || only === 'custody') await custodyBench();
  if (!only || only === 'eudr') await eudrBench();
  if (!only || only === 'load') await loadBench();
  if (!only || only === 'cost') await costBench();
  if (!only || only === 'settlement') await settlementBench();
  if (!only || only === 'anchoring') await anchoringBench();
  if (!only || only === 'ledger-soak') await ledgerSoakBench();
  if (!only || only === 'ledger') await ledgerBench();
  if (!only || only === 'po-create') await purchaseOrderCreationBench();
  if (!only || only === 'bundles') await bundleBench();
}

all().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
