import { signDevToken } from '../../infra/local/dev-keys';
import { validateSubmitDdsRequest } from '../../shared/adapters/eudr/xsd-validate';
import { purchaseOrderBody } from '../support/purchase-order-body';
import { startStackProcess } from '../support/stack-process';
import { acceptedBatch, apiCaller, blockTimeLabel, type Call, createdOrder } from './submission';

/**
 * The statement of one shipment (docs/api/eudr.md#statement-per-purchase-order), through the API on
 * the local stack: BENCH_SHIPMENT_FARMERS (200) farmers registered with their plots (half mapped as
 * 40-corner polygons of about 12 ha, half as points), BENCH_SHIPMENT_BATCHES (500) batches submitted,
 * GRADED and MILLED, one purchase order of them confirmed, then POST /eudr/generate-dds
 * `{purchase_order_id}`: the generation's answer time, the XML's size (and its V3 XSD validation),
 * the statement's JSON size, and the time until it is AVAILABLE. The stack runs with
 * LEDGER_BLOCK_TIME_S from the environment, else 0 (each transaction mined at once: 500 mints and
 * 1,000 stage transactions on 2-second blocks would take most of the run).
 */
const BATCHES = Number(process.env.BENCH_SHIPMENT_BATCHES ?? 500);
const FARMERS = Number(process.env.BENCH_SHIPMENT_FARMERS ?? 200);
/** Requests in flight while the order's records are set up. */
const WIDTH = Number(process.env.BENCH_SHIPMENT_WIDTH ?? 8);
const COOP = 'EUDR-SHIP';
const say = (l: string) => process.stdout.write(`${l}\n`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** `fn` over `items`, WIDTH at a time. */
async function pool<T>(items: T[], fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(WIDTH, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** Farmer `i`'s registration: distinct plots in Bulambuli/Kapchorwa, odd ones 40-corner polygons. */
function farmerBody(i: number) {
  const lat = +(1.0 + (i % 50) * 0.008).toFixed(6);
  const lng = +(34.2 + Math.floor(i / 50) * 0.01).toFixed(6);
  const ring: number[][] = [];
  for (let k = 0; k < 40; k++) {
    const a = (2 * Math.PI * k) / 40;
    ring.push([+(lng + 0.002 * Math.cos(a)).toFixed(6), +(lat + 0.002 * Math.sin(a)).toFixed(6)]);
  }
  ring.push(ring[0]!);
  return {
    farmer_id: `UG-SHIP-${String(i).padStart(5, '0')}`,
    full_name: `Shipment Farmer ${i}`,
    cooperative_id: COOP,
    district: 'Bulambuli',
    farm:
      i % 2 === 0
        ? { gps: { lat, lng }, area_ha: 2 }
        : { gps: { lat, lng }, area_ha: 12, polygon: { type: 'Polygon', coordinates: [ring] } },
  };
}

/** Polls `get` every `everyMs` until `done` holds; throws after `timeoutMs`. */
async function until(
  get: () => Promise<{ status: number; body: any }>,
  done: (r: { status: number; body: any }) => boolean,
  timeoutMs: number,
  everyMs = 250,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await get();
    if (done(r)) return r;
    if (Date.now() > deadline)
      throw new Error(`not reached within ${timeoutMs / 1000} s: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, everyMs));
  }
}

/** One stage change, 200 or 202; throws for any other answer. */
async function stage(call: Call, tok: string, batchId: string, newStage: string, evidence: Record<string, unknown>): Promise<void> {
  const r = await call('PATCH', `/batch/${batchId}/stage`, tok, { cooperative_id: COOP, new_stage: newStage, evidence });
  if (r.status !== 200 && r.status !== 202) throw new Error(`${batchId} ${newStage}: ${r.status} ${JSON.stringify(r.body)}`);
}

/** Runs the shipment figures on its own local stack; prints one line each. */
export async function shipmentDdsBench(): Promise<void> {
  const blockTime = process.env.LEDGER_BLOCK_TIME_S ?? '0';
  say(`\nEUDR shipment statement through the API: ${BATCHES} batches from ${FARMERS} farmers (${blockTimeLabel(blockTime)})`);
  const stack = await startStackProcess(
    {
      LOCAL_RATE_LIMIT_RPS: '100000',
      LOCAL_RATE_LIMIT_BURST: '100000',
      LEDGER_BLOCK_TIME_S: blockTime,
    },
    300_000,
  );
  try {
    const { url, dataDir } = stack.info;
    const admin = await signDevToken({ role: 'ADMIN' }, 7200, dataDir);
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: COOP }, 7200, dataDir);
    const call = apiCaller(url);
    await call('POST', '/cooperatives', admin, {
      cooperative_id: COOP,
      name: 'Shipment Cooperative',
      district: 'Bulambuli',
      licence_status: 'ACTIVE',
      licence_expires_at: '2030-01-01',
      manager: { name: 'M', email: 'm@example.org', phone: '+256772000002' },
      prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
      export_premium_ugx_per_kg: 0,
    });

    const t0 = Date.now();
    const farmers = Array.from({ length: FARMERS }, (_, i) => farmerBody(i));
    await pool(farmers, async (f) => {
      const r = await call('POST', '/farmers/register', coop, f);
      if (r.status !== 201) throw new Error(`register ${f.farmer_id}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    });
    say(`  setup: ${FARMERS} farmers registered with their plots in ${secs(Date.now() - t0)}`);

    const t1 = Date.now();
    const batches: string[] = new Array(BATCHES);
    await pool(batches, async (_, i) => {
      const r = await call('POST', '/batch/submit', coop, {
        farmer_id: farmers[i % FARMERS]!.farmer_id,
        cooperative_id: COOP,
        weight_kg: 60,
        grade: i % 3 === 0 ? 'FAQ' : 'screen18',
        moisture_pct: 11,
        collection_point_gps: { lat: 1.2, lng: 34.25 },
        collector_agent_id: 'A',
      });
      batches[i] = acceptedBatch(r).batchId;
    });
    await pool(batches, async (b, i) => {
      await until(
        () => call('GET', `/batch/${b}`, coop),
        (r) => r.status === 200,
        300_000,
      );
      const grade = i % 3 === 0 ? 'FAQ' : 'screen18';
      await stage(call, coop, b, 'GRADED', { grade, moisture_pct: 11 });
      await stage(call, coop, b, 'MILLED', { mill_id: 'M1', outturn_kg: 48.5 });
    });
    await pool(batches, async (b) => {
      await until(
        () => call('GET', `/batch/${b}`, coop),
        (r) => r.body.stage === 'MILLED',
        300_000,
      );
    });
    say(`  setup: ${BATCHES} batches submitted, GRADED and MILLED in ${secs(Date.now() - t1)}`);

    const t2 = Date.now();
    const po = await createdOrder(call, coop, await call('POST', '/purchase-orders', coop, purchaseOrderBody(batches)));
    const poId: string = po.purchase_order_id;
    let confirmed = await call('POST', `/purchase-orders/${poId}/confirm`, coop);
    while (confirmed.status === 202) confirmed = await call('POST', `/purchase-orders/${poId}/confirm`, coop);
    if (confirmed.status !== 200) throw new Error(`confirm: ${confirmed.status} ${JSON.stringify(confirmed.body).slice(0, 300)}`);
    say(`  setup: purchase order of ${BATCHES} batches created and confirmed in ${secs(Date.now() - t2)}`);

    const tg = performance.now();
    const gen = await call('POST', '/eudr/generate-dds', coop, { purchase_order_id: poId });
    const genMs = performance.now() - tg;
    if (gen.status !== 202) throw new Error(`generate-dds: ${gen.status} ${JSON.stringify(gen.body).slice(0, 500)}`);
    const ddsId: string = gen.body.dds_id;
    say(
      `  POST /eudr/generate-dds {purchase_order_id} (read, built, documents kept, record stored, filing queued): ${genMs.toFixed(0)} ms`,
    );
    const available = await until(
      () => call('GET', `/eudr/dds/${ddsId}`, coop),
      (r) => r.body.status === 'AVAILABLE' || r.body.status === 'REJECTED',
      120_000,
      250,
    );
    const toAvailable = performance.now() - tg;
    if (available.body.status !== 'AVAILABLE') throw new Error(`DDS ${ddsId} ${available.body.status}: ${available.body.rejection_reason}`);
    say(`  generation → AVAILABLE with its numbers (DDS_POLL_DELAY_S scaled locally; sandbox 1.5 s): ${toAvailable.toFixed(0)} ms`);

    const res = await fetch(`${url}/eudr/dds/${ddsId}/xml`, { headers: { authorization: `Bearer ${coop}` } });
    const xml = await res.text();
    const v = await validateSubmitDdsRequest(xml);
    const json = JSON.stringify(available.body);
    say(
      `  producers ${available.body.producers.length}, net ${available.body.net_weight_kg} kg; XML ${(Buffer.byteLength(xml) / 1024).toFixed(1)} KiB, ${res.redirected ? 'served by its 303 link' : 'served inline'} (V3 XSD: ${v.valid ? 'valid' : `INVALID ${v.errors.slice(0, 2).join('; ')}`}), GET /eudr/dds/{id} ${(Buffer.byteLength(json) / 1024).toFixed(1)} KiB`,
    );
  } finally {
    await stack.stop();
  }
}
