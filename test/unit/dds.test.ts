import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { parseOperatorAddress, submitDdsRequestXml } from '../../shared/adapters/eudr/submit-dds-xml';
import { validateSubmitDdsRequest } from '../../shared/adapters/eudr/xsd-validate';
import {
  buildDueDiligenceStatement,
  formatCoordinate,
  serializeGeoJson,
  type BuildDdsInput,
  type PlotFeatureCollection,
} from '../../shared/domain/dds';
import { DomainError } from '../../shared/domain/errors';
import type { Farmer } from '../../shared/domain/records';
import { repoRoot } from '../../shared/runtime/paths';

const sample = readFileSync(join(repoRoot(), 'test', 'fixtures', 'eudr', 'sample-submit-dds-request.xml'), 'utf8');

/** Every number inside the `coordinates` arrays of a GeoJSON text. */
function coordinateTexts(geojsonText: string): string[] {
  const out: string[] = [];
  for (const m of geojsonText.matchAll(/"coordinates":(\[[\d\s.,\-[\]]*\])/g)) out.push(...(m[1]!.match(/-?\d+(?:\.\d+)?/g) ?? []));
  return out;
}

/** Planar approximation of a small lng/lat ring's area in hectares (good to < 1 % at plot scale). */
function ringAreaHa(ring: number[][]): number {
  const lat0 = (ring[0]![1]! * Math.PI) / 180;
  const mPerDegLat = 110_574;
  const mPerDegLng = 111_320 * Math.cos(lat0);
  let twice = 0;
  for (let i = 0; i + 1 < ring.length; i++) {
    const [x1, y1] = ring[i]!;
    const [x2, y2] = ring[i + 1]!;
    twice += x1! * mPerDegLng * (y2! * mPerDegLat) - x2! * mPerDegLng * (y1! * mPerDegLat);
  }
  return Math.abs(twice) / 2 / 10_000;
}

function farmer(over: Partial<Farmer> & Pick<Farmer, 'farmer_id' | 'full_name' | 'farm'>): Farmer {
  return {
    cooperative_id: 'COOP-BUGISU-01',
    district: 'Bulambuli',
    gfw_status: 'CLEAR',
    gfw_checked_at: '2026-09-20T08:00:00Z',
    gfw_dataset: { name: 'gfw_integrated_alerts', version: 'v20260915' },
    registered_at: '2026-03-01T09:00:00Z',
    registered_by: 'agent-07',
    ...over,
  };
}

// Mt Elgon (Bugisu) plots. The polygon is ≈ 250 m × 199 m ≈ 4.98 ha; 34.233700 has trailing zeros on purpose.
const polygonRing = [
  [34.231457, 1.142318],
  [34.2337, 1.142318],
  [34.2337, 1.144118],
  [34.231457, 1.144118],
  [34.231457, 1.142318],
];
const polygonFarmer = farmer({
  farmer_id: 'UGF-000451',
  full_name: 'Wanyenze Margaret',
  farm: { gps: { lat: 1.143218, lng: 34.232578 }, polygon: { type: 'Polygon', coordinates: [polygonRing] }, area_ha: 5 },
});
const pointFarmer = farmer({
  farmer_id: 'UGF-000452',
  full_name: 'Masaba Peter',
  district: 'Sironko',
  farm: { gps: { lat: 1.2, lng: 34.2751234 }, area_ha: 1.8 },
});

function input(over: Partial<BuildDdsInput> = {}): BuildDdsInput {
  return {
    ddsId: 'DDS-01JD8Z3Q4W6Y8A0C2E4G6J8K9M',
    internalReferenceNumber: 'UG-COOP-BUGISU-01-B-2026-000123',
    batch: { batch_id: 'B-2026-000123', weight_kg: 19200.25, grade: 'screen18', cooperative_id: 'COOP-BUGISU-01', stage: 'WAREHOUSED' },
    producers: [{ farmer: polygonFarmer }, { farmer: pointFarmer }],
    operator: {
      name: 'Hanseatische Kaffee Import GmbH',
      eori: 'DE123456789012345',
      address: 'Am Sandtorkai 5, 20457 Hamburg',
      email: 'eudr@hanse-kaffee.example.de',
      country: 'DE',
    },
    destinationCountry: 'DE',
    createdAt: '2026-10-01T10:15:00Z',
    ...over,
  };
}

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof DomainError ? err.code : `not a DomainError: ${String(err)}`;
  }
  return undefined;
}

