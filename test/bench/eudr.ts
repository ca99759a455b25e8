import { signDevToken } from '../../infra/local/dev-keys';
import { purchaseOrderBody } from '../support/purchase-order-body';
import { startStackProcess } from '../support/stack-process';
import { shipmentDdsBench } from './eudr-shipment';
import { acceptedBatch, apiCaller, untilMinted } from './submission';

/**
 * EUDR benchmark on the local stack: p50/p95 of POST /eudr/generate-dds (statement and XML built,
 * both pinned to IPFS, stored and queued for filing), and the time until the DDS is AVAILABLE
 * with its reference numbers (the local registry sandbox makes them available after 1.5 s): for a
 * burst of statements generated at once, and for statements generated one at a time.
 */
const BATCHES = Number(process.env.BENCH_DDS_BATCHES ?? 30);
/** Statements generated one at a time after the burst (taken from the batches). */
const SINGLES = Number(process.env.BENCH_DDS_SINGLES ?? 5);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const say = (l: string) => process.stdout.write(`${l}\n`);

export async function eudrBench(): Promise<void> {
  say(`\nEUDR: ${BATCHES} due diligence statements`);
  const stack = await startStackProcess({ LOCAL_RATE_LIMIT_RPS: '100000', LOCAL_RATE_LIMIT_BURST: '100000' });
  try {
    const { url, dataDir } = stack.info;
    const admin = await signDevToken({ role: 'ADMIN' }, 3600, dataDir);
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: 'EUDR' }, 3600, dataDir);
    const call = apiCaller(url);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: 'EUDR',
      name: 'EUDR Cooperative',
      district: 'Kapchorwa',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'M', email: 'm@example.org', phone: '+256772000001' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 0,
    });
    const ring = [
      [34.4491, 1.3953],
      [34.45135, 1.3953],
      [34.45135, 1.39738],
      [34.4491, 1.39738],
      [34.4491, 1.3953],
    ];
    await call('POST', '/farmers/register', coop, {
      farmer_id: 'EU-F',
      full_name: 'Chebet Rose',
      cooperative_id: 'EUDR',
      phone: '+256772000404',
      district: 'Kapchorwa',
      farm: { gps: { lat: 1.3963, lng: 34.4502 }, polygon: { type: 'Polygon', coordinates: [ring] }, area_ha: 5.2 },
    });
    const batches: string[] = [];
    for (let i = 0; i < BATCHES + SINGLES; i++) {
      const b = await call('POST', '/batch/submit', coop, {
        farmer_id: 'EU-F',
        cooperative_id: 'EUDR',
        weight_kg: 300,
        grade: 'screen18',
        moisture_pct: 11,
        collection_point_gps: { lat: 1.396, lng: 34.45 },
        collector_agent_id: 'A',
      });
      const id = acceptedBatch(b).batchId;
      await untilMinted(call, coop, id);
      await call('PATCH', `/batch/${id}/stage`, coop, {
        cooperative_id: 'EUDR',
        new_stage: 'GRADED',
        evidence: { grade: 'screen18', moisture_pct: 11 },
      });
      batches.push(id);
    }
    await call('POST', '/purchase-orders', coop, purchaseOrderBody(batches.slice(0, 40)));
    const singles = batches.splice(0, SINGLES);
    const times: number[] = [];
    const started: Array<{ id: string; t: number }> = [];
    for (const b of batches) {
      const t = performance.now();
      const r = await call('POST', '/eudr/generate-dds', coop, { batch_id: b });
      times.push(performance.now() - t);
      if (r.status !== 202) throw new Error(`generate-dds failed: ${r.status} ${JSON.stringify(r.body)}`);
      started.push({ id: r.body.dds_id, t: Date.now() });
    }
    say(
      `POST /eudr/generate-dds (built, pinned, stored, queued; 202 DDS_TRACES_PENDING): p50 ${pct(times, 50).toFixed(1)} ms  p95 ${pct(times, 95).toFixed(1)} ms  (n=${times.length})`,
    );
    const toAvailable: number[] = [];
    for (const s of started) {
      for (;;) {
        const r = await call('GET', `/eudr/dds/${s.id}`, coop);
        if (r.body.status === 'AVAILABLE') {
          toAvailable.push(Date.now() - s.t);
          break;
        }
        if (r.body.status === 'REJECTED') throw new Error(`DDS ${s.id} rejected: ${r.body.rejection_reason}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    say(
      `generation → AVAILABLE with reference and verification numbers (sandbox: 1.5 s), a burst of ${started.length} at once (the local queue stand-in runs 5 consumers, as Lambda starts): p50 ${pct(toAvailable, 50)} ms  p95 ${pct(toAvailable, 95)} ms`,
    );
    // One at a time: the latency of a single statement, without waiting behind the others.
    const single: number[] = [];
    for (const b of singles) {
      const t = Date.now();
      const r = await call('POST', '/eudr/generate-dds', coop, { batch_id: b });
      if (r.status !== 202) throw new Error(`generate-dds failed: ${r.status} ${JSON.stringify(r.body)}`);
      for (;;) {
        const d = await call('GET', `/eudr/dds/${r.body.dds_id}`, coop);
        if (d.body.status === 'AVAILABLE') {
          single.push(Date.now() - t);
          break;
        }
        if (d.body.status === 'REJECTED') throw new Error(`DDS ${r.body.dds_id} rejected: ${d.body.rejection_reason}`);
        await new Promise((res) => setTimeout(res, 50));
      }
    }
    say(
      `generation → AVAILABLE, one statement at a time (sandbox: 1.5 s): p50 ${pct(single, 50)} ms  p95 ${pct(single, 95)} ms  (n=${single.length})`,
    );
  } finally {
    await stack.stop();
  }
  await shipmentDdsBench();
}
