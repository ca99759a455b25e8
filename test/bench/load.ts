import { createRequire } from 'node:module';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { DEV_PAYOUT_WEBHOOK_SECRET, DEV_PROVIDER_CREDENTIALS, signDevToken } from '../../infra/local/dev-keys';
import { signProviderRequest } from '../../shared/adapters/payout-provider/signing';
import { startStackProcess } from '../support/stack-process';
import { LOCAL_TABLE_NAME, localTableClient } from '../../infra/local/dynamodb-local';
import { apiCaller } from './submission';

/**
 * Load benchmark (`BENCH_ONLY=load npm run bench`): autocannon against one local stack with the
 * rate limit lifted, at 1, 10 and 50 concurrent clients, for
 *  (a) POST /batch/submit (answers once the mint is mined: 201; 202 after SUBMIT_RECEIPT_WAIT_MS);
 *  (b) PATCH /batch/{id}/stage DELIVERED → GRADED, one fresh DELIVERED batch per request (the
 *      batches (a) created), a fixed number of requests per level;
 *  (c) GET /payments/{id};
 *  (d1) settlement webhooks, fresh webhook-id each, signed with the dev secret, values equal to the
 *      sandbox's settled order (so each is confirmed with the provider; the payout is already
 *      COMPLETED, so the outcome is IGNORED after confirmation);
 *  (d2) a replay of one webhook-id (answered DUPLICATE_WEBHOOK before the provider is asked).
 * Per row: requests, req/s, p50/p95/p99 (ms, from every response's time), non-2xx split into 429
 * and others (target 0 others) plus socket errors/timeouts. Then the round trips each operation
 * cannot avoid, timed bare at concurrency 1 against the same DynamoDB Local, ledger and sandbox,
 * and each p50 divided by their sum. Knobs: BENCH_LOAD_SECONDS (5 per level),
 * BENCH_LOAD_LEVELS ("1,10,50").
 */
// autocannon 8 ships no type declarations; loaded through require with the shapes used here.
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => AcInstance;
interface AcInstance extends PromiseLike<AcResult> {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
interface AcResult {
  requests: { total: number };
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}

const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 5);
const LEVELS = (process.env.BENCH_LOAD_LEVELS ?? '1,10,50').split(',').map(Number);
/** Stage updates per level (each needs its own DELIVERED batch). */
const STAGE_AMOUNT: Record<number, number> = { 1: 25, 10: 80, 50: 150 };
const say = (l: string) => process.stdout.write(`${l}\n`);
const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

