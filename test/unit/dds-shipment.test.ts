import { XMLParser } from 'fast-xml-parser';
import { submitDdsRequestXml } from '../../shared/adapters/eudr/submit-dds-xml';
import { validateSubmitDdsRequest } from '../../shared/adapters/eudr/xsd-validate';
import { buildShipmentStatement, type ShipmentStatementInput } from '../../shared/domain/dds-shipment';
import { DomainError } from '../../shared/domain/errors';
import type { Farmer } from '../../shared/domain/records';
import { onTheWire } from './support/errors';

function farmer(id: string, gps: { lat: number; lng: number }, over: Partial<Farmer> = {}): Farmer {
  return {
    farmer_id: id,
    full_name: `Farmer ${id}`,
    cooperative_id: 'COOP-1',
    district: 'Bulambuli',
    farm: { gps, area_ha: 1.5 },
    gfw_status: 'CLEAR',
    registered_at: '2026-03-01T09:00:00Z',
    registered_by: 'agent-07',
    ...over,
  } as Farmer;
}

const operator = {
  name: 'Hamburg Coffee Importers GmbH',
  eori: 'DE123456789012345',
  address: 'Am Sandtorkai 1, 20457 Hamburg',
  email: 'dds@hci.example',
  country: 'DE',
};
const batch = (n: number, farmerId: string, outturn: number, grade = 'screen18', stage = 'MILLED') => ({
  batch_id: `BATCH-2026-${String(n).padStart(6, '0')}`,
  farmer_id: farmerId,
  grade,
  stage,
  outturn_kg: outturn,
});

function input(farmers: Farmer[], batches: ReturnType<typeof batch>[], over: Partial<ShipmentStatementInput> = {}): ShipmentStatementInput {
  return {
    ddsId: 'DDS-PO-1',
    internalReferenceNumber: 'DDS-PO-1',
    purchaseOrderId: 'PO-1',
    batches: batches as ShipmentStatementInput['batches'],
    farmers: new Map(farmers.map((f) => [f.farmer_id, f])),
    operator,
    createdAt: '2026-11-27T00:00:00.000Z',
    ...over,
  };
}

function failure(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    return e as DomainError;
  }
  throw new Error('expected a DomainError');
}

const A = farmer('F-A', { lat: 1.08, lng: 34.17 });
const B = farmer('F-B', { lat: 1.09, lng: 34.18 });
const C = farmer('F-C', { lat: 1.1, lng: 34.19 });

