import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { signDevToken } from '../../infra/local/dev-keys';
import { readChainTrail } from '../../shared/adapters/ledger/trail-reader';
import { startStackProcess } from '../support/stack-process';
import { acceptedBatch, apiCaller, untilMinted } from './submission';

/**
 * Custody-trail benchmark on the local stack: p50/p95 of PATCH /batch/{id}/stage (evidence pinned,
 * one DynamoDB transaction, the trace-log transaction mined through the single writer), and the
 * number of ledger transactions per stage change (target: exactly 1), counted on chain.
 */
const BATCHES = Number(process.env.BENCH_STAGE_BATCHES ?? 20);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const say = (l: string) => process.stdout.write(`${l}\n`);

export async function custodyBench(): Promise<void> {
  say(`\nCustody trail: ${BATCHES} batches × GRADED, MILLED, WAREHOUSED`);
  const stack = await startStackProcess({ LOCAL_RATE_LIMIT_RPS: '100000', LOCAL_RATE_LIMIT_BURST: '100000' });
  try {
    const { url, dataDir } = stack.info;
    const admin = await signDevToken({ role: 'ADMIN' }, 3600, dataDir);
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: 'TRAIL' }, 3600, dataDir);
    const call = apiCaller(url);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: 'TRAIL',
      name: 'Trail Cooperative',
      district: 'Mbale',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'M', email: 'm@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 0,
    });
    await call('POST', '/farmers/register', coop, {
      farmer_id: 'TR-F',
      full_name: 'Trail Farmer',
      cooperative_id: 'TRAIL',
      phone: '+256772000303',
      district: 'Mbale',
      farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
    });
    const batches: Array<{ id: string; token: string }> = [];
    for (let i = 0; i < BATCHES; i++) {
      const r = await call('POST', '/batch/submit', coop, {
        farmer_id: 'TR-F',
        cooperative_id: 'TRAIL',
        weight_kg: 150,
        grade: 'screen18',
        moisture_pct: 11,
        collection_point_gps: { lat: 1.08, lng: 34.17 },
        collector_agent_id: 'A',
      });
      const { batchId } = acceptedBatch(r);
      batches.push({ id: batchId, token: (await untilMinted(call, coop, batchId)).token_id });
    }
    const steps: Array<[string, Record<string, unknown>]> = [
      ['GRADED', { grade: 'screen18', moisture_pct: 11.1, screen_size: 18, defect_count: 2, cupping_score: 85 }],
      ['MILLED', { mill_id: 'MILL-1', outturn_kg: 120 }],
      ['WAREHOUSED', { warehouse_id: 'WH-1', lot_number: 'LOT-7' }],
    ];
    const times: number[] = [];
    let changes = 0;
    for (const [stage, evidence] of steps) {
      for (const b of batches) {
        const t = performance.now();
        const r = await call('PATCH', `/batch/${b.id}/stage`, coop, { cooperative_id: 'TRAIL', new_stage: stage, evidence });
        times.push(performance.now() - t);
        if (r.status !== 200) throw new Error(`stage update failed: ${r.status} ${JSON.stringify(r.body)}`);
        changes++;
      }
    }
    say(
      `PATCH /batch/{id}/stage (pinned, committed, trace log mined): p50 ${pct(times, 50).toFixed(1)} ms  p95 ${pct(times, 95).toFixed(1)} ms  (n=${times.length})`,
    );
    const info = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')) as { endpoints: Record<string, string> };
    const client = createPublicClient({ transport: http(info.endpoints.ledger) });
    let recorded = 0;
    for (const b of batches) {
      const trail = await readChainTrail({
        publicClient: client as never,
        chainId: 31337,
        batchTokenAddress: info.endpoints.batch_token as `0x${string}`,
        traceLogAddress: info.endpoints.trace_log as `0x${string}`,
        tokenId: BigInt(b.token),
      });
      recorded += trail.stages.length;
    }
    const txHashes = new Set<string>();
    for (const b of batches) {
      const batch = await call('GET', `/batch/${b.id}`, coop);
      for (const h of batch.body.stage_history.slice(1)) txHashes.add(h.chain_tx_hash);
    }
    say(
      `ledger transactions per stage change: ${(txHashes.size / changes).toFixed(2)} (${txHashes.size} trace-log transactions, ${recorded} StageRecorded events for ${changes} stage changes; target exactly 1)`,
    );
  } finally {
    await stack.stop();
  }
}
