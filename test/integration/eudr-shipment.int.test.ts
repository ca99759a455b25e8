import { createHash } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { validateSubmitDdsRequest } from '../../shared/adapters/eudr/xsd-validate';
import { api, DDS_XML_INLINE_MAX_BYTES, stackUrl, uid, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * A statement per purchase order on the local stack (docs/api/eudr.md#statement-per-purchase-order):
 * batches of several farmers milled, sold on one confirmed order, one statement naming each
 * producer once with the summed green weight, XML valid against the V3 schema, AVAILABLE with its
 * numbers; a large statement's XML by a presigned link (docs/api/eudr.md#large-statements); refusals for an unconfirmed order, two identical plots and a body naming both forms.
 */

const BUYER = {
  name: 'Hamburg Coffee Importers GmbH',
  eori: 'DE123456789012345',
  address: 'Am Sandtorkai 1, 20457 Hamburg',
  email: 'dds@hci.example',
  country: 'DE',
};

let ctx: Awaited<ReturnType<typeof setUpCooperative>>;

async function farmerAt(lat: number, lng: number): Promise<string> {
  const id = uid('UG-SHP');
  const res = await api('POST', '/farmers/register', {
    token: ctx.coop,
    body: {
      farmer_id: id,
      full_name: `Shipment Farmer ${id}`,
      cooperative_id: ctx.id,
      district: 'Bulambuli',
      farm: { gps: { lat, lng }, area_ha: 1.2 },
    },
  });
  if (res.status !== 201) throw new Error(`farmer: ${res.status} ${JSON.stringify(res.body)}`);
  return id;
}

/**
 * A farmer whose plot is a polygon of `corners` corners on a circle of 400 m around (lat, lng)
 * (about 50 ha), coordinates with 6 decimals: a large plot, as a statement of big farms carries.
 */
async function polygonFarmerAt(lat: number, lng: number, corners: number): Promise<string> {
  const id = uid('UG-BIG');
  const dLat = 400 / 111_320;
  const dLng = dLat / Math.cos((lat * Math.PI) / 180);
  const ring = Array.from({ length: corners }, (_, i) => {
    const a = (2 * Math.PI * i) / corners;
    return [Number((lng + dLng * Math.cos(a)).toFixed(6)), Number((lat + dLat * Math.sin(a)).toFixed(6))];
  });
  ring.push(ring[0]!);
  const res = await api('POST', '/farmers/register', {
    token: ctx.coop,
    body: {
      farmer_id: id,
      full_name: `Large Plot Farmer ${id}`,
      cooperative_id: ctx.id,
      district: 'Bulambuli',
      farm: { gps: { lat, lng }, area_ha: 50, polygon: { type: 'Polygon', coordinates: [ring] } },
    },
  });
  if (res.status !== 201) throw new Error(`farmer: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
  return id;
}

async function milledBatch(farmerId: string, outturn: number, grade = 'screen18'): Promise<string> {
  const res = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmerId, ctx.id, { grade }) });
  const batchId: string = res.body.data?.batch_id ?? res.body.batch_id;
  await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.status === 200,
    20_000,
  );
  for (const [stage, evidence] of [
    ['GRADED', { grade, moisture_pct: 11 }],
    ['MILLED', { mill_id: 'M1', outturn_kg: outturn }],
  ] as const) {
    const r = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: stage, evidence },
    });
    if (r.status !== 200 && r.status !== 202) throw new Error(`${stage}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.body.stage === 'MILLED',
    20_000,
  );
  return batchId;
}

async function order(batchIds: string[], confirm = true): Promise<string> {
  const po = await api('POST', '/purchase-orders', {
    token: ctx.coop,
    body: { batch_ids: batchIds, buyer: BUYER.name, price_usd_per_kg: 6.4, buyer_operator: BUYER },
  });
  if (po.status !== 201) throw new Error(`purchase order: ${po.status} ${JSON.stringify(po.body)}`);
  if (confirm) expect((await api('POST', `/purchase-orders/${po.body.purchase_order_id}/confirm`, { token: ctx.coop })).status).toBe(200);
  return po.body.purchase_order_id;
}

beforeAll(async () => {
  ctx = await setUpCooperative();
}, 60_000);

describe('a statement per purchase order', () => {
  it('names each producer once with the summed green weight, validates, becomes AVAILABLE', async () => {
    const [a, b, c] = [await farmerAt(1.2011, 34.3011), await farmerAt(1.2022, 34.3022), await farmerAt(1.2033, 34.3033)];
    const batches = [await milledBatch(a, 100.5), await milledBatch(b, 80, 'FAQ'), await milledBatch(a, 90.25), await milledBatch(c, 70)];
    const poId = await order(batches, false);

    const early = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { purchase_order_id: poId } });
    expect([early.status, early.body.error.code]).toEqual([422, 'PO_NOT_CONFIRMED']);
    expect((await api('POST', `/purchase-orders/${poId}/confirm`, { token: ctx.coop })).status).toBe(200);

    const both = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { purchase_order_id: poId, batch_id: batches[0] } });
    expect([both.status, both.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const other = await setUpCooperative();
    expect((await api('POST', '/eudr/generate-dds', { token: other.coop, body: { purchase_order_id: poId } })).status).toBe(403);
    const unknown = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { purchase_order_id: 'PO-NOT-THERE' } });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'PO_NOT_FOUND']);

    const t0 = Date.now();
    const gen = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { purchase_order_id: poId } });
    expect(gen.status).toBe(202);
    expect(gen.body).toMatchObject({ error: { code: 'DDS_TRACES_PENDING' }, dds_id: `DDS-${poId}`, status: 'PENDING_FILING' });
    const again = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { purchase_order_id: poId } });
    expect(again.body.dds_id).toBe(gen.body.dds_id);

    const xml = await api('GET', `/eudr/dds/${gen.body.dds_id}/xml`, { token: ctx.coop });
    // Below DDS_XML_INLINE_MAX_BYTES: the XML itself, as an attachment.
    expect([xml.status, xml.headers.get('content-disposition')]).toEqual([200, `attachment; filename="${gen.body.dds_id}.xml"`]);
    expect(await validateSubmitDdsRequest(xml.body as string)).toEqual({ valid: true, errors: [] });
    const commodity = new XMLParser({ removeNSPrefix: true }).parse(xml.body as string).SubmitDdsRequest.statement.commodities;
    expect(xml.body as string).toContain('<dds:hsHeading>0901</dds:hsHeading>');
    expect(commodity.descriptors.goodsMeasure.netWeight).toBe(340.75);
    expect(commodity.producers).toHaveLength(3);

    const available = await waitFor(
      () => api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'AVAILABLE',
      30_000,
      200,
    );
    expect(available.body).toMatchObject({
      batch_id: null,
      purchase_order_id: poId,
      batch_ids: batches,
      net_weight_kg: 340.75,
      hs_heading: '0901',
      description_of_goods: expect.stringMatching(/grades FAQ, screen18/),
      reference_number: expect.stringMatching(/^\d{2}DE[A-Z0-9]{10}$/),
      verification_number: expect.stringMatching(/^[A-Z0-9]{8}$/),
    });
    expect(available.body.producers.map((p: { farmer_id: string; net_weight_kg: number }) => [p.farmer_id, p.net_weight_kg])).toEqual([
      [a, 190.75],
      [b, 80],
      [c, 70],
    ]);
    process.stdout.write(`purchase order DDS ${gen.body.dds_id} AVAILABLE ${Date.now() - t0} ms after generation\n`);

    // The numbers reach every covered batch: GET /batch/{id}, its audit log (DDS_AVAILABLE, hash-chained), the public trace page.
    const numbers = {
      dds_id: gen.body.dds_id,
      reference_number: available.body.reference_number,
      verification_number: available.body.verification_number,
    };
    for (const b of batches) {
      const batch = await waitFor(
        () => api('GET', `/batch/${b}`, { token: ctx.coop }),
        (r) => r.body.dds !== null,
        20_000,
        200,
      );
      expect(batch.body.dds).toEqual({ ...numbers, status: 'AVAILABLE', withdrawn_at: null });
      // Anchored like any entry: verified once the next periodic anchor covers it.
      const audit = await waitFor(
        () => api('GET', `/batch/${b}/audit`, { token: ctx.coop }),
        (r) => r.body.verified === true,
        30_000,
        500,
      ).catch(async (e) => {
        const last = await api('GET', `/batch/${b}/audit`, { token: ctx.coop });
        throw new Error(`${(e as Error).message}: ${JSON.stringify(last.body.checks ?? last.body).slice(0, 1500)}`);
      });
      const entries = audit.body.entries.filter((e: { type: string }) => e.type === 'DDS_AVAILABLE');
      expect(entries.map((e: { payload: unknown }) => e.payload)).toEqual([numbers]);
      expect(entries[0].anchor).not.toBeNull();
      const trace = await api('GET', `/trace/${b}`, { headers: { accept: 'application/json' } });
      expect([trace.body.dds_reference_number, trace.body.dds_verification_number, trace.body.dds_status]).toEqual([
        numbers.reference_number,
        numbers.verification_number,
        'AVAILABLE',
      ]);
    }
    const html = await api('GET', `/trace/${batches[0]}`, { headers: { accept: 'text/html' } });
    expect(String(html.body)).toContain(numbers.reference_number);

    // Amended (rebuilt from the records, V3 amendDds): SUBMITTED again, then AVAILABLE with the same reference number.
    expect((await api('POST', `/eudr/dds/${gen.body.dds_id}/amend`, { token: other.coop })).status).toBe(403);
    const amended = await api('POST', `/eudr/dds/${gen.body.dds_id}/amend`, { token: ctx.coop });
    expect([amended.status, amended.body.status]).toEqual([200, 'SUBMITTED']);
    const reavailable = await waitFor(
      () => api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'AVAILABLE',
      30_000,
      200,
    );
    expect(reavailable.body.reference_number).toBe(available.body.reference_number);
    expect(reavailable.body.verification_number).toBe(available.body.verification_number);
    const afterAmend = await api('GET', `/batch/${batches[0]}/audit`, { token: ctx.coop });
    expect(afterAmend.body.entries.filter((e: { type: string }) => e.type === 'DDS_AVAILABLE')).toHaveLength(1);

    // Withdrawn (V3 withdrawDds): WITHDRAWN; a second withdrawal or an amendment is refused.
    const withdrawn = await api('POST', `/eudr/dds/${gen.body.dds_id}/withdraw`, { token: ctx.coop });
    expect([withdrawn.status, withdrawn.body.status, withdrawn.body.reference_number]).toEqual([
      200,
      'WITHDRAWN',
      available.body.reference_number,
    ]);
    // The withdrawal reaches every covered batch: `dds.status` WITHDRAWN beside the numbers, a DDS_WITHDRAWN audit entry (anchored), the trace page.
    const withdrawnAt = (await api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop })).body;
    for (const b of batches) {
      const batch = await waitFor(
        () => api('GET', `/batch/${b}`, { token: ctx.coop }),
        (r) => r.body.dds?.status === 'WITHDRAWN',
        30_000,
        200,
      );
      expect(batch.body.dds).toEqual({ ...numbers, status: 'WITHDRAWN', withdrawn_at: expect.any(String) });
      const audit = await waitFor(
        () => api('GET', `/batch/${b}/audit`, { token: ctx.coop }),
        (r) => r.body.verified === true && r.body.entries.some((e: { type: string }) => e.type === 'DDS_WITHDRAWN'),
        30_000,
        500,
      );
      const entries = audit.body.entries.filter((e: { type: string }) => e.type === 'DDS_WITHDRAWN');
      expect(entries.map((e: { payload: unknown }) => e.payload)).toEqual([{ ...numbers, withdrawn_at: batch.body.dds.withdrawn_at }]);
      expect(entries[0].anchor).not.toBeNull();
      const trace = await api('GET', `/trace/${b}`, { headers: { accept: 'application/json' } });
      expect([trace.body.dds_reference_number, trace.body.dds_status]).toEqual([numbers.reference_number, 'WITHDRAWN']);
    }
    expect(withdrawnAt.status).toBe('WITHDRAWN');
    const withdrawnHtml = await api('GET', `/trace/${batches[0]}`, { headers: { accept: 'text/html' } });
    expect(String(withdrawnHtml.body)).toContain('<strong>withdrawn</strong>: no longer valid');
    const twice = await api('POST', `/eudr/dds/${gen.body.dds_id}/withdraw`, { token: ctx.coop });
    expect([twice.status, twice.body.error.code]).toEqual([422, 'DDS_NOT_AVAILABLE']);
    const late = await api('POST', `/eudr/dds/${gen.body.dds_id}/amend`, { token: ctx.coop });
    expect([late.status, late.body.error.code]).toEqual([422, 'DDS_NOT_AVAILABLE']);
  }, 240_000);

  it("keeps a statement over DynamoDB's 400 KB item limit: generated, filed, AVAILABLE, its XML served", async () => {
    const farmers = [
      await polygonFarmerAt(1.25, 34.25, 2200),
      await polygonFarmerAt(1.27, 34.25, 2200),
      await polygonFarmerAt(1.29, 34.25, 2200),
    ];
    const batches = [await milledBatch(farmers[0]!, 61), await milledBatch(farmers[1]!, 62), await milledBatch(farmers[2]!, 63)];
    const poId = await order(batches);
    const t0 = Date.now();
    const gen = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { purchase_order_id: poId } });
    expect([gen.status, gen.body.error?.code]).toEqual([202, 'DDS_TRACES_PENDING']);
    const generatedMs = Date.now() - t0;
    const available = await waitFor(
      () => api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'AVAILABLE',
      60_000,
      250,
    );
    expect(available.body.producers.map((p: { farmer_id: string }) => p.farmer_id)).toEqual(farmers);
    expect(
      available.body.geolocation.features.map((f: { geometry: { coordinates: number[][][] } }) => f.geometry.coordinates[0]!.length),
    ).toEqual([2201, 2201, 2201]);
    // Above the stack's DDS_XML_INLINE_MAX_BYTES: 303 to a presigned URL of the kept document, named in the body too.
    const link = await fetch(`${stackUrl()}/eudr/dds/${gen.body.dds_id}/xml`, {
      headers: { authorization: `Bearer ${ctx.coop}` },
      redirect: 'manual',
    });
    expect([link.status, link.headers.get('cache-control')]).toEqual([303, 'no-store']);
    const linkBody = (await link.json()) as { dds_id: string; xml_url: string; size_bytes: number; sha256: string; expires_at: string };
    expect(linkBody).toMatchObject({ dds_id: gen.body.dds_id, xml_url: link.headers.get('location') });
    expect(linkBody.size_bytes).toBeGreaterThan(DDS_XML_INLINE_MAX_BYTES);
    expect(Date.parse(linkBody.expires_at) - Date.now()).toBeGreaterThan(200_000);
    // The URL needs no token and serves exactly the recorded bytes.
    const doc = await fetch(linkBody.xml_url);
    expect(doc.status).toBe(200);
    const docBytes = Buffer.from(await doc.arrayBuffer());
    expect([docBytes.byteLength, createHash('sha256').update(docBytes).digest('hex')]).toEqual([linkBody.size_bytes, linkBody.sha256]);
    // A client that follows redirects (fetch drops the Authorization header on the way to another origin) gets the same XML.
    const xml = await api('GET', `/eudr/dds/${gen.body.dds_id}/xml`, { token: ctx.coop });
    expect(xml.status).toBe(200);
    expect(xml.body).toBe(docBytes.toString('utf8'));
    expect(await validateSubmitDdsRequest(xml.body as string)).toEqual({ valid: true, errors: [] });
    // What the table item held inline before: the statement with its producers and plots, and the XML.
    const xmlBytes = Buffer.byteLength(xml.body as string);
    const statementBytes = Buffer.byteLength(JSON.stringify(available.body)) + xmlBytes;
    expect(statementBytes).toBeGreaterThan(400 * 1024);
    process.stdout.write(
      `large statement ${gen.body.dds_id}: statement + XML ${Math.round(statementBytes / 1024)} KiB (XML ${Math.round(xmlBytes / 1024)} KiB); generated in ${generatedMs} ms, AVAILABLE ${Date.now() - t0} ms after the request\n`,
    );
  }, 240_000);

  it('refuses to amend or withdraw a statement the Information System reports locked (422 DDS_LOCKED)', async () => {
    const a = await farmerAt(1.2111, 34.3111);
    const poId = await order([await milledBatch(a, 60)]);
    const gen = await api('POST', '/eudr/generate-dds', {
      token: ctx.coop,
      body: { purchase_order_id: poId, description: 'Green coffee beans, Uganda, cleared CUSTOMS-LOCK' },
    });
    expect(gen.status).toBe(202);
    await waitFor(
      () => api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'AVAILABLE',
      30_000,
      200,
    );
    for (const op of ['amend', 'withdraw']) {
      const res = await api('POST', `/eudr/dds/${gen.body.dds_id}/${op}`, { token: ctx.coop });
      expect([op, res.status, res.body.error.code]).toEqual([op, 422, 'DDS_LOCKED']);
    }
  });

  it('refuses two farmers with identical plots (422 DUPLICATE_PLOT naming both)', async () => {
    // The fixture registers every farmer on the same point.
    const [x, y] = [await registerFarmer(ctx.id, ctx.coop), await registerFarmer(ctx.id, ctx.coop)];
    const poId = await order([await milledBatch(x, 50), await milledBatch(y, 60)]);
    const res = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { purchase_order_id: poId } });
    expect([res.status, res.body.error.code]).toEqual([422, 'DUPLICATE_PLOT']);
    expect(res.body.error.details).toEqual({ plots: [{ farmer_ids: [x, y] }] });
  });
});