describe('validateSubmitDdsRequest (EUDR DDS V3 schema, xmllint-wasm)', () => {
  it('accepts the shared sample request', async () => {
    await expect(validateSubmitDdsRequest(sample)).resolves.toEqual({ valid: true, errors: [] });
  });

  it('rejects the sample without its required hsHeading, naming the element', async () => {
    const broken = sample.replace(/\s*<dds:hsHeading>0901<\/dds:hsHeading>/, '');
    expect(broken).not.toContain('hsHeading');
    const r = await validateSubmitDdsRequest(broken);
    expect(r.valid).toBe(false);
    expect(r.errors.join('\n')).toMatch(/Expected is \( \{[^}]+\}hsHeading \)/);
  });

  it('rejects the sample with countryOfActivity and borderCrossCountry swapped (sequence order)', async () => {
    const broken = sample.replace(
      /(<dds:countryOfActivity>DE<\/dds:countryOfActivity>)(\s*)(<dds:borderCrossCountry>DE<\/dds:borderCrossCountry>)/,
      '$3$2$1',
    );
    expect(broken).not.toBe(sample);
    const r = await validateSubmitDdsRequest(broken);
    expect(r.valid).toBe(false);
    expect(r.errors.join('\n')).toMatch(/countryOfActivity': This element is not expected/);
  });

  it('rejects a missing geometryGeojson, a bad hsHeading, a wrong namespace and a non-XML text', async () => {
    const noGeometry = await validateSubmitDdsRequest(sample.replace(/\s*<dds:geometryGeojson>[^<]*<\/dds:geometryGeojson>/, ''));
    expect(noGeometry.valid).toBe(false);
    expect(noGeometry.errors.join('\n')).toContain('geometryGeojson');

    const badHs = await validateSubmitDdsRequest(sample.replace('<dds:hsHeading>0901<', '<dds:hsHeading>09O1<'));
    expect(badHs.valid).toBe(false);
    expect(badHs.errors.join('\n')).toContain('hsHeading');

    const wrongNs = await validateSubmitDdsRequest(sample.replace('eudr/common/v3', 'eudr/common/v2'));
    expect(wrongNs.valid).toBe(false);

    const notXml = await validateSubmitDdsRequest('<dds:SubmitDdsRequest><oops></dds:SubmitDdsRequest>');
    expect(notXml.valid).toBe(false);
    expect(notXml.errors.length).toBeGreaterThan(0);
  });
});