describe('buildShipmentStatement (docs/api/eudr.md#statement-per-purchase-order)', () => {
  it('names each farmer once with the summed green weight; net mass = Σ outturn_kg; HS 0901; grades in the description; XML valid against V3', async () => {
    const s = buildShipmentStatement(
      input([A, B, C], [batch(1, 'F-A', 100.5), batch(2, 'F-B', 80), batch(3, 'F-A', 90.25, 'FAQ'), batch(4, 'F-C', 70)]),
    );
    expect(s.producers.map((p) => p.farmer_id)).toEqual(['F-A', 'F-B', 'F-C']);
    expect(s.net_weight_kg).toBe(340.75);
    expect(s.producer_net_weights_kg).toEqual({ 'F-A': 190.75, 'F-B': 80, 'F-C': 70 });
    expect(s).toMatchObject({
      batch_id: null,
      purchase_order_id: 'PO-1',
      hs_heading: '0901',
      activity_type: 'IMPORT',
      country_of_activity: 'DE',
    });
    expect(s.batch_ids).toHaveLength(4);
    expect(s.description_of_goods).toMatch(/grades FAQ, screen18, Uganda, purchase order PO-1/);
    const xml = submitDdsRequestXml(s);
    expect(await validateSubmitDdsRequest(xml)).toEqual({ valid: true, errors: [] });
    const parsed = new XMLParser({ removeNSPrefix: true }).parse(xml);
    const commodity = parsed.SubmitDdsRequest.statement.commodities;
    expect(commodity.descriptors.goodsMeasure.netWeight).toBe(340.75);
    expect(commodity.producers).toHaveLength(3);
  });

  it('splits more than 1,000 producers into commodities of 1,000, each with the green weight of its producers; XML valid', async () => {
    const farmers = Array.from({ length: 1001 }, (_, i) => farmer(`F-${i}`, { lat: 1 + i * 0.0001, lng: 34.1 }));
    const s = buildShipmentStatement(
      input(
        farmers,
        farmers.map((f, i) => batch(i + 1, f.farmer_id, i === 1000 ? 5 : 1)),
      ),
    );
    const xml = submitDdsRequestXml(s, { prettyPrint: false });
    expect(await validateSubmitDdsRequest(xml)).toEqual({ valid: true, errors: [] });
    const commodities = new XMLParser({ removeNSPrefix: true }).parse(xml).SubmitDdsRequest.statement.commodities;
    expect(
      commodities.map((c: { position: number; descriptors: { goodsMeasure: { netWeight: number } } }) => [
        c.position,
        c.descriptors.goodsMeasure.netWeight,
      ]),
    ).toEqual([
      [1, 1000],
      [2, 5],
    ]);
    expect(s.net_weight_kg).toBe(1005);
  });

  it('refuses a batch not yet MILLED (BATCH_NOT_ELIGIBLE naming it)', () => {
    const err = failure(() => buildShipmentStatement(input([A], [batch(1, 'F-A', 100), { ...batch(2, 'F-A', 0), stage: 'GRADED' }])));
    expect([err.code, onTheWire(err).status]).toEqual(['BATCH_NOT_ELIGIBLE', 422]);
    expect(err.message).toContain('BATCH-2026-000002 (GRADED)');
  });

  it('refuses flagged farms with 422 GFW_CHECK_FAILED naming every such farmer', () => {
    const flagged = farmer('F-X', { lat: 1.2, lng: 34.2 }, { gfw_status: 'FLAGGED' });
    const pending = farmer('F-Y', { lat: 1.21, lng: 34.2 }, { gfw_status: 'PENDING' });
    const err = failure(() =>
      buildShipmentStatement(input([A, flagged, pending], [batch(1, 'F-A', 1), batch(2, 'F-X', 1), batch(3, 'F-Y', 1)])),
    );
    expect([err.code, onTheWire(err).status]).toEqual(['GFW_CHECK_FAILED', 422]);
    expect(err.details).toEqual({
      farmers: [
        { farmer_id: 'F-X', gfw_status: 'FLAGGED' },
        { farmer_id: 'F-Y', gfw_status: 'PENDING' },
      ],
    });
    expect(err.message).toMatch(/F-X \(FLAGGED\), F-Y \(PENDING\)/);
  });

  it('refuses identical plots of two farmers (422 DUPLICATE_PLOT naming both), also when they differ only beyond 6 decimals', () => {
    const twin = farmer('F-T', { lat: 1.0800004, lng: 34.1700009 });
    const err = failure(() => buildShipmentStatement(input([A, B, twin], [batch(1, 'F-A', 1), batch(2, 'F-B', 1), batch(3, 'F-T', 1)])));
    expect([err.code, onTheWire(err).status]).toEqual(['DUPLICATE_PLOT', 422]);
    expect(err.details).toEqual({ plots: [{ farmer_ids: ['F-A', 'F-T'] }] });
    expect(err.message).toContain('F-A and F-T');
  });

  it('checks the geometry rules again on stored plots (a farm registered before the rules), naming the farmer', () => {
    const kenyan = farmer('F-K', { lat: -1.2864, lng: 36.8172 });
    const err = failure(() => buildShipmentStatement(input([A, kenyan], [batch(1, 'F-A', 1), batch(2, 'F-K', 1)])));
    expect([err.code, onTheWire(err).status]).toEqual(['GEOMETRY_RULE_VIOLATED', 400]);
    expect(err.details).toEqual([{ path: 'producers.F-K.farm.gps', rule: 'INSIDE_UGANDA', message: expect.any(String) }]);
    expect(err.message).toMatch(/^Farm of farmer F-K/);
  });

  it('refuses above the limits: producers and bytes of geolocation (422 DDS_TOO_LARGE)', () => {
    const many = input([A, B, C], [batch(1, 'F-A', 1), batch(2, 'F-B', 1), batch(3, 'F-C', 1)], {
      limits: { maxProducers: 2, maxGeolocationBytes: 1e6 },
    });
    const e1 = failure(() => buildShipmentStatement(many));
    expect([e1.code, onTheWire(e1).status, e1.details]).toEqual(['DDS_TOO_LARGE', 422, { producers: 3, max_producers: 2 }]);
    const big = input([A, B, C], [batch(1, 'F-A', 1), batch(2, 'F-B', 1), batch(3, 'F-C', 1)], {
      limits: { maxProducers: 10, maxGeolocationBytes: 500 },
    });
    const e2 = failure(() => buildShipmentStatement(big));
    expect(e2.code).toBe('DDS_TOO_LARGE');
    expect((e2.details as { geolocation_bytes: number }).geolocation_bytes).toBeGreaterThan(500);
  });
});