/** The sandbox's order for `reference` (`<payment_id>-A<attempt>`), read with the dev API credentials; null when 404. */
export async function sandboxOrder(sandboxUrl: string, reference: string): Promise<any | null> {
  const path = `/v1/orders?reference=${encodeURIComponent(reference)}`;
  const sig = signProviderRequest({ secret: DEV_PROVIDER_CREDENTIALS.api_secret, method: 'GET', path });
  const res = await fetch(`${sandboxUrl}${path}`, { headers: { authorization: `Bearer ${DEV_PROVIDER_CREDENTIALS.api_key}`, ...sig } });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`sandbox GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A settlement event body carrying exactly the sandbox order's values. */
export function settlementPayload(order: any): string {
  return JSON.stringify({
    type: 'order.settled',
    data: {
      order_id: order.order_id,
      reference: order.reference,
      amount_ugx: order.payout.amount,
      exchange_rate: order.exchange_rate,
      mobile_money_transaction_id: order.mobile_money_transaction_id,
      settled_at: order.settled_at,
      failure_reason: null,
    },
  });
}

interface Row {
  op: string;
  level: number;
  requests: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  r429: number;
  other: number;
  sock: number;
  note?: string;
}

export async function loadBench(): Promise<void> {
  say(`\nLoad (autocannon, ${SECONDS} s per level, levels ${LEVELS.join('/')}; one local stack, rate limit lifted)`);
  const stack = await startStackProcess({ LOCAL_RATE_LIMIT_RPS: '100000', LOCAL_RATE_LIMIT_BURST: '100000' });
  try {
    const { url, dataDir, endpoints } = stack.info;
    const admin = await signDevToken({ role: 'ADMIN', sub: 'load-admin' }, 3600, dataDir);
    const coopId = 'LOAD';
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: coopId, sub: 'load-coop' }, 3600, dataDir);
    const call = apiCaller(url);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: coopId,
      name: 'Load Cooperative',
      district: 'Mbale',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'M', email: 'm@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 0,
    });
    await call('POST', '/farmers/register', coop, {
      farmer_id: 'LOAD-F',
      full_name: 'Load Farmer',
      cooperative_id: coopId,
      phone: '+256772000606',
      district: 'Mbale',
      farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
    });
    const submitBody = JSON.stringify({
      farmer_id: 'LOAD-F',
      cooperative_id: coopId,
      weight_kg: 100,
      grade: 'screen18',
      moisture_pct: 11.5,
      collection_point_gps: { lat: 1.08, lng: 34.17 },
      collector_agent_id: 'AGENT-1',
    });
    const json = { 'content-type': 'application/json' };
    const auth = { authorization: `Bearer ${coop}` };
    for (let i = 0; i < 3; i++) await call('POST', '/batch/submit', coop, JSON.parse(submitBody)); // warm-up

    const rows: Row[] = [];
    const run = async (op: string, level: number, opts: Record<string, unknown>, note?: string): Promise<void> => {
      const times: number[] = [];
      const inst = autocannon({ url, connections: level, ...(opts.amount ? {} : { duration: SECONDS }), timeout: 30, ...opts });
      inst.on('response', (_c, _s, _b, ms) => times.push(ms));
      const r = await inst;
      const r429 = r.statusCodeStats['429']?.count ?? 0;
      rows.push({
        op,
        level,
        requests: r.requests.total,
        rps: r.requests.total / r.duration,
        p50: pct(times, 50),
        p95: pct(times, 95),
        p99: pct(times, 99),
        r429,
        other: r.non2xx - r429,
        sock: r.errors + r.timeouts,
        ...(note ? { note } : {}),
      });
      const sc = Object.entries(r.statusCodeStats)
        .map(([k, v]) => `${k}×${v.count}`)
        .join(' ');
      say(
        `  ${op} c=${level}: ${r.requests.total} requests, ${(r.requests.total / r.duration).toFixed(1)} req/s, p50 ${pct(times, 50).toFixed(1)} ms [${sc}]${note ? ` ${note}` : ''}`,
      );
    };

    // (a) submission; every batch it creates (201 or 202) goes to the stage-update pool
    const pool: string[] = [];
    const collect = (_status: number, body: string) => {
      try {
        const b = JSON.parse(body);
        const id = b?.data?.batch_id ?? b?.batch_id;
        if (typeof id === 'string') pool.push(id);
      } catch {
        /* not JSON */
      }
    };
    for (const level of LEVELS)
      await run('POST /batch/submit', level, {
        requests: [{ method: 'POST', path: '/batch/submit', headers: { ...json, ...auth }, body: submitBody, onResponse: collect }],
      });

    // (b) stage update: a fixed number per level, one fresh DELIVERED batch each
    const need = LEVELS.reduce((n, l) => n + (STAGE_AMOUNT[l] ?? 3 * l), 0);
    while (pool.length < need) {
      const more = await Promise.all(
        Array.from({ length: Math.min(10, need - pool.length) }, () => call('POST', '/batch/submit', coop, JSON.parse(submitBody))),
      );
      for (const m of more) if (m.body?.data?.batch_id ?? m.body?.batch_id) pool.push(m.body?.data?.batch_id ?? m.body?.batch_id);
    }
    // batches answered 202 become DELIVERED when their mint lands: wait for all of them
    for (const id of pool) {
      for (let k = 0; ; k++) {
        const b = await call('GET', `/batch/${id}`, coop);
        if (b.status === 200 && b.body.stage === 'DELIVERED') break;
        if (b.status === 200 && b.body.stage && b.body.stage !== 'DELIVERED') throw new Error(`batch ${id} is at ${b.body.stage}`);
        if (k > 300) throw new Error(`batch ${id} never became DELIVERED: ${b.status} ${JSON.stringify(b.body)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const stageBody = JSON.stringify({
      cooperative_id: coopId,
      new_stage: 'GRADED',
      evidence: { grade: 'screen18', moisture_pct: 11.1, screen_size: 18, defect_count: 2, cupping_score: 85 },
    });
    let next = 0;
    for (const level of LEVELS) {
      const amount = STAGE_AMOUNT[level] ?? 3 * level;
      await run(
        'PATCH /batch/{id}/stage',
        level,
        {
          amount,
          requests: [
            {
              method: 'PATCH',
              headers: { ...json, ...auth },
              body: stageBody,
              setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/batch/${pool[next++ % pool.length]}/stage` }),
            },
          ],
        },
        `(fixed ${amount} requests)`,
      );
    }

    // (c) payment read
    let paymentId: string | undefined;
    for (let i = 0; i < 200 && !paymentId; i++) {
      paymentId = (await call('GET', `/payments?batch_id=${pool[0]}`, coop)).body.payments?.[0]?.payment_id;
      if (!paymentId) await new Promise((r) => setTimeout(r, 100));
    }
    if (!paymentId) throw new Error('no payout appeared for the first batch');
    for (const level of LEVELS)
      await run('GET /payments/{id}', level, { requests: [{ method: 'GET', path: `/payments/${paymentId}`, headers: auth }] });

    // (d) settlement webhooks for a payout the sandbox settled (values = the sandbox's order)
    let order: any = null;
    for (let i = 0; i < 200; i++) {
      order = await sandboxOrder(endpoints.payout_sandbox!, `${paymentId}-A1`);
      if (order?.status === 'SETTLED') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (order?.status !== 'SETTLED') throw new Error(`the sandbox order of ${paymentId} did not settle: ${JSON.stringify(order)}`);
    const hook = new Webhook(DEV_PAYOUT_WEBHOOK_SECRET);
    const payload = settlementPayload(order);
    const outcomes: Record<string, number> = {};
    const tally = (_s: number, body: string) => {
      const o = (() => {
        try {
          return JSON.parse(body).outcome ?? 'none';
        } catch {
          return 'not-json';
        }
      })();
      outcomes[o] = (outcomes[o] ?? 0) + 1;
    };
    const fmtOutcomes = () => {
      const s = Object.entries(outcomes)
        .map(([k, v]) => `${k}×${v}`)
        .join(' ');
      for (const k of Object.keys(outcomes)) delete outcomes[k];
      return s;
    };
    let seq = 0;
    for (const level of LEVELS) {
      await run('POST webhook, fresh id', level, {
        requests: [
          {
            method: 'POST',
            path: '/api/webhooks/payout-provider',
            body: payload,
            onResponse: tally,
            setupRequest: (req: Record<string, unknown>) => {
              const id = `msg_load_${process.pid}_${seq++}`;
              const at = new Date();
              return {
                ...req,
                headers: {
                  ...json,
                  'webhook-id': id,
                  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
                  'webhook-signature': hook.sign(id, at, payload),
                },
              };
            },
          },
        ],
      });
      rows[rows.length - 1]!.note = fmtOutcomes();
    }
    const replayId = `msg_load_replay_${process.pid}`;
    for (const level of LEVELS) {
      await run('POST webhook, replay', level, {
        requests: [
          {
            method: 'POST',
            path: '/api/webhooks/payout-provider',
            body: payload,
            onResponse: tally,
            setupRequest: (req: Record<string, unknown>) => {
              const at = new Date(); // re-signed with a fresh timestamp: same webhook-id, same body
              return {
                ...req,
                headers: {
                  ...json,
                  'webhook-id': replayId,
                  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
                  'webhook-signature': hook.sign(replayId, at, payload),
                },
              };
            },
          },
        ],
      });
      rows[rows.length - 1]!.note = fmtOutcomes();
    }

    // bare round trips at concurrency 1 against the same components
    const doc = localTableClient(endpoints.dynamodb!);
    const table = LOCAL_TABLE_NAME;
    const bare = async (n: number, fn: (i: number) => Promise<unknown>) => {
      for (let i = 0; i < 5; i++) await fn(-1 - i);
      const t: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = performance.now();
        await fn(i);
        t.push(performance.now() - s);
      }
      return pct(t, 50);
    };
    const getItem = await bare(100, () =>
      doc.send(new GetCommand({ TableName: table, Key: { PK: `PAYMENT#${paymentId}`, SK: 'META' }, ConsistentRead: true })),
    );
    const txWrite = await bare(100, (i) =>
      doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: table, Item: { PK: `LOADBENCH#${i}`, SK: 'A', at: Date.now() } } },
            { Put: { TableName: table, Item: { PK: `LOADBENCH#${i}`, SK: 'B', at: Date.now() } } },
          ],
        }),
      ),
    );
    let rpcId = 0;
    const rpc = async (method: string, params: unknown[]) => {
      const res = await fetch(endpoints.ledger!, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
      });
      return ((await res.json()) as { result: unknown }).result;
    };
    const blockNumber = await bare(100, () => rpc('eth_blockNumber', []));
    const latest = (await rpc('eth_getBlockByNumber', ['latest', false])) as { transactions: string[] };
    const someTx = latest.transactions[0] ?? `0x${'0'.repeat(64)}`;
    const receipt = await bare(100, () => rpc('eth_getTransactionReceipt', [someTx]));
    const providerRead = await bare(50, () => sandboxOrder(endpoints.payout_sandbox!, `${paymentId}-A1`));

    say('');
    say(`| operation | clients | requests | req/s | p50 ms | p95 ms | p99 ms | 429 | other non-2xx | socket errors | note |`);
    say(`|---|---|---|---|---|---|---|---|---|---|---|`);
    for (const r of rows)
      say(
        `| ${r.op} | ${r.level} | ${r.requests} | ${r.rps.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.r429} | ${r.other} | ${r.sock} | ${r.note ?? ''} |`,
      );
    say('');
    say(
      `Bare round trips, concurrency 1, p50: DynamoDB GetItem ${getItem.toFixed(2)} ms, TransactWriteItems (2 puts) ${txWrite.toFixed(2)} ms; ledger eth_blockNumber ${blockNumber.toFixed(2)} ms, eth_getTransactionReceipt ${receipt.toFixed(2)} ms; sandbox GET /v1/orders?reference= ${providerRead.toFixed(2)} ms`,
    );
    // Round trips each operation cannot avoid on its critical path (counted from the code, see the report).
    const D = getItem;
    const T = txWrite;
    const L = blockNumber;
    const P = providerRead;
    const floors: Array<[string, string, number]> = [
      [
        'POST /batch/submit',
        '10 single-item DynamoDB calls (farmer ‖ cooperative GetItems, batch-number UpdateItem; writer: read the write, keep the signed tx, re-read it, read the pending batch, read the batch, read before confirm; waiter: the read that sees CONFIRMED, the batch read) + 3 TransactWriteItems (putPending, confirmMint, confirm) + 6 ledger RPCs (simulate, pending nonce, estimateGas, fee block, sendRawTransaction, receipt)',
        10 * D + 3 * T + 6 * L,
      ],
      [
        'PATCH /batch/{id}/stage',
        '5 single-item DynamoDB calls (batch GetItem; writer: read the write, keep the signed tx, read before confirm; waiter: the read that sees CONFIRMED) + 2 TransactWriteItems (commitStage, confirm) + 5 ledger RPCs (pending nonce, estimateGas, fee block, sendRawTransaction, receipt)',
        5 * D + 2 * T + 5 * L,
      ],
      ['GET /payments/{id}', '1 GetItem (consistent read of the payment)', D],
      [
        'POST webhook, fresh id',
        '2 GetItems (payout, webhook receipt) + 1 provider order read (sandbox HTTP) + 1 conditional TransactWriteItems (recordSettlement; refused, the payout is final)',
        2 * D + P + T,
      ],
      ['POST webhook, replay', '2 GetItems (payout, webhook receipt: seen → DUPLICATE_WEBHOOK)', 2 * D],
    ];
    say('');
    say(
      '| operation | unavoidable round trips (counted from the code) | their sum, ms | p50 at 1 client / sum | p50 at 10 / sum | p50 at 50 / sum |',
    );
    say('|---|---|---|---|---|---|');
    for (const [op, how, sum] of floors) {
      const at = (l: number) => {
        const r = rows.find((x) => x.op === op && x.level === l);
        return r ? (r.p50 / sum).toFixed(1) : '–';
      };
      say(`| ${op} | ${how} | ${sum.toFixed(1)} | ${at(LEVELS[0]!)} | ${at(LEVELS[1] ?? -1)} | ${at(LEVELS[2] ?? -1)} |`);
    }
    const bad = rows.filter((r) => r.other > 0 || r.sock > 0);
    say(
      bad.length
        ? `NON-429 ERRORS in: ${bad.map((r) => `${r.op} c=${r.level} (${r.other} non-2xx, ${r.sock} socket)`).join('; ')}`
        : 'non-429 errors: 0 (target 0)',
    );
  } finally {
    await stack.stop();
  }
}
