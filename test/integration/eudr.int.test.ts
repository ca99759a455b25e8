import { validateSubmitDdsRequest } from '../../shared/adapters/eudr/xsd-validate';
import { api, uid, waitFor } from '../support/api';
import { batchBody, purchaseOrderBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * EUDR on the local stack (issue "EUDR compliance"): farm geolocation rules at registration, the
 * forest check (the flagged test point of docs/api/registries.md#forest-check), and a batch taken to GRADED whose due
 * diligence statement validates against the Information System's schema, is answered 202
 * DDS_TRACES_PENDING, becomes AVAILABLE with its reference and verification numbers, and stays
 * private: its CID is not served by /ipfs.
 */

describe('EUDR', () => {
  let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
  beforeAll(async () => {
    ctx = await setUpCooperative();
  });

  it('applies the farm geolocation rules at registration and records the polygon area', async () => {
    const farm = (over: Record<string, unknown>) => ({
      farmer_id: uid('UG-KAP'),
      full_name: 'Chebet Rose',
      cooperative_id: ctx.id,
      district: 'Kapchorwa',
      farm: { gps: { lat: 1.396245, lng: 34.450118 }, area_ha: 5.2, ...over },
    });
    const noPolygon = await api('POST', '/farmers/register', { token: ctx.coop, body: farm({}) });
    expect([noPolygon.status, noPolygon.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(noPolygon.body.error.details[0].path).toBe('farm.polygon');
    const bowTie = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: farm({
        polygon: {
          type: 'Polygon',
          coordinates: [
            [
              [34.45, 1.396],
              [34.452, 1.398],
              [34.452, 1.396],
              [34.45, 1.398],
              [34.45, 1.396],
            ],
          ],
        },
      }),
    });
    expect([bowTie.status, bowTie.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const ring = [
      [34.4491, 1.3953],
      [34.45135, 1.3953],
      [34.45135, 1.39738],
      [34.4491, 1.39738],
      [34.4491, 1.3953],
    ];
    const ok = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: farm({ polygon: { type: 'Polygon', coordinates: [ring] } }),
    });
    expect(ok.status).toBe(201);
    expect(ok.body.farm.computed_area_ha).toBeGreaterThan(5);
    expect(ok.body.farm.computed_area_ha).toBeLessThan(6);
    expect(ok.body.gfw_status).toBe('CLEAR');
  });

  it('refuses plots the EU Information System would reject: a hole, a polygon collapsing at 6 decimals, a point over 4 ha, a plot outside Uganda (400 naming the rule)', async () => {
    const body = (farm: Record<string, unknown>) => ({
      farmer_id: uid('UG-GEO'),
      full_name: 'Geometry Farmer',
      cooperative_id: ctx.id,
      district: 'Kapchorwa',
      farm: { gps: { lat: 1.396245, lng: 34.450118 }, area_ha: 5.2, ...farm },
    });
    const outer = [
      [34.4491, 1.3953],
      [34.45135, 1.3953],
      [34.45135, 1.39738],
      [34.4491, 1.39738],
      [34.4491, 1.3953],
    ];
    const hole = [
      [34.4495, 1.3955],
      [34.4497, 1.3955],
      [34.4497, 1.3957],
      [34.4495, 1.3957],
      [34.4495, 1.3955],
    ];
    const holed = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: body({ polygon: { type: 'Polygon', coordinates: [outer, hole] } }),
    });
    expect([holed.status, holed.body.error.code, holed.body.error.details[0].rule]).toEqual([400, 'GEOMETRY_RULE_VIOLATED', 'NO_HOLES']);
    const collapsing = [
      [34.4500001, 1.396],
      [34.4500004, 1.396],
      [34.452, 1.397],
      [34.45, 1.398],
      [34.4500001, 1.396],
    ];
    const cut = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: body({ area_ha: 3, polygon: { type: 'Polygon', coordinates: [collapsing] } }),
    });
    expect([cut.status, cut.body.error.code, cut.body.error.details[0].rule]).toEqual([
      400,
      'GEOMETRY_RULE_VIOLATED',
      'VALID_AT_6_DECIMALS',
    ]);
    const bigPoint = await api('POST', '/farmers/register', { token: ctx.coop, body: body({ area_ha: 4.01 }) });
    expect([bigPoint.status, bigPoint.body.error.code, bigPoint.body.error.details[0].path]).toEqual([
      400,
      'VALIDATION_ERROR',
      'farm.polygon',
    ]);
    const kenya = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: body({ gps: { lat: -1.2864, lng: 36.8172 }, area_ha: 1 }),
    });
    expect([kenya.status, kenya.body.error.code, kenya.body.error.details[0].rule]).toEqual([
      400,
      'GEOMETRY_RULE_VIOLATED',
      'INSIDE_UGANDA',
    ]);
    expect(kenya.body.error.message).toMatch(/INSIDE_UGANDA/);
  });

  it('flags the Mabira test point and re-checks a farm with POST /eudr/verify-gfw', async () => {
    const flagged = uid('UG-MUK');
    await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: {
        farmer_id: flagged,
        full_name: 'Mabira Farmer',
        cooperative_id: ctx.id,
        district: 'Mukono',
        farm: { gps: { lat: 0.43, lng: 32.95 }, area_ha: 2 },
      },
    });
    const check = await api('POST', '/eudr/verify-gfw', { token: ctx.coop, body: { farmer_id: flagged } });
    expect(check.status).toBe(200);
    expect(check.body).toMatchObject({
      farmer_id: flagged,
      status: 'FLAGGED',
      cutoff_date: '2020-12-31',
      dataset: { name: expect.any(String), version: expect.any(String) },
    });
    expect(check.body.alerts.length).toBeGreaterThan(0);
    expect((await api('POST', '/eudr/verify-gfw', { token: ctx.agent, body: { farmer_id: flagged } })).status).toBe(403);
    const review = await api('GET', `/cooperatives/${ctx.id}/flagged-farms`, { token: ctx.coop });
    expect(review.body.farmers.map((f: { farmer_id: string }) => f.farmer_id)).toContain(flagged);
    expect((await api('POST', '/eudr/verify-gfw', { token: ctx.coop, body: { farmer_id: 'UG-NOBODY' } })).body.error.code).toBe(
      'FARMER_NOT_REGISTERED',
    );
  });

  it('generates, validates and files the DDS of a GRADED batch, and keeps it private', async () => {
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000888');
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    const batchId = submit.body.data.batch_id;
    const early = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { batch_id: batchId } });
    expect([early.status, early.body.error.code]).toEqual([422, 'BATCH_NOT_ELIGIBLE']);
    const graded = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } },
    });
    expect(graded.status).toBe(200);
    await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: purchaseOrderBody([batchId]),
    });

    const t0 = Date.now();
    const gen = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { batch_id: batchId } });
    expect(gen.status).toBe(202);
    expect(gen.body).toMatchObject({
      error: { code: 'DDS_TRACES_PENDING' },
      dds_id: expect.stringMatching(/^DDS-/),
      status: 'PENDING_FILING',
    });
    const again = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { batch_id: batchId } });
    expect(again.body.dds_id).toBe(gen.body.dds_id);

    const xml = await api('GET', `/eudr/dds/${gen.body.dds_id}/xml`, { token: ctx.coop });
    expect(xml.headers.get('content-type')).toContain('application/xml');
    const validation = await validateSubmitDdsRequest(xml.body as string);
    expect(validation).toEqual({ valid: true, errors: [] });
    expect(xml.body).toContain('0901');

    const available = await waitFor(
      () => api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'AVAILABLE',
      20_000,
      200,
    );
    expect(available.body).toMatchObject({
      status: 'AVAILABLE',
      batch_id: batchId,
      hs_heading: '0901',
      country_of_production: 'UG',
      reference_number: expect.stringMatching(/^\d{2}DE[A-Z0-9]{10}$/),
      verification_number: expect.stringMatching(/^[A-Z0-9]{8}$/),
      ipfs_cid: expect.stringMatching(/^bafy/),
    });
    process.stdout.write(`DDS ${gen.body.dds_id} AVAILABLE ${Date.now() - t0} ms after generation\n`);

    // Full names and exact plots: not on the public /ipfs route (404 as for an unknown CID).
    for (const path of ['', '/dds.xml', '/dds.json']) {
      const res = await api('GET', `/ipfs/${available.body.ipfs_cid}${path}`);
      expect([res.status, res.body.error.code]).toEqual([404, 'ROUTE_NOT_FOUND']);
    }

    const other = await setUpCooperative();
    expect((await api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: other.coop })).status).toBe(403);
  });
});