describe('buildDueDiligenceStatement', () => {
  const dds = buildDueDiligenceStatement(input());

  it('fills the docs/api/eudr.md#due-diligence-statements record for an importer in Germany', () => {
    expect(dds).toMatchObject({
      dds_id: 'DDS-01JD8Z3Q4W6Y8A0C2E4G6J8K9M',
      batch_id: 'B-2026-000123',
      internal_reference_number: 'UG-COOP-BUGISU-01-B-2026-000123',
      activity_type: 'IMPORT',
      country_of_activity: 'DE',
      country_of_entry: 'DE',
      operator: { name: 'Hanseatische Kaffee Import GmbH', eori: 'DE123456789012345', country: 'DE' },
      hs_heading: '0901',
      net_weight_kg: 19200.25,
      country_of_production: 'UG',
      created_at: '2026-10-01T10:15:00Z',
    });
    expect(dds.description_of_goods).toContain('screen18');
    expect(dds.description_of_goods.length).toBeLessThanOrEqual(150);
    expect(dds.producers.map((p) => [p.farmer_id, p.name, p.country])).toEqual([
      ['UGF-000451', 'Wanyenze Margaret', 'UG'],
      ['UGF-000452', 'Masaba Peter', 'UG'],
    ]);
    expect(dds.geolocation.type).toBe('FeatureCollection');
    expect(dds.geolocation.features.map((f) => f.geometry.type)).toEqual(['Polygon', 'Point']);
  });

  it('declares the > 4 ha farm by its polygon and the ≤ 4 ha farm as a point with its Area', () => {
    expect(ringAreaHa(polygonRing)).toBeGreaterThan(4);
    const [poly, point] = dds.producers.map((p) => p.geolocation_geojson.features[0]!);
    expect(poly!.geometry).toEqual({ type: 'Polygon', coordinates: [polygonRing] });
    expect(poly!.properties).toEqual({ ProducerName: 'Wanyenze Margaret', ProducerCountry: 'UG', ProductionPlace: 'Bulambuli, Uganda' });
    expect(point!.geometry).toEqual({ type: 'Point', coordinates: [34.2751234, 1.2] }); // [lng, lat]
    expect(point!.properties).toEqual({
      ProducerName: 'Masaba Peter',
      ProducerCountry: 'UG',
      ProductionPlace: 'Sironko, Uganda',
      Area: 1.8,
    });
  });

  it('encodes each plot as base64 GeoJSON FeatureCollection text with ≥ 6 decimals per coordinate', () => {
    for (const p of dds.producers) {
      const text = Buffer.from(p.geolocation_base64, 'base64').toString('utf8');
      const parsed = JSON.parse(text) as PlotFeatureCollection;
      expect(parsed).toEqual(p.geolocation_geojson);
      expect(text).toBe(serializeGeoJson(p.geolocation_geojson));
      const coords = coordinateTexts(text);
      expect(coords.length).toBeGreaterThanOrEqual(2);
      for (const c of coords) expect(c).toMatch(/^-?\d+\.\d{6,}$/);
    }
    const polygonText = Buffer.from(dds.producers[0]!.geolocation_base64, 'base64').toString('utf8');
    expect(polygonText).toContain('[34.233700,1.142318]');
    const pointText = Buffer.from(dds.producers[1]!.geolocation_base64, 'base64').toString('utf8');
    expect(pointText).toContain('"coordinates":[34.2751234,1.200000]');
  });

  it('refuses ineligible input with the spec codes', () => {
    expect(code(() => buildDueDiligenceStatement(input({ batch: { ...input().batch, stage: 'DELIVERED' } })))).toBe('BATCH_NOT_ELIGIBLE');
    expect(code(() => buildDueDiligenceStatement(input({ batch: { ...input().batch, stage: null } })))).toBe('BATCH_NOT_ELIGIBLE');
    expect(code(() => buildDueDiligenceStatement(input({ producers: [{ farmer: { ...pointFarmer, gfw_status: 'FLAGGED' } }] })))).toBe(
      'GFW_CHECK_FAILED',
    );
    const bigPoint = { ...pointFarmer, farm: { gps: pointFarmer.farm.gps, area_ha: 4.5 } };
    expect(code(() => buildDueDiligenceStatement(input({ producers: [{ farmer: bigPoint }] })))).toBe('VALIDATION_ERROR');
    const openRing = {
      ...polygonFarmer,
      farm: { ...polygonFarmer.farm, polygon: { type: 'Polygon' as const, coordinates: [polygonRing.slice(0, 4)] } },
    };
    expect(code(() => buildDueDiligenceStatement(input({ producers: [{ farmer: openRing }] })))).toBe('VALIDATION_ERROR');
    expect(code(() => buildDueDiligenceStatement(input({ destinationCountry: 'UG' })))).toBe('VALIDATION_ERROR');
    expect(code(() => buildDueDiligenceStatement(input({ destinationCountry: 'GB' })))).toBe('VALIDATION_ERROR');
    expect(code(() => buildDueDiligenceStatement(input({ producers: [] })))).toBe('VALIDATION_ERROR');
    expect(code(() => buildDueDiligenceStatement(input({ internalReferenceNumber: 'x'.repeat(51) })))).toBe('VALIDATION_ERROR');
    expect(code(() => buildDueDiligenceStatement(input({ description: 'x'.repeat(151) })))).toBe('VALIDATION_ERROR');
  });

  it('formats coordinates with at least 6 decimals and never an exponent', () => {
    expect(formatCoordinate(34.2337)).toBe('34.233700');
    expect(formatCoordinate(1)).toBe('1.000000');
    expect(formatCoordinate(-0.5)).toBe('-0.500000');
    expect(formatCoordinate(34.12345678)).toBe('34.12345678');
    expect(formatCoordinate(1e-7)).toMatch(/^0\.0000001\d*$/);
    expect(() => formatCoordinate(Number.NaN)).toThrow(RangeError);
  });
});

