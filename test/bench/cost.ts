import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signDevToken } from '../../infra/local/dev-keys';
import type { FunctionUsage, MeterSnapshot } from '../../infra/local/metering';
import { functionManifest, workers } from '../../shared/manifest';
import { createPublicClient, http, type Hex } from 'viem';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { startStackProcess } from '../support/stack-process';
import { acceptedBatch, apiCaller, type Call } from './submission';
import { AWS_PRICES as P, CHAIN_PRICES } from './aws-prices';

/**
 * Cost per payout (issue 9, deliverable 6): the local stack with usage metering on
 * (LOCAL_METERING_FILE, infra/local/metering.ts) runs
 *  A. BENCH_COST_LIFECYCLES (default 20) batch lifecycles: POST /batch/submit → mint (ledger
 *     writer) → NET_COFFEE_PAYMENT payout started, paid by the sandbox, settlement webhook →
 *     COMPLETED (and the chain-event webhooks of the mint);
 *  B. as many TOP_UP payouts (POST /payments/farmer-payout) on those batches, each to COMPLETED;
 * reads the counters before and after each phase (GET /__local/metering; the bench waits on the
 * meter, not by polling the API, so no waiting traffic is counted), and prices them with the
 * list prices of ./aws-prices.ts. Prints USD per batch lifecycle (A) and per payout (B) by
 * service, and compares with the target of $0.0004 per payout. Scheduled workers (EventBridge)
 * and empty SQS long polls cost per hour, not per payout: they are left out and said so.
 * Then the ledger's gas (after the last reading, so not metered): the mean gas of phase A's mint
 * transactions and of three stage records (GRADED), read from their receipts; a batch's whole
 * lifecycle on the ledger is one mint and six stage records (GRADED, MILLED, WAREHOUSED,
 * COMMITTED, EXPORTED, SETTLED; a TraceLog record is one event, the same gas for every stage),
 * priced at CHAIN_PRICES (./aws-prices.ts) beside the AWS part.
 */