describe('national farmer registry (MAAIF) at registration', () => {
  it('refuses an ID the registry does not know, and completes a registration once the registry answers', async () => {
    const ctx = await setUpCooperative();
    const farm = { gps: { lat: 1.080123, lng: 34.175045 }, area_ha: 1.2 };
    const unknown = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: { farmer_id: uid('UG-UNKNOWN'), full_name: 'Nobody', cooperative_id: ctx.id, district: 'Mbale', farm },
    });
    expect([unknown.status, unknown.body.error.code, unknown.body.error.details[0].path]).toEqual([400, 'VALIDATION_ERROR', 'farmer_id']);

    // The sandbox drops the first lookups of UG-OFFLINE ids: 202, then the job completes
    const id = uid('UG-OFFLINE');
    const pending = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: { farmer_id: id, full_name: 'Wabwire John', cooperative_id: ctx.id, phone: '+256772000654', district: 'Mbale', farm },
    });
    expect(pending.status).toBe(202);
    expect(pending.body).toMatchObject({ error: { code: 'MAAIF_API_UNAVAILABLE' }, job_id: expect.stringMatching(/^JOB-/) });
    const early = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(id, ctx.id) });
    expect([early.status, early.body.error.code]).toEqual([404, 'FARMER_NOT_REGISTERED']);
    const job = await waitFor(
      () => api('GET', `/jobs/${pending.body.job_id}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETE',
      20_000,
      200,
    );
    expect(job.body).toMatchObject({ status: 'COMPLETE', farmer_id: id, type: 'FARMER_REGISTRATION' });
    const farmer = await api('GET', `/farmers/${id}`, { token: ctx.coop });
    expect(farmer.body.national_registry_status).toBe('VERIFIED');
    const later = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(id, ctx.id) });
    expect(later.status).toBe(201);
  });

  it('rejects a pending registration once the registry answers that it does not know the ID', async () => {
    const ctx = await setUpCooperative();
    const farm = { gps: { lat: 1.080123, lng: 34.175045 }, area_ha: 1.2 };
    // The sandbox drops the first lookups of UG-OFFLINE-UNKNOWN ids, then answers 404
    const id = uid('UG-OFFLINE-UNKNOWN');
    const pending = await api('POST', '/farmers/register', {
      token: ctx.coop,
      body: { farmer_id: id, full_name: 'Nakato Sarah', cooperative_id: ctx.id, phone: '+256772000655', district: 'Mbale', farm },
    });
    expect(pending.status).toBe(202);
    expect(pending.body).toMatchObject({ error: { code: 'MAAIF_API_UNAVAILABLE' }, job_id: expect.stringMatching(/^JOB-/) });
    const job = await waitFor(
      () => api('GET', `/jobs/${pending.body.job_id}`, { token: ctx.coop }),
      (r) => r.body.status !== 'PENDING',
      20_000,
      200,
    );
    expect(job.body).toMatchObject({
      status: 'FAILED',
      farmer_id: id,
      type: 'FARMER_REGISTRATION',
      error: { code: 'FARMER_NOT_REGISTERED' },
    });
    const farmer = await api('GET', `/farmers/${id}`, { token: ctx.coop });
    expect(farmer.body.national_registry_status).toBe('REJECTED');
    const refused = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(id, ctx.id) });
    expect([refused.status, refused.body.error.code]).toEqual([404, 'FARMER_NOT_REGISTERED']);
  });
});
