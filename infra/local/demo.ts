import { signDevToken } from './dev-keys';

/**
 * `npm run demo`: drives a full batch lifecycle over HTTP against a running local service
 * (`npm start` in another terminal) and prints what happened, with timings (decisions §1).
 * A Bugisu cooperative on Mt Elgon registers its farmers, delivers batches, each batch becomes a
 * BatchToken on the ledger, and each farmer is paid to mobile money until PAYMENT_CONFIRMED.
 * Environment: DEMO_URL (default http://127.0.0.1:$PORT, PORT default 3000), LOCAL_DATA_DIR
 * (the running service's, for its token key).
 */

const base = process.env.DEMO_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
const t0 = Date.now();
const say = (line: string) => process.stdout.write(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

async function call(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

const COOP = 'BUGISU-CU-01';
const farmers = [
  { farmer_id: 'UG-BUD-004512', full_name: 'Nabulo Mirembe', phone: '+256772418305', district: 'Bududa', gps: { lat: 1.011812, lng: 34.331245 } },
  { farmer_id: 'UG-SIR-001877', full_name: 'Wanyera Moses', phone: '+256701552760', district: 'Sironko', gps: { lat: 1.231004, lng: 34.248713 } },
  { farmer_id: 'UG-KAP-000931', full_name: 'Chebet Rose', phone: '+256783104422', district: 'Kapchorwa', gps: { lat: 1.396245, lng: 34.450118 } },
  { farmer_id: 'UG-MAN-002208', full_name: 'Mafabi Peter', phone: '+256752906613', district: 'Manafwa', gps: { lat: 0.978511, lng: 34.337902 } },
];
const deliveries = [
  { farmer: 0, weight_kg: 182.4, grade: 'screen18', moisture_pct: 11.2 },
  { farmer: 1, weight_kg: 96.0, grade: 'screen15', moisture_pct: 12.0 },
  { farmer: 2, weight_kg: 240.75, grade: 'PB', moisture_pct: 11.8 },
  { farmer: 3, weight_kg: 58.3, grade: 'FAQ', moisture_pct: 12.5 },
];

async function main() {
  try {
    await fetch(`${base}/openapi.json`);
  } catch {
    say(`No service answers at ${base}. Start it first with \`npm start\` (or set DEMO_URL).`);
    process.exit(2);
  }
  say(`Service at ${base}`);
  const admin = await signDevToken({ role: 'ADMIN', sub: 'demo-admin' });
  const manager = await signDevToken({ role: 'COOPERATIVE', cooperative_id: COOP, sub: 'demo-manager' });
  const agent = await signDevToken({ role: 'AGENT', cooperative_id: COOP, sub: 'demo-field-agent' });

  const coop = await call('POST', '/cooperatives', admin, {
    cooperative_id: COOP, name: 'Bugisu Cooperative Union', district: 'Mbale', licence_status: 'ACTIVE', licence_expires_at: '2027-06-30',
    manager: { name: 'Sarah Wanyama', email: 'manager@bugisu-cu.example', phone: '+256772650019' },
    prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 }, export_premium_ugx_per_kg: 400,
  });
  say(coop.status === 201 ? `Cooperative ${COOP} (Bugisu Cooperative Union, Mbale) registered` : `Cooperative ${COOP}: ${coop.body.error?.code ?? coop.status}`);
  for (const f of farmers) {
    const r = await call('POST', '/farmers/register', agent, {
      farmer_id: f.farmer_id, full_name: f.full_name, cooperative_id: COOP, phone: f.phone, district: f.district, farm: { gps: f.gps, area_ha: 1.2 },
    });
    say(r.status === 201 ? `Farmer ${f.farmer_id} ${f.full_name} (${f.district}), phone ${r.body.phone}, forest check ${r.body.gfw_status}` : `Farmer ${f.farmer_id}: ${r.body.error?.code ?? r.status}`);
  }

  const runs: Array<{ batch: string; payout?: string; started: number; minted: number; token: string; tx: string; farmer: string; ugx: number }> = [];
  for (const d of deliveries) {
    const f = farmers[d.farmer]!;
    const started = Date.now();
    const r = await call('POST', '/batch/submit', agent, {
      farmer_id: f.farmer_id, cooperative_id: COOP, weight_kg: d.weight_kg, grade: d.grade, moisture_pct: d.moisture_pct,
      collection_point_gps: f.gps, collector_agent_id: 'AGENT-MBL-07',
    });
    if (r.status !== 201) {
      say(`Batch for ${f.full_name} refused: ${r.status} ${r.body.error?.code} ${r.body.error?.message}`);
      continue;
    }
    const data = r.body.data;
    runs.push({ batch: data.batch_id, started, minted: Date.now(), token: data.token_id, tx: data.chain_tx_hash, farmer: f.full_name, ugx: data.payment_amount_ugx });
    say(`${data.batch_id}: ${d.weight_kg} kg ${d.grade} from ${f.full_name} → BatchToken #${data.token_id}, tx ${data.chain_tx_hash} (${Date.now() - started} ms); payment ${data.payment_status} ${data.payment_amount_ugx.toLocaleString('en-US')} UGX to ${data.farmer_phone}`);
  }

  say('Waiting for the mobile-money settlements…');
  const pending = new Set(runs.map((r) => r.batch));
  const deadline = Date.now() + 120_000;
  while (pending.size && Date.now() < deadline) {
    for (const run of runs.filter((x) => pending.has(x.batch))) {
      if (!run.payout) {
        const list = await call('GET', `/payments?batch_id=${run.batch}`, manager);
        run.payout = list.body.payments?.[0]?.payment_id;
        if (run.payout) say(`${run.batch}: payout ${run.payout} PROCESSING with the provider`);
        continue;
      }
      const p = await call('GET', `/payments/${run.payout}`, manager);
      if (p.body.status === 'COMPLETED') {
        const b = await call('GET', `/batch/${run.batch}`, agent);
        if (b.body.payment_status !== 'PAYMENT_CONFIRMED') continue;
        pending.delete(run.batch);
        say(`${run.batch}: payout ${run.payout} COMPLETED — ${p.body.amount_ugx.toLocaleString('en-US')} UGX (${p.body.amount_usdc} USDC at ${p.body.exchange_rate} UGX/USDC), M-money ${p.body.mobile_money_transaction_id}; batch ${b.body.payment_status} ${((Date.now() - run.started) / 1000).toFixed(1)} s after submission (service: ${p.body.elapsed_seconds} s)`);
      } else if (p.body.status === 'MANUAL_REVIEW') {
        pending.delete(run.batch);
        say(`${run.batch}: payout ${run.payout} MANUAL_REVIEW after ${p.body.retry_count} retries`);
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  if (pending.size) {
    say(`Not settled within 120 s: ${[...pending].join(', ')}`);
    process.exit(1);
  }
  say(`Done: ${runs.length} batches minted and their farmers paid. API reference: ${base}/docs`);
}

main().catch((err) => {
  process.stderr.write(`demo failed: ${(err as Error).message}\n`);
  process.exit(1);
});
