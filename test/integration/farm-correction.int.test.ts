import { api } from '../support/api';
import { batchBody, purchaseOrderBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Correcting a plot through the API on the local stack (docs/api/eudr.md#correcting-a-plot):
 * PUT /farmers/{id}/farm under registration's geometry rules, audited, safe to repeat, and a
 * statement already generated keeps the plot it was built with.
 */

let ctx: Awaited<ReturnType<typeof setUpCooperative>>;

beforeAll(async () => {
  ctx = await setUpCooperative();
}, 60_000);

// About 0.5 ha round the fixture farm's point in Mbale, 6 decimals.
const ring = [
  [34.17474, 1.07982],
  [34.17545, 1.07982],
  [34.17545, 1.08045],
  [34.17474, 1.08045],
  [34.17474, 1.07982],
];
const corrected = { gps: { lat: 1.080123, lng: 34.175045 }, polygon: { type: 'Polygon', coordinates: [ring] }, area_ha: 0.55 };

describe('PUT /farmers/{id}/farm', () => {
  it('refuses what registration refuses, corrects the plot once (audited, forest-checked), and leaves a generated statement as it was', async () => {
    const farmerId = await registerFarmer(ctx.id, ctx.coop);
    const put = (body: unknown, tok = ctx.agent, id = farmerId) => api('PUT', `/farmers/${id}/farm`, { token: tok, body });

    // Registration's rules, naming the rule.
    const hole = [
      [34.1749, 1.0799],
      [34.175, 1.0799],
      [34.175, 1.08],
      [34.1749, 1.08],
      [34.1749, 1.0799],
    ];
    const withHole = await put({ ...corrected, polygon: { type: 'Polygon', coordinates: [ring, hole] } });
    expect([withHole.status, withHole.body.error.code, withHole.body.error.details[0].rule]).toEqual([
      400,
      'GEOMETRY_RULE_VIOLATED',
      'NO_HOLES',
    ]);
    const tiny = [
      [34.1750001, 1.0800001],
      [34.1750004, 1.0800001],
      [34.1750004, 1.0800004],
      [34.1750001, 1.0800004],
      [34.1750001, 1.0800001],
    ];
    const collapsed = await put({ ...corrected, polygon: { type: 'Polygon', coordinates: [tiny] } });
    expect([collapsed.status, collapsed.body.error.code]).toEqual([400, 'GEOMETRY_RULE_VIOLATED']);
    expect(collapsed.body.error.details.map((d: { rule: string }) => d.rule)).toContain('VALID_AT_6_DECIMALS');
    const bigPoint = await put({ gps: corrected.gps, area_ha: 5 });
    expect([bigPoint.status, bigPoint.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const other = await setUpCooperative();
    expect((await put(corrected, other.coop)).status).toBe(403);
    expect((await put(corrected, ctx.coop, 'UG-NOBODY-1')).body.error.code).toBe('FARMER_NOT_REGISTERED');

    // A statement generated with the registered point.
    const batchId = (await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmerId, ctx.id) })).body.data.batch_id;
    const graded = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } },
    });
    expect(graded.status).toBe(200);
    expect((await api('POST', '/purchase-orders', { token: ctx.coop, body: purchaseOrderBody([batchId]) })).status).toBe(201);
    const gen = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { batch_id: batchId } });
    expect(gen.status).toBe(202);
    const ddsBefore = await api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop });
    const xmlBefore = await api('GET', `/eudr/dds/${gen.body.dds_id}/xml`, { token: ctx.coop });
    expect(ddsBefore.body.geolocation.features[0].geometry.type).toBe('Point');

    // Corrected by the cooperative's agent: the polygon, its area, a new forest check, the change audited.
    const done = await put(corrected);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      farmer_id: farmerId,
      farm: { gps: corrected.gps, polygon: corrected.polygon, area_ha: 0.55, computed_area_ha: expect.any(Number) },
      gfw_status: 'CLEAR',
      farm_updated_at: expect.any(String),
      farm_changes: [
        {
          at: done.body.farm_updated_at,
          actor: `agent-${ctx.id}`,
          actor_role: 'AGENT',
          previous_farm_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
          farm_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        },
      ],
    });
    expect(done.body.farm.computed_area_ha).toBeGreaterThan(0.45);
    expect(done.body.farm.computed_area_ha).toBeLessThan(0.6);
    const read = await api('GET', `/farmers/${farmerId}`, { token: ctx.coop });
    expect(read.body.farm).toEqual(done.body.farm);

    // The same plot again changes nothing.
    const again = await put(corrected, ctx.coop);
    expect(again.status).toBe(200);
    expect(again.body.farm_changes).toEqual(done.body.farm_changes);
    expect(again.body.farm_updated_at).toBe(done.body.farm_updated_at);

    // The statement keeps the plot it was built with: its record and its XML are unchanged.
    const ddsAfter = await api('GET', `/eudr/dds/${gen.body.dds_id}`, { token: ctx.coop });
    expect(ddsAfter.body.geolocation).toEqual(ddsBefore.body.geolocation);
    expect(ddsAfter.body.producers).toEqual(ddsBefore.body.producers);
    expect((await api('GET', `/eudr/dds/${gen.body.dds_id}/xml`, { token: ctx.coop })).body).toBe(xmlBefore.body);
  });
});
