import { area as turfArea } from '@turf/area';
import { DomainError } from '../../shared/domain/errors';
import { checkFarmGeolocation, pointFarmCircle } from '../../shared/domain/farm-geometry';
import { onTheWire } from './support/errors';

/** Runs `fn`, expecting a DomainError; returns it. */
function failure(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    return e as DomainError;
  }
  throw new Error('expected a DomainError');
}

const gps = { lat: 1.379, lng: 34.4529 };
const square = (lng: number, lat: number, d: number) => [
  [lng, lat],
  [lng + d, lat],
  [lng + d, lat + d],
  [lng, lat + d],
  [lng, lat],
];

/**
 * Independent area (m²) of a small polygon: equirectangular projection about the mean latitude on a
 * sphere of the mean Earth radius, then the shoelace formula. For a plot a few hundred metres across
 * the projection's error is far below 0.01 %.
 */
function planarAreaM2(ring: number[][]): number {
  const R = 6_371_008.8;
  const rad = Math.PI / 180;
  const lat0 = (ring.reduce((s, p) => s + (p[1] as number), 0) / ring.length) * rad;
  const xy = ring.map(([lng, lat]) => [R * Math.cos(lat0) * (lng as number) * rad, R * (lat as number) * rad] as const);
  let twice = 0;
  for (let i = 0; i < xy.length - 1; i++) {
    const [x1, y1] = xy[i]!;
    const [x2, y2] = xy[i + 1]!;
    twice += x1 * y2 - x2 * y1;
  }
  return Math.abs(twice) / 2;
}