const N = Number(process.env.BENCH_COST_LIFECYCLES ?? 20);
const TARGET_USD_PER_PAYOUT = 0.0004;
const say = (l: string) => process.stdout.write(`${l}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const SCHEDULED = new Set(workers.filter((w) => w.kind === 'scheduled').map((w) => w.fn));
const MEMORY_MIB = new Map(functionManifest().map((f) => [f.fn, f.memoryMiB]));
const ZERO: FunctionUsage = {
  invocations: 0,
  duration_ms: 0,
  billed_ms: 0,
  rru: 0,
  wru: 0,
  ddb_requests: 0,
  ddb_refused_writes: 0,
  sqs_standard: 0,
  sqs_fifo: 0,
  sqs_empty_receives: 0,
  sns_publishes: 0,
  sfn_api_calls: 0,
};

interface Usage {
  apiRequests: number;
  transitions: number;
  executions: number;
  functions: Record<string, FunctionUsage>;
}

/** `b − a`, per function. */
function diff(a: MeterSnapshot, b: MeterSnapshot): Usage {
  const functions: Record<string, FunctionUsage> = {};
  for (const [fn, u] of Object.entries(b.functions)) {
    const before = a.functions[fn] ?? ZERO;
    functions[fn] = Object.fromEntries(
      Object.entries(u).map(([k, v]) => [k, v - before[k as keyof FunctionUsage]]),
    ) as unknown as FunctionUsage;
  }
  return {
    apiRequests: b.api_requests - a.api_requests,
    transitions: b.state_transitions - a.state_transitions,
    executions: b.executions.started - a.executions.started,
    functions,
  };
}

/** What changes when work is under way (scheduled workers and empty polls excluded). */
function activity(s: MeterSnapshot): string {
  const busy = Object.entries(s.functions)
    .filter(([fn]) => !SCHEDULED.has(fn))
    .map(([fn, u]) => `${fn}:${u.invocations}:${u.ddb_requests}:${u.sqs_standard + u.sqs_fifo}:${u.sns_publishes}:${u.sfn_api_calls}`);
  return `${s.api_requests}|${s.state_transitions}|${busy.sort().join(',')}`;
}

interface Priced {
  service: string;
  usd: number;
  detail: string;
}

/** USD of `u` by service, scheduled workers and empty receives left out. */
function price(u: Usage): { lines: Priced[]; total: number; byFunction: Array<[string, number]>; excluded: string[] } {
  let invocations = 0,
    gbSeconds = 0,
    msMeasured = 0,
    rru = 0,
    wru = 0,
    refused = 0,
    sqsStd = 0,
    sqsFifo = 0,
    sns = 0;
  const byFunction: Array<[string, number]> = [];
  const excluded: string[] = [];
  for (const [fn, f] of Object.entries(u.functions)) {
    if (SCHEDULED.has(fn)) {
      if (f.invocations) excluded.push(`${fn} ×${f.invocations}`);
      continue;
    }
    if (f.sqs_empty_receives) excluded.push(`${f.sqs_empty_receives} empty SQS long polls`);
    const mem = (MEMORY_MIB.get(fn) ?? 0) / 1024;
    const gbs = (f.billed_ms / 1000) * mem;
    invocations += f.invocations;
    gbSeconds += gbs;
    msMeasured += f.duration_ms;
    rru += f.rru;
    wru += f.wru;
    refused += f.ddb_refused_writes;
    sqsStd += f.sqs_standard;
    sqsFifo += f.sqs_fifo;
    sns += f.sns_publishes;
    const usd =
      f.invocations * P.lambda.usdPerRequest +
      gbs * P.lambda.usdPerGbSecondArm64 +
      f.rru * P.dynamodb.usdPerReadRequestUnit +
      (f.wru + f.ddb_refused_writes) * P.dynamodb.usdPerWriteRequestUnit +
      f.sqs_standard * P.sqs.usdPerStandardRequest +
      f.sqs_fifo * P.sqs.usdPerFifoRequest +
      f.sns_publishes * P.sns.usdPerPublish;
    if (!f.invocations && usd) byFunction.push([`${fn}: SQS receives with messages and deletes by the Lambda event sources`, usd]);
    else if (f.invocations)
      byFunction.push([
        `${fn} (${f.invocations} inv, ${f.invocations ? (f.duration_ms / f.invocations).toFixed(0) : 0} ms avg, ${MEMORY_MIB.get(fn) ?? '-'} MiB, ${f.rru.toFixed(1)} RRU, ${f.wru.toFixed(1)} WRU)`,
        usd,
      ]);
  }
  const lines: Priced[] = [
    { service: 'Lambda requests', usd: invocations * P.lambda.usdPerRequest, detail: `${invocations} invocations` },
    {
      service: 'Lambda duration',
      usd: gbSeconds * P.lambda.usdPerGbSecondArm64,
      detail: `${gbSeconds.toFixed(3)} GB-s (${msMeasured.toFixed(0)} ms measured in process, arm64 at manifest memory)`,
    },
    {
      service: 'Step Functions',
      usd: u.transitions * P.stepFunctions.usdPerStateTransition,
      detail: `${u.transitions} state transitions, ${u.executions} executions (Standard)`,
    },
    {
      service: 'DynamoDB',
      usd: rru * P.dynamodb.usdPerReadRequestUnit + (wru + refused) * P.dynamodb.usdPerWriteRequestUnit,
      detail: `${rru.toFixed(1)} RRU, ${wru.toFixed(1)} WRU${refused ? ` + ${refused} refused conditional writes at 1 WRU` : ''} (on-demand)`,
    },
    { service: 'API Gateway', usd: u.apiRequests * P.apiGateway.usdPerRestRequest, detail: `${u.apiRequests} REST requests` },
    {
      service: 'SQS',
      usd: sqsStd * P.sqs.usdPerStandardRequest + sqsFifo * P.sqs.usdPerFifoRequest,
      detail: `${sqsStd} standard + ${sqsFifo} FIFO requests (sends, receives with messages, deletes)`,
    },
    { service: 'SNS', usd: sns * P.sns.usdPerPublish, detail: `${sns} publishes` },
  ];
  return { lines, total: lines.reduce((a, l) => a + l.usd, 0), byFunction: byFunction.sort((a, b) => b[1] - a[1]), excluded };
}

function report(title: string, u: Usage, per: number): { each: number; top: string } {
  const p = price(u);
  const each = p.total / per;
  say(`  ${title}: $${each.toFixed(6)} each  (n=${per}; $${(each * 1e6).toFixed(0)} per million)`);
  for (const l of [...p.lines].sort((a, b) => b.usd - a.usd)) {
    say(
      `    ${l.service.padEnd(16)} $${(l.usd / per).toFixed(7)}  ${(p.total ? (100 * l.usd) / p.total : 0).toFixed(1).padStart(5)} %   ${l.detail} in all`,
    );
  }
  say('    by function (Lambda + its DynamoDB/SQS/SNS, per item):');
  for (const [fn, usd] of p.byFunction.slice(0, 8)) say(`      $${(usd / per).toFixed(7)}  ${fn}`);
  if (p.excluded.length) say(`    left out (per hour, not per payout): ${p.excluded.join(', ')}`);
  const [first, second] = [...p.lines].sort((a, b) => b.usd - a.usd);
  return {
    each,
    top: `${first!.service} ${((100 * first!.usd) / p.total).toFixed(0)} %, ${second!.service} ${((100 * second!.usd) / p.total).toFixed(0)} %`,
  };
}

export async function costBench(): Promise<void> {
  say(
    `\nCost per payout: ${N} batch lifecycles, then ${N} TOP_UP payouts, metered on the local stack; AWS list prices ${P.region} as of ${P.as_of}`,
  );
  const meterDir = mkdtempSync(join(tmpdir(), 'coffee-trace-meter-'));
  const stack = await startStackProcess({
    LOCAL_METERING_FILE: join(meterDir, 'metering.json'),
    LOCAL_TIME_SCALE: '1',
    PAYOUT_SANDBOX_SETTLE_MS: '200',
    LOCAL_RATE_LIMIT_RPS: '100000',
    LOCAL_RATE_LIMIT_BURST: '100000',
  });
  try {
    const { url, dataDir } = stack.info;
    const meter = async () => (await (await fetch(`${url}/__local/metering`)).json()) as MeterSnapshot;
    /** Waits until `executions` more state machine executions have started, none runs, and nothing has moved for 2 s. */
    const settled = async (from: MeterSnapshot, executions: number): Promise<MeterSnapshot> => {
      const deadline = Date.now() + 180_000;
      let last = '';
      let stableSince = Date.now();
      for (;;) {
        const s = await meter();
        const a = activity(s);
        if (a !== last) [last, stableSince] = [a, Date.now()];
        if (s.executions.started - from.executions.started >= executions && s.executions.running === 0 && Date.now() - stableSince >= 2000)
          return s;
        if (Date.now() > deadline)
          throw new Error(
            `not settled after 180 s: ${s.executions.started - from.executions.started}/${executions} executions, ${s.executions.running} running`,
          );
        await sleep(250);
      }
    };
    const admin = await signDevToken({ role: 'ADMIN', sub: 'cost-admin' }, 3600, dataDir);
    const coopId = 'COST-COOP';
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: coopId, sub: 'cost-coop' }, 3600, dataDir);
    const call = apiCaller(url);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: coopId,
      name: 'Cost Cooperative',
      district: 'Mbale',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'Cost Manager', email: 'cost@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 400,
    });
    await call('POST', '/farmers/register', coop, {
      farmer_id: 'COST-F1',
      full_name: 'Cost Farmer',
      cooperative_id: coopId,
      phone: '+256772000404',
      district: 'Mbale',
      farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
    });
    const submit = async () => {
      const r = await call('POST', '/batch/submit', coop, {
        farmer_id: 'COST-F1',
        cooperative_id: coopId,
        weight_kg: 100,
        grade: 'screen18',
        moisture_pct: 11.5,
        collection_point_gps: { lat: 1.08, lng: 34.17 },
        collector_agent_id: 'AGENT-1',
      });
      // 201, or 202 on a chain with block time: the payout starts once the mint lands either way (the meter waits for it).
      return acceptedBatch(r).batchId;
    };
    const topUp = async (batchId: string) => {
      const r = await call('POST', '/payments/farmer-payout', coop, {
        farmer_id: 'COST-F1',
        batch_id: batchId,
        amount_usdc: 3.25,
        reason: 'TOP_UP',
        cooperative_id: coopId,
      });
      if (r.status !== 201) throw new Error(`TOP_UP failed: ${r.status} ${JSON.stringify(r.body)}`);
    };

    // warm-up (module loading, first connections), not counted
    const s0 = await meter();
    await topUp(await submit());
    let a = await settled(s0, 2);

    // A. batch lifecycles
    const startA = a;
    const batches: string[] = [];
    for (let i = 0; i < N; i++) batches.push(await submit());
    const endA = await settled(startA, N);
    // B. TOP_UP payouts
    for (const b of batches) await topUp(b);
    const endB = await settled(endA, N);
    a = endB;

    // check, after the last reading (not counted): every payout COMPLETED
    let completed = 0;
    for (const b of batches) {
      const list = (await call('GET', `/payments?batch_id=${b}`, coop)).body.payments as Array<{ status: string }>;
      completed += list.filter((p) => p.status === 'COMPLETED').length;
    }
    say(`  payouts COMPLETED: ${completed}/${2 * N} (${N} NET_COFFEE_PAYMENT + ${N} TOP_UP)`);
    const { each: perLifecycle, top: topLifecycle } = report(
      'per batch lifecycle (submit → mint → NET_COFFEE_PAYMENT COMPLETED)',
      diff(startA, endA),
      N,
    );
    const { each: perPayout, top: topPayout } = report('per payout (POST /payments/farmer-payout TOP_UP → COMPLETED)', diff(endA, endB), N);
    const verdict = (usd: number) =>
      usd <= TARGET_USD_PER_PAYOUT
        ? `within the $${TARGET_USD_PER_PAYOUT} target (${((100 * usd) / TARGET_USD_PER_PAYOUT).toFixed(0)} %)`
        : `OVER the $${TARGET_USD_PER_PAYOUT} target by ${(((usd - TARGET_USD_PER_PAYOUT) / TARGET_USD_PER_PAYOUT) * 100).toFixed(0)} %`;
    say(
      `  target ≤ $${TARGET_USD_PER_PAYOUT} per payout: a payout costs $${perPayout.toFixed(6)}, ${verdict(perPayout)} (largest shares: ${topPayout}); a whole batch lifecycle (mint and its payout) costs $${perLifecycle.toFixed(6)}, ${verdict(perLifecycle)} (${topLifecycle})`,
    );
    await gasPerLifecycle(call, coop, coopId, dataDir, batches, perLifecycle);
    say(
      "  assumptions: Lambda duration is wall-clock time of the handler in this process (DynamoDB Local, fauxqs, hardhat on loopback; one machine), not Lambda's billed duration; each invocation rounded up to 1 ms; no free tier; " +
        "API Gateway authorizer caching is off (resultsCacheTtl 0, as in infra/stack/http-api.ts), so every request invokes the authorizer; state transitions = states entered + retries in the local executions' histories (paid at the first attempt: Attempt1 → PayoutCompleted = 2); " +
        'DynamoDB units as DynamoDB Local reports them (ReturnConsumedCapacity TOTAL); ' +
        'not priced: CloudWatch Logs/metrics, X-Ray traces, KMS, Secrets Manager/Parameters extension, data transfer, and fixed hourly costs (scheduled workers, empty SQS long polls of the event sources).',
    );
  } finally {
    await stack.stop();
    const file = join(meterDir, 'metering.json');
    if (existsSync(file)) {
      const whole = JSON.parse(readFileSync(file, 'utf8')) as MeterSnapshot;
      say(
        `  metering file written at stop (whole run, setup and warm-up included): ${whole.api_requests} API requests, ${whole.state_transitions} state transitions, ${Object.keys(whole.functions).length} functions`,
      );
    }
    rmSync(meterDir, { recursive: true, force: true });
  }
}

/** Stage records in a batch's lifecycle after its mint (GRADED … SETTLED). */
const STAGE_RECORDS_PER_LIFECYCLE = 6;

/**
 * The ledger's gas per batch lifecycle, priced beside the AWS part `awsUsd` (USD per lifecycle):
 * mean gas of the mints of `batches` and of GRADED records of three of them, from their receipts.
 */
async function gasPerLifecycle(
  call: Call,
  coop: string,
  coopId: string,
  dataDir: string,
  batches: string[],
  awsUsd: number,
): Promise<void> {
  const { endpoints } = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')) as { endpoints: Record<string, string> };
  const reader = createPublicClient({ chain: ledgerChain(31337, endpoints.ledger!), transport: http(endpoints.ledger!) });
  const meanGas = async (hashes: Hex[]) => {
    let gas = 0n;
    for (const hash of hashes) gas += (await reader.getTransactionReceipt({ hash })).gasUsed;
    return Number(gas / BigInt(hashes.length));
  };
  const view = async (b: string) => (await call('GET', `/batch/${b}`, coop)).body;
  const mintGas = await meanGas(await Promise.all(batches.map(async (b) => (await view(b)).chain_tx_hash as Hex)));
  const sample = batches.slice(0, 3);
  for (const b of sample)
    await call('PATCH', `/batch/${b}/stage`, coop, {
      cooperative_id: coopId,
      new_stage: 'GRADED',
      evidence: { grade: 'screen18', moisture_pct: 11 },
    });
  const recordHashes: Hex[] = [];
  const deadline = Date.now() + 120_000;
  for (const b of sample) {
    for (;;) {
      const hash = (await view(b)).stage_history?.find((h: { stage: string }) => h.stage === 'GRADED')?.chain_tx_hash;
      if (hash) {
        recordHashes.push(hash);
        break;
      }
      if (Date.now() > deadline) throw new Error(`GRADED of ${b} not on the trace log within 120 s`);
      await sleep(200);
    }
  }
  const recordGas = await meanGas(recordHashes);
  const lifecycleGas = mintGas + STAGE_RECORDS_PER_LIFECYCLE * recordGas;
  const usdPerGas = CHAIN_PRICES.gasPriceGwei * 1e-9 * CHAIN_PRICES.ethUsd;
  const gasUsd = lifecycleGas * usdPerGas;
  say(
    `  ledger gas per batch lifecycle: ${lifecycleGas} gas = mint ${mintGas} + ${STAGE_RECORDS_PER_LIFECYCLE} stage records × ${recordGas} (one transaction each; loans and settlement vault calls not included)`,
  );
  say(
    `    at ${CHAIN_PRICES.gasPriceGwei} gwei on ${CHAIN_PRICES.chain} and ${CHAIN_PRICES.ethUsd} USD/ETH (${CHAIN_PRICES.as_of}; L2 execution gas only, no L1 data fee): $${gasUsd.toFixed(6)} per lifecycle, beside $${awsUsd.toFixed(6)} of AWS = $${(gasUsd + awsUsd).toFixed(6)} in all (gas ${((100 * gasUsd) / (gasUsd + awsUsd)).toFixed(0)} %)`,
  );
}
