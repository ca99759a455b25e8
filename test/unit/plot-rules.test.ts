import { checkFarmGeolocation } from '../../shared/domain/farm-geometry';
import { DomainError } from '../../shared/domain/errors';
import { insideUganda, truncateCoordinate } from '../../shared/domain/plot-rules';
import { onTheWire } from './support/errors';

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

describe('the EU Information System geometry rules (docs/api/eudr.md#geometry-rules)', () => {
  it('truncates to 6 decimals on the decimal text, not by float arithmetic', () => {
    expect(truncateCoordinate(34.1234569)).toBe(34.123456);
    expect(truncateCoordinate(1.000001)).toBe(1.000001);
    expect(truncateCoordinate(-0.1234567)).toBe(-0.123456);
    expect(truncateCoordinate(34)).toBe(34);
    expect(truncateCoordinate(-0.0000009)).toBe(0);
  });

  it('refuses a polygon that collapses when cut to 6 decimals (rule VALID_AT_6_DECIMALS), 400', () => {
    // Two corners 0.4 µ° apart: distinct at full precision, equal once cut to 6 decimals.
    const ring = [
      [34.4500001, 1.37],
      [34.4500004, 1.37],
      [34.452, 1.371],
      [34.45, 1.372],
      [34.4500001, 1.37],
    ];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [ring] } }));
    expect([err.code, onTheWire(err).status]).toEqual(['GEOMETRY_RULE_VIOLATED', 400]);
    expect(err.details).toEqual([
      { path: 'farm.polygon.coordinates.0', rule: 'VALID_AT_6_DECIMALS', message: expect.stringMatching(/positions 0 and 1 equal/) },
    ]);
    expect(err.message).toMatch(/VALID_AT_6_DECIMALS/);
  });

  it('refuses a polygon that becomes self-intersecting when cut to 6 decimals', () => {
    // A notch 0.1 µ° above the edge a→b: cut to 6 decimals, the corner [34.450005, 1.3700026] drops to
    // 1.370002, below that edge, and the edge from c crosses a→b.
    const ring = [
      [34.45, 1.370002],
      [34.45001, 1.370003],
      [34.45001, 1.37001],
      [34.450005, 1.3700026],
      [34.45, 1.370002],
    ];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 1, polygon: { type: 'Polygon', coordinates: [ring] } }));
    expect(err.details).toEqual([
      { path: 'farm.polygon.coordinates.0', rule: 'VALID_AT_6_DECIMALS', message: expect.stringMatching(/intersects itself/) },
    ]);
  });

  it('refuses a polygon with a hole (rule NO_HOLES)', () => {
    const outer = square(34.45, 1.37, 0.01);
    const hole = [
      [34.452, 1.372],
      [34.453, 1.372],
      [34.453, 1.373],
      [34.452, 1.373],
      [34.452, 1.372],
    ];
    const err = failure(() => checkFarmGeolocation({ gps, area_ha: 50, polygon: { type: 'Polygon', coordinates: [outer, hole] } }));
    expect(err.code).toBe('GEOMETRY_RULE_VIOLATED');
    expect(err.details).toEqual([{ path: 'farm.polygon.coordinates', rule: 'NO_HOLES', message: expect.stringMatching(/1 hole/) }]);
  });

  it('refuses a plot outside Uganda (rule INSIDE_UGANDA): a point in Kenya, swapped coordinates, a polygon corner in Nairobi', () => {
    const nairobi = { lat: -1.2864, lng: 36.8172 };
    const e1 = failure(() => checkFarmGeolocation({ gps: nairobi, area_ha: 1 }));
    expect(e1.details).toEqual([{ path: 'farm.gps', rule: 'INSIDE_UGANDA', message: expect.stringMatching(/outside Uganda/) }]);
    const swapped = { lat: 34.4529, lng: 1.379 };
    expect(failure(() => checkFarmGeolocation({ gps: swapped, area_ha: 1 })).code).toBe('GEOMETRY_RULE_VIOLATED');
    const ring = [
      [34.45, 1.37],
      [36.8172, -1.2864],
      [34.45, 1.38],
      [34.45, 1.37],
    ];
    const e3 = failure(() => checkFarmGeolocation({ gps, area_ha: 50, polygon: { type: 'Polygon', coordinates: [ring] } }));
    expect(e3.details).toEqual([{ path: 'farm.polygon.coordinates.0.1', rule: 'INSIDE_UGANDA', message: expect.any(String) }]);
  });

  it('counts coffee areas near the borders as inside: Mt Elgon, Bundibugyo, West Nile, Kisoro, Lake Victoria islands', () => {
    for (const [lng, lat] of [
      [34.4529, 1.379], // Kapchorwa
      [34.33, 1.0], // Bududa
      [30.06, 0.71], // Bundibugyo
      [30.93, 3.03], // Arua
      [29.69, -1.28], // Kisoro
      [32.25, -0.42], // Kalangala (Ssese islands)
      [34.17, 1.08], // Mbale, the seed farms
    ] as const) {
      expect([lng, lat, insideUganda(lng, lat)]).toEqual([lng, lat, true]);
    }
    for (const [lng, lat] of [
      [36.8172, -1.2864], // Nairobi
      [29.36, -1.94], // Rwanda, Gisenyi
      [31.58, 4.85], // Juba
      [32.9, -2.5], // Mwanza
    ] as const) {
      expect([lng, lat, insideUganda(lng, lat)]).toEqual([lng, lat, false]);
    }
  });

  it('accepts every plot the demo and seed use', () => {
    expect(checkFarmGeolocation({ gps: { lat: 1.08, lng: 34.17 }, area_ha: 2 })).toEqual({ computed_area_ha: null });
    expect(
      checkFarmGeolocation({ gps, area_ha: 5, polygon: { type: 'Polygon', coordinates: [square(34.45, 1.37, 0.002)] } }).computed_area_ha,
    ).toBeGreaterThan(4);
  });
});
