import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, http, isAddressEqual, type Hex, type PublicClient } from 'viem';
import { signDevToken } from '../../infra/local/dev-keys';
import { parseBlockTimeSeconds } from '../../infra/local/hardhat-node';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { startStackProcess } from '../support/stack-process';
import { settlementBench } from './settlement';
import { acceptedBatch, apiCaller, blockTimeLabel, retrying503 } from './submission';

/**
 * The ledger at block speed (`BENCH_ONLY=ledger npm run bench`, docs/ledger.md#benchmarks), on a
 * local chain with block time (LEDGER_BLOCK_TIME_S, 2 s unless the bench's environment sets it):
 *  1. BENCH_LEDGER_WRITES (default 60) submissions from BENCH_LEDGER_CLIENTS (default 50)
 *     concurrent clients, each sending `Prefer: respond-async` as a client of many writes should
 *     (BENCH_LEDGER_RESPOND_ASYNC=0: none, each request then waits for its write up to the
 *     route's wait): accepted per second (201, 200 and 202 alike), then every mint waited for on
 *     chain: mints landed per second, seconds and blocks from acceptance to the mint's block
 *     (p50, p95), mint transactions per block (max) and gas per mint;
 *  2. as many stage updates (GRADED) the same way, on the trace log;
 *  3. the settlement part (./settlement.ts) on the same block time, with
 *     BENCH_LEDGER_SETTLEMENT_BATCHES (default 10) batches and a third of them with a loan.
 */

