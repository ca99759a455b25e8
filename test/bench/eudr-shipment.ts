import { SoapDdsRegistry } from '../../shared/adapters/eudr/soap-dds-registry';
import { submitDdsRequestXml } from '../../shared/adapters/eudr/submit-dds-xml';
import { validateSubmitDdsRequest } from '../../shared/adapters/eudr/xsd-validate';
import { buildShipmentStatement } from '../../shared/domain/dds-shipment';
import type { Farmer } from '../../shared/domain/records';
import { startDdsRegistrySandbox } from '../../infra/local/dds-registry-sandbox';

/**
 * The statement of one shipment (docs/api/eudr.md#statement-per-purchase-order): a purchase order of
 * BENCH_SHIPMENT_BATCHES (500) MILLED batches from BENCH_SHIPMENT_FARMERS (200) farmers, half of them
 * mapped as 40-corner polygons, half as points. Measured in process, on the code the route runs
 * (`buildShipmentStatement`, the SubmitDdsRequest XML): generation time and XML size, the V3 XSD
 * validation, then filing with the registry sandbox through the SOAP adapter and polling (every
 * 250 ms, as the filer does) until AVAILABLE. Not through the API: purchase orders are created with
 * at most 40 batches on this branch, so the order's records are not built through the stack.
 */
const BATCHES = Number(process.env.BENCH_SHIPMENT_BATCHES ?? 500);
const FARMERS = Number(process.env.BENCH_SHIPMENT_FARMERS ?? 200);
const say = (l: string) => process.stdout.write(`${l}\n`);

function farmer(i: number): Farmer {
  const lat = 0.9 + (i % 50) * 0.01;
  const lng = 34.0 + Math.floor(i / 50) * 0.01;
  const ring: number[][] = [];
  for (let k = 0; k < 40; k++) {
    const a = (2 * Math.PI * k) / 40;
    ring.push([+(lng + 0.002 * Math.cos(a)).toFixed(7), +(lat + 0.002 * Math.sin(a)).toFixed(7)]);
  }
  ring.push(ring[0]!);
  return {
    farmer_id: `UG-BENCH-${String(i).padStart(5, '0')}`,
    full_name: `Bench Farmer ${i}`,
    cooperative_id: 'BENCH',
    district: 'Bulambuli',
    farm:
      i % 2 === 0
        ? { gps: { lat, lng }, area_ha: 2 }
        : { gps: { lat, lng }, area_ha: 12, polygon: { type: 'Polygon', coordinates: [ring] } },
    gfw_status: 'CLEAR',
  } as Farmer;
}

/** Runs the shipment figures; prints one line each. */
export async function shipmentDdsBench(): Promise<void> {
  say(`\nEUDR shipment statement: ${BATCHES} batches from ${FARMERS} farmers (in process + registry sandbox)`);
  const farmers = Array.from({ length: FARMERS }, (_, i) => farmer(i));
  const batches = Array.from({ length: BATCHES }, (_, i) => ({
    batch_id: `BATCH-2026-${String(900000 + i).padStart(6, '0')}`,
    farmer_id: farmers[i % FARMERS]!.farmer_id,
    grade: (i % 3 === 0 ? 'FAQ' : 'screen18') as 'FAQ' | 'screen18',
    stage: 'MILLED' as const,
    outturn_kg: 48.5,
  }));
  const ref = `DDS-PO-BENCH-${Date.now()}`;
  const t0 = performance.now();
  const statement = buildShipmentStatement({
    ddsId: ref,
    internalReferenceNumber: ref,
    purchaseOrderId: 'PO-BENCH',
    batches,
    farmers: new Map(farmers.map((f) => [f.farmer_id, f])),
    operator: {
      name: 'Hamburg Coffee Importers GmbH',
      eori: 'DE123456789012345',
      address: 'Am Sandtorkai 1, 20457 Hamburg',
      email: 'dds@hci.example',
      country: 'DE',
    },
    createdAt: new Date().toISOString(),
  });
  const xml = submitDdsRequestXml(statement);
  const genMs = performance.now() - t0;
  const json = JSON.stringify(statement);
  say(`  generation (statement + XML, geometry rules on ${FARMERS} plots): ${genMs.toFixed(0)} ms`);
  say(
    `  producers ${statement.producers.length}, net ${statement.net_weight_kg} kg; XML ${(Buffer.byteLength(xml) / 1024).toFixed(1)} KiB, JSON record ${(Buffer.byteLength(json) / 1024).toFixed(1)} KiB`,
  );
  const t1 = performance.now();
  const v = await validateSubmitDdsRequest(xml);
  say(
    `  V3 XSD validation: ${v.valid ? 'valid' : `INVALID ${v.errors.slice(0, 2).join('; ')}`} in ${(performance.now() - t1).toFixed(0)} ms`,
  );

  const creds = { username: 'bench', authKey: 'bench-key', clientId: 'eudr-test' };
  const sandbox = await startDdsRegistrySandbox({ ...creds });
  try {
    const registry = new SoapDdsRegistry({ endpoint: sandbox.url, ...creds });
    const t2 = performance.now();
    const { uuid } = await registry.submit(xml, { internalReference: ref });
    const filedMs = performance.now() - t2;
    let status = await registry.status(uuid);
    while (status.status === 'SUBMITTED') {
      await new Promise((r) => setTimeout(r, 250));
      status = await registry.status(uuid);
    }
    say(
      `  filing (SOAP submit, sandbox XSD check): ${filedMs.toFixed(0)} ms; ${status.status} ${(performance.now() - t2).toFixed(0)} ms after filing (sandbox assigns numbers after 1.5 s)`,
    );
  } finally {
    await sandbox.stop();
  }
}