describe('submitDdsRequestXml', () => {
  const dds = buildDueDiligenceStatement(input());

  it('produces a SubmitDdsRequest that validates and carries the statement', async () => {
    const xml = submitDdsRequestXml(dds);
    await expect(validateSubmitDdsRequest(xml)).resolves.toEqual({ valid: true, errors: [] });
    expect(xml).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\s*<dds:SubmitDdsRequest xmlns:dds="http:\/\/ec\.europa\.eu\/tracesnt\/certificate\/eudr\/due-diligence-statement\/v3"/,
    );
    expect(xml).toContain('<dds:operatorRole>OPERATOR</dds:operatorRole>');
    expect(xml).toContain('<dds:activityType>IMPORT</dds:activityType>');
    expect(xml).toContain('<dds:countryOfActivity>DE</dds:countryOfActivity>');
    expect(xml).toContain('<dds:borderCrossCountry>DE</dds:borderCrossCountry>');
    expect(xml).toContain('<dds:hsHeading>0901</dds:hsHeading>');
    expect(xml).toContain('<eudrCommon:netWeight>19200.25</eudrCommon:netWeight>');
    expect(xml).toContain('<dds:geoLocationConfidential>false</dds:geoLocationConfidential>');
    expect(xml.match(/<dds:country>UG<\/dds:country>/g)).toHaveLength(2);
    expect(xml).toContain('<dds:name>Wanyenze Margaret</dds:name>');
    expect(xml).toContain('<dds:name>Masaba Peter</dds:name>');

    const geometries = [...xml.matchAll(/<dds:geometryGeojson>([^<]+)<\/dds:geometryGeojson>/g)].map((m) => m[1]!);
    expect(geometries).toEqual(dds.producers.map((p) => p.geolocation_base64));
    const decoded = geometries.map((g) => Buffer.from(g, 'base64').toString('utf8'));
    for (const text of decoded) {
      const fc = JSON.parse(text) as PlotFeatureCollection;
      expect(fc.type).toBe('FeatureCollection');
      expect(fc.features).toHaveLength(1);
      for (const c of coordinateTexts(text)) expect(c).toMatch(/^-?\d+\.\d{6,}$/);
    }
    expect((JSON.parse(decoded[0]!) as PlotFeatureCollection).features[0]!.geometry.type).toBe('Polygon');
    expect((JSON.parse(decoded[1]!) as PlotFeatureCollection).features[0]!.geometry.type).toBe('Point');
  });

  it('follows the sample element order', () => {
    const xml = submitDdsRequestXml(dds);
    const order = [
      'operatorRole',
      'statement',
      'internalReferenceNumber',
      'activityType',
      'countryOfActivity',
      'borderCrossCountry',
      'commodities',
      'position',
      'descriptors',
      'descriptionOfGoods',
      'goodsMeasure',
      'netWeight',
      'hsHeading',
      'producers',
      'geoLocationConfidential',
    ];
    const at = order.map((name) => xml.search(new RegExp(`<(dds|eudrCommon):${name}>`)));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it('as REPRESENTATIVE_OPERATOR names the importer (EORI, address, email) and still validates', async () => {
    const xml = submitDdsRequestXml(dds, { operatorRole: 'REPRESENTATIVE_OPERATOR', comment: 'Lot of 320 bags, Mombasa → Hamburg' });
    await expect(validateSubmitDdsRequest(xml)).resolves.toEqual({ valid: true, errors: [] });
    expect(xml).toContain('<eudrCommon:identifierType>eori</eudrCommon:identifierType>');
    expect(xml).toContain('<eudrCommon:identifierValue>DE123456789012345</eudrCommon:identifierValue>');
    expect(xml).toContain('<eudrCommon:postalCode>20457</eudrCommon:postalCode>');
    expect(xml).toContain('<eudrCommon:operatorName>Hanseatische Kaffee Import GmbH</eudrCommon:operatorName>');
    expect(xml).toContain('Mombasa → Hamburg');
  });

  it('rounds a net weight to the schema’s 6 decimals and escapes text', async () => {
    const odd = buildDueDiligenceStatement(
      input({
        batch: { ...input().batch, weight_kg: 1234.12345678 },
        description: 'Arabica <Bugisu> & "AA"',
      }),
    );
    const xml = submitDdsRequestXml(odd, { prettyPrint: false });
    expect(xml).toContain('<eudrCommon:netWeight>1234.123457</eudrCommon:netWeight>');
    expect(xml).toContain('Arabica &lt;Bugisu&gt; &amp; "AA"');
    await expect(validateSubmitDdsRequest(xml)).resolves.toEqual({ valid: true, errors: [] });
  });

  it('escapes every markup character in text, so <&>"\' and a literal "&amp;" read back unchanged', async () => {
    const description = `Bugisu <AA> & "screen 18" 'washed' &amp; a]]>b`;
    const name = `O'Neil & <Sons> "Mbale"`;
    const odd = buildDueDiligenceStatement(input({ description }));
    for (const prettyPrint of [true, false]) {
      const xml = submitDdsRequestXml(
        { ...odd, operator: { ...odd.operator, name } },
        { prettyPrint, operatorRole: 'REPRESENTATIVE_OPERATOR', comment: '<&>"\'' },
      );
      expect(xml).toContain(`>Bugisu &lt;AA&gt; &amp; "screen 18" 'washed' &amp;amp; a]]&gt;b</eudrCommon:descriptionOfGoods>`);
      expect(xml).toContain(`<dds:comment>&lt;&amp;&gt;"'</dds:comment>`);
      await expect(validateSubmitDdsRequest(xml)).resolves.toEqual({ valid: true, errors: [] });
      const back = new XMLParser({ parseTagValue: false, trimValues: false }).parse(xml) as {
        'dds:SubmitDdsRequest': {
          'dds:statement': Record<string, unknown> & {
            'dds:representedOperator': { 'eudrCommon:operatorName': string };
            'dds:commodities': { 'dds:descriptors': { 'eudrCommon:descriptionOfGoods': string } };
          };
        };
      };
      const statement = back['dds:SubmitDdsRequest']['dds:statement'];
      expect(statement['dds:commodities']['dds:descriptors']['eudrCommon:descriptionOfGoods']).toBe(description);
      expect(statement['dds:representedOperator']['eudrCommon:operatorName']).toBe(name);
      expect(statement['dds:comment']).toBe('<&>"\'');
    }
  });

  it('splits a one-line EU address for the structured address type', () => {
    expect(parseOperatorAddress('Am Sandtorkai 5, 20457 Hamburg', 'DE')).toMatchObject({
      street: 'Am Sandtorkai 5',
      postalCode: '20457',
      city: 'Hamburg',
    });
    expect(parseOperatorAddress('Keizersgracht 1, 1015 CJ Amsterdam, Netherlands', 'NL')).toMatchObject({
      postalCode: '1015 CJ',
      city: 'Amsterdam',
    });
    expect(parseOperatorAddress('Somewhere in Hamburg', 'DE')).toBeNull();
  });
});