const WRITES = Number(process.env.BENCH_LEDGER_WRITES ?? 60);
const CLIENTS = Number(process.env.BENCH_LEDGER_CLIENTS ?? 50);
const SETTLEMENT_BATCHES = Number(process.env.BENCH_LEDGER_SETTLEMENT_BATCHES ?? 10);
/** The headers of every submission and stage update: `Prefer: respond-async` unless BENCH_LEDGER_RESPOND_ASYNC=0. */
const WRITE_HEADERS: Record<string, string> = process.env.BENCH_LEDGER_RESPOND_ASYNC === '0' ? {} : { prefer: 'respond-async' };
const COOP = 'LEDGER-BENCH';
const say = (l: string) => process.stdout.write(`${l}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]! : Number.NaN;

async function pool<T, R>(items: T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/** One kind of write (mints or stage records) as the chain saw it, from its transactions' receipts. */
interface LandedWrites {
  /** Blocks from each write's acceptance to its block: its block's number minus the chain's head seen at the answer. */
  latencyBlocks: number[];
  /** Seconds from each write's acceptance (the API's answer) to its block's timestamp. */
  latencyS: number[];
  /** Transactions to the contract per block in which any landed, the largest count. */
  maxPerBlock: number;
  /** Blocks that carried at least one of them. */
  blocks: number;
  /** Mean gas used per transaction (each distinct transaction counted once). */
  gasPerTx: number;
  /** Gas of the distinct transactions divided by the writes they carried. */
  gasPerWrite: number;
  /** The last block's timestamp, seconds since the epoch. */
  lastBlockS: number;
}

/**
 * Reads the receipts of `txHashes` (each accepted at `accepted[i].at`, epoch ms, with the chain's
 * head then `accepted[i].head`) and the blocks they landed in; counts every transaction to
 * `contract` in those blocks (a batched call counts once).
 */
async function landedWrites(
  reader: PublicClient,
  contract: Hex,
  txHashes: Hex[],
  accepted: Array<{ at: number; head: bigint }>,
): Promise<LandedWrites> {
  const receipts = await pool(txHashes, 8, (hash) => reader.getTransactionReceipt({ hash }));
  const latencyBlocks = receipts.map((r, i) => Number(r.blockNumber - accepted[i]!.head));
  const blockNumbers = [...new Set(receipts.map((r) => r.blockNumber))];
  const blocks = new Map(
    await pool(blockNumbers, 8, async (n) => [n, await reader.getBlock({ blockNumber: n, includeTransactions: true })] as const),
  );
  const latencyS = receipts.map((r, i) => Number(blocks.get(r.blockNumber)!.timestamp) - accepted[i]!.at / 1000);
  let maxPerBlock = 0;
  for (const b of blocks.values()) {
    const n = b.transactions.filter((tx) => tx.to && isAddressEqual(tx.to, contract)).length;
    maxPerBlock = Math.max(maxPerBlock, n);
  }
  // A batched transaction carries many writes: its gas is counted once.
  const distinct = [...new Map(receipts.map((r) => [r.transactionHash, r])).values()];
  const gas = distinct.reduce((sum, r) => sum + r.gasUsed, 0n);
  return {
    latencyBlocks,
    latencyS,
    maxPerBlock,
    blocks: blocks.size,
    gasPerTx: distinct.length ? Number(gas / BigInt(distinct.length)) : 0,
    gasPerWrite: receipts.length ? Number(gas / BigInt(receipts.length)) : 0,
    lastBlockS: Math.max(...[...blocks.values()].map((b) => Number(b.timestamp))),
  };
}

/**
 * The chain's head block number, polled every 100 ms until `stop()` (a failed poll keeps the last):
 * the block a write's acceptance saw, so its latency can be counted in blocks.
 */
function chainHead(reader: PublicClient): { now: () => bigint; stop: () => Promise<void> } {
  let head = 0n;
  let running = true;
  const loop = (async () => {
    while (running) {
      head = await reader.getBlockNumber({ cacheTime: 0 }).catch(() => head);
      await sleep(100);
    }
  })();
  return {
    now: () => head,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

export async function ledgerBench(): Promise<void> {
  const env = { LEDGER_BLOCK_TIME_S: process.env.LEDGER_BLOCK_TIME_S ?? '2' };
  const blockTimeS = parseBlockTimeSeconds(env.LEDGER_BLOCK_TIME_S);
  say(
    `\nLedger at block speed: ${WRITES} submissions and ${WRITES} stage updates at ${CLIENTS} clients${WRITE_HEADERS.prefer ? ' (Prefer: respond-async)' : ' (waiting for each write)'}, ${blockTimeLabel(env.LEDGER_BLOCK_TIME_S)}`,
  );
  // Real timings (LOCAL_TIME_SCALE=1, as in AWS): scaled down, the reconciler would queue every write still open after 3 s a second time.
  const stack = await startStackProcess({
    ...env,
    LOCAL_TIME_SCALE: '1',
    LOCAL_RATE_LIMIT_RPS: '100000',
    LOCAL_RATE_LIMIT_BURST: '100000',
  });
  let stopHead = async (): Promise<void> => undefined;
  try {
    const { url, dataDir } = stack.info;
    const admin = await signDevToken({ role: 'ADMIN' }, 3600, dataDir);
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: COOP }, 3600, dataDir);
    const call = apiCaller(url);
    // Writes are retried on 503 after Retry-After, as a client should; the retries are reported with the answers.
    let retries = 0;
    const write = retrying503(call, () => retries++);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: COOP,
      name: 'Ledger Bench Cooperative',
      district: 'Mbale',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'M', email: 'm@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 0,
    });
    await call('POST', '/farmers/register', coop, {
      farmer_id: 'LB-F',
      full_name: 'Ledger Bench Farmer',
      cooperative_id: COOP,
      phone: '+256772000505',
      district: 'Mbale',
      farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
    });
    const info = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')) as { endpoints: Record<string, Hex> };
    const rpcUrl = info.endpoints.ledger!;
    const reader = createPublicClient({ chain: ledgerChain(31337, rpcUrl), transport: http(rpcUrl) }) as PublicClient;
    // Every write of a part must land within this (one write a block, plus slack).
    const landTimeoutMs = 60_000 + WRITES * 3_000 * Math.max(1, blockTimeS);

    /** Polls GET /batch/{id} for every batch until `done` holds for all; returns each batch's last view. */
    const untilAll = async (ids: string[], done: (b: any) => boolean, what: string): Promise<Map<string, any>> => {
      const views = new Map<string, any>();
      const deadline = Date.now() + landTimeoutMs;
      for (;;) {
        const open = ids.filter((id) => !views.has(id) || !done(views.get(id)));
        if (open.length === 0) return views;
        if (Date.now() > deadline) throw new Error(`${open.length} of ${ids.length} batches not ${what} within ${landTimeoutMs / 1000} s`);
        await pool(open, 8, async (id) => views.set(id, (await call('GET', `/batch/${id}`, coop)).body));
        await sleep(500);
      }
    };
    const report = (
      kind: string,
      accepted: { ms: number; statuses: Record<number, number>; retries: number },
      landed: LandedWrites,
      firstMs: number,
    ) => {
      const row = (k: string, v: string) => say(`  ${k.padEnd(58)} ${v}`);
      const landedSpanS = landed.lastBlockS - firstMs / 1000;
      row(
        `${kind}: accepted per second`,
        `${((WRITES / accepted.ms) * 1000).toFixed(1)} (answers ${JSON.stringify(accepted.statuses)}; ${accepted.retries} retried after a 503)`,
      );
      row(`${kind}: landed on chain per second`, `${(WRITES / landedSpanS).toFixed(2)} (${WRITES} in ${landedSpanS.toFixed(1)} s)`);
      const blocks = (s: number) => (blockTimeS > 0 ? ` = ${(s / blockTimeS).toFixed(1)} blocks` : '');
      row(
        `${kind}: acceptance → its block`,
        `p50 ${pct(landed.latencyS, 50).toFixed(1)} s${blocks(pct(landed.latencyS, 50))}, p95 ${pct(landed.latencyS, 95).toFixed(1)} s${blocks(pct(landed.latencyS, 95))}`,
      );
      row(
        `${kind}: blocks after the head seen at acceptance`,
        `p50 ${pct(landed.latencyBlocks, 50)}, p95 ${pct(landed.latencyBlocks, 95)}, max ${Math.max(...landed.latencyBlocks)} (1 = the next block)`,
      );
      row(
        `${kind}: transactions per block`,
        `max ${landed.maxPerBlock} (${landed.blocks} blocks carried ${WRITES} writes); ${landed.gasPerTx} gas per transaction, ${landed.gasPerWrite} per write`,
      );
    };

    // 1. submissions → mints
    const body = {
      farmer_id: 'LB-F',
      cooperative_id: COOP,
      weight_kg: 150,
      grade: 'screen18',
      moisture_pct: 11,
      collection_point_gps: { lat: 1.08, lng: 34.17 },
      collector_agent_id: 'A',
    };
    const statuses: Record<number, number> = {};
    const head = chainHead(reader);
    stopHead = head.stop;
    const t0 = Date.now();
    const submitted = await pool(
      Array.from({ length: WRITES }, (_, i) => i),
      CLIENTS,
      async () => {
        const r = await write('POST', '/batch/submit', coop, body, WRITE_HEADERS);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        return { batchId: acceptedBatch(r).batchId, at: Date.now(), head: head.now() };
      },
    );
    const submitMs = Date.now() - t0;
    const ids = submitted.map((s) => s.batchId);
    const minted = await untilAll(ids, (b) => b?.chain_tx_hash != null, 'minted');
    report(
      'mints',
      { ms: submitMs, statuses, retries },
      await landedWrites(
        reader,
        info.endpoints.batch_token!,
        ids.map((id) => minted.get(id).chain_tx_hash),
        submitted,
      ),
      t0,
    );

    // 2. stage updates → trace-log records
    const stageStatuses: Record<number, number> = {};
    const t1 = Date.now();
    const retriesBeforeStages = retries;
    const patched = await pool(ids, CLIENTS, async (id) => {
      const r = await write(
        'PATCH',
        `/batch/${id}/stage`,
        coop,
        {
          cooperative_id: COOP,
          new_stage: 'GRADED',
          evidence: { grade: 'screen18', moisture_pct: 11.1 },
        },
        WRITE_HEADERS,
      );
      stageStatuses[r.status] = (stageStatuses[r.status] ?? 0) + 1;
      if (r.status !== 200 && r.status !== 202) throw new Error(`stage update of ${id}: ${r.status} ${JSON.stringify(r.body)}`);
      return { at: Date.now(), head: head.now() };
    });
    const stageMs = Date.now() - t1;
    const graded = (b: any) => b?.stage_history?.find((h: { stage: string }) => h.stage === 'GRADED');
    const recorded = await untilAll(ids, (b) => graded(b)?.chain_tx_hash != null, 'GRADED on the trace log');
    report(
      'stage records',
      { ms: stageMs, statuses: stageStatuses, retries: retries - retriesBeforeStages },
      await landedWrites(
        reader,
        info.endpoints.trace_log!,
        ids.map((id) => graded(recorded.get(id)).chain_tx_hash),
        patched,
      ),
      t1,
    );
  } catch (err) {
    process.stderr.write(`local stack output:\n${stack.output()}\n`);
    throw err;
  } finally {
    await stopHead();
    await stack.stop();
  }

  // 3. settlement on the same block time
  await settlementBench({ batches: SETTLEMENT_BATCHES, loans: Math.floor(SETTLEMENT_BATCHES / 3), env });
}