describe('checkFarmGeolocation (docs/api/eudr.md#farm-geolocation)', () => {
  it('refuses a farm of more than 4 ha without a polygon (400, details at farm.polygon)', () => {
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 4.5 }));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(onTheWire(err).status).toBe(400);
    expect(err.message).toMatch(/more than 4 ha must have a polygon/);
    expect(err.details).toEqual([{ path: 'farm.polygon', message: expect.stringMatching(/more than 4 ha must have a polygon/) }]);
  });

  it('accepts a point farm of 4 ha or less', () => {
    expect(checkFarmGeolocation({ gps, area_ha: 4 })).toEqual({ computed_area_ha: null });
    expect(checkFarmGeolocation({ gps: { lat: 0.43, lng: 32.95 }, area_ha: 0.8 })).toEqual({ computed_area_ha: null });
  });

  it('refuses an open ring', () => {
    const ring = square(34.45, 1.37, 0.001)
      .slice(0, 4)
      .concat([[34.4501, 1.3701]]);
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [ring] } }));
    expect(err.details).toEqual([
      { path: 'farm.polygon.coordinates.0', message: 'ring is not closed: the first and last positions differ' },
    ]);
    expect(err.message).toContain('farm.polygon.coordinates.0: ring is not closed');
  });

  it('refuses a ring of 3 positions', () => {
    const ring = [
      [34.45, 1.37],
      [34.451, 1.37],
      [34.45, 1.37],
    ];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [ring] } }));
    expect(err.details).toEqual([
      { path: 'farm.polygon.coordinates.0', message: expect.stringMatching(/3 positions; a closed ring needs at least 4/) },
    ]);
  });

  it('refuses a self-intersecting (bow-tie) polygon', () => {
    const bowTie = [
      [34.45, 1.37],
      [34.452, 1.372],
      [34.452, 1.37],
      [34.45, 1.372],
      [34.45, 1.37],
    ];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [bowTie] } }));
    expect(err.details).toEqual([
      {
        path: 'farm.polygon.coordinates.0',
        message: expect.stringMatching(/self-intersecting: its edges cross at \[34\.451000, 1\.371000\]/),
      },
    ]);
  });

  it('refuses a hole that crosses the outer ring (boolean-valid) and a ring that encloses no area', () => {
    const outer = square(34.45, 1.37, 0.01);
    const hole = [
      [34.455, 1.375],
      [34.465, 1.375],
      [34.465, 1.376],
      [34.455, 1.376],
      [34.455, 1.375],
    ];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 50, polygon: { type: 'Polygon', coordinates: [outer, hole] } }));
    expect(err.details).toEqual([{ path: 'farm.polygon.coordinates', message: expect.stringMatching(/not a valid simple polygon/) }]);
    const flat = [
      [34.45, 1.37],
      [34.451, 1.37],
      [34.452, 1.37],
      [34.45, 1.37],
    ];
    expect(failure(() => checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [flat] } })).details).toEqual([
      { path: 'farm.polygon.coordinates', message: 'polygon encloses no area' },
    ]);
  });

  it('refuses latitude and longitude out of range, in the GPS point and in polygon positions', () => {
    const gpsErr = failure(() => checkFarmGeolocation({ gps: { lat: 91, lng: 181 }, area_ha: 1 }));
    expect(gpsErr.details).toEqual([
      { path: 'farm.gps.lat', message: expect.stringMatching(/between -90 and 90/) },
      { path: 'farm.gps.lng', message: expect.stringMatching(/between -180 and 180/) },
    ]);
    const ring = [
      [34.45, 1.37],
      [190, 1.37],
      [34.452, 95],
      [34.45, 1.37],
    ];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [ring] } }));
    expect(err.details).toEqual([
      { path: 'farm.polygon.coordinates.0.1.0', message: expect.stringMatching(/longitude 190 is outside -180\.\.180/) },
      { path: 'farm.polygon.coordinates.0.2.1', message: expect.stringMatching(/latitude 95 is outside -90\.\.90/) },
    ]);
  });

  it('refuses positions that are not numbers, and accepts coordinates with fewer than 6 decimals', () => {
    const ring = [
      [34.45, 1.37],
      ['34.452', 1.37],
      [34.452, 1.372],
      [34.45, 1.37],
    ] as unknown as number[][];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [ring] } }));
    expect(err.details).toEqual([{ path: 'farm.polygon.coordinates.0.1', message: 'position must be [lng, lat], two numbers' }]);
    const coarse = square(34.45, 1.37, 0.003); // 3-decimal corners, about 11 ha
    expect(
      checkFarmGeolocation({ gps, area_ha: 11, polygon: { type: 'Polygon', coordinates: [coarse] } }).computed_area_ha,
    ).toBeGreaterThan(10);
  });

  it('computes the geodesic area of a realistic 5.2 ha Mt Elgon plot within 0.5 % of an independent value', () => {
    // Kapchorwa district, on Mt Elgon's western slopes; 7 corners, 6-decimal positions.
    const ring = [
      [34.45173, 1.37842],
      [34.452805, 1.37822],
      [34.453881, 1.378511],
      [34.454117, 1.379495],
      [34.453461, 1.380288],
      [34.452386, 1.38037],
      [34.451566, 1.379522],
      [34.45173, 1.37842],
    ];
    const { computed_area_ha } = checkFarmGeolocation({
      gps: { lat: 1.3793, lng: 34.4528 },
      area_ha: 5.2,
      polygon: { type: 'Polygon', coordinates: [ring] },
    });
    const independentHa = planarAreaM2(ring) / 10_000;
    expect(computed_area_ha).not.toBeNull();
    expect(Math.abs(computed_area_ha! - independentHa) / independentHa).toBeLessThan(0.005);
    expect(computed_area_ha).toBeCloseTo(5.2, 1);
    expect(computed_area_ha).toBe(Math.round(computed_area_ha! * 1e4) / 1e4); // 4 decimals
  });

  it('refuses a repeated GPS fix in a ring (400 GEOMETRY_RULE_VIOLATED, rule NO_REPEATED_POSITION): the EU Information System refuses it', () => {
    const ring = [
      [34.45, 1.37],
      [34.452, 1.37],
      [34.452, 1.37],
      [34.452, 1.372],
      [34.45, 1.372],
      [34.45, 1.37],
    ];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [ring] } }));
    expect([err.code, onTheWire(err).status]).toEqual(['GEOMETRY_RULE_VIOLATED', 400]);
    expect(err.details).toEqual([{ path: 'farm.polygon.coordinates.0.2', rule: 'NO_REPEATED_POSITION', message: expect.any(String) }]);
    const clean = ring.filter((_, j) => j !== 2);
    expect(checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [clean] } }).computed_area_ha).toBeGreaterThan(
      4.9,
    );
  });
});

describe('pointFarmCircle', () => {
  it('is a closed 64-step circle polygon round the point whose area is the declared area within 1 %', () => {
    const poly = pointFarmCircle({ lat: 0.43, lng: 32.95 }, 2.5);
    expect(poly.type).toBe('Polygon');
    const ring = poly.coordinates[0]!;
    expect(ring).toHaveLength(65);
    expect(ring[0]).toEqual(ring[64]);
    const ha = turfArea(poly) / 10_000;
    expect(Math.abs(ha - 2.5) / 2.5).toBeLessThan(0.01);
  });

  it('refuses a non-positive area', () => {
    expect(failure(() => pointFarmCircle({ lat: 0.43, lng: 32.95 }, 0)).details).toEqual([
      { path: 'farm.area_ha', message: expect.any(String) },
    ]);
  });
});
