/**
 * Farm geolocation rules (docs/api/eudr.md#farm-geolocation, EUDR Art. 2(28)): WGS84 GeoJSON in `[lng, lat]` order; a
 * farm of more than 4 ha must be mapped as a polygon (closed ring, at least 4 positions, not
 * self-intersecting); a farm of 4 ha or less may give only its GPS point. When a polygon is given,
 * its geodesic area is computed (@turf/area, spherical, Earth radius 6,371,008.8 m) and recorded
 * beside the declared `area_ha`.
 *
 * Coordinates with fewer than 6 decimals are accepted as they are (they are kept and emitted with at
 * least 6 decimals elsewhere); every position must be a pair of numbers.
 */

import { createHash } from 'node:crypto';
import { area as turfArea } from '@turf/area';
import { booleanValid } from '@turf/boolean-valid';
import { circle } from '@turf/circle';
import { kinks } from '@turf/kinks';
import { DomainError, type ErrorDetail } from './errors';
import { assertPlotRules } from './plot-rules';

/** A farm location: a point, and optionally a GeoJSON polygon ([lng, lat] order). */
export interface FarmLocation {
  gps: { lat: number; lng: number };
  polygon?: { type: 'Polygon'; coordinates: number[][][] };
  area_ha: number;
}

/** A farm larger than this (hectares) must have a polygon (docs/api/eudr.md#due-diligence-statements; same value as the DDS rule). */
const POINT_FARM_MAX_AREA_HA = 4;
/**
 * Most positions accepted in one polygon. Self-intersection and validity checks are quadratic in the
 * number of positions (5,000 take about a third of a second); a GPS walk round a smallholding has a
 * few hundred.
 */
const MAX_POLYGON_POSITIONS = 5_000;
/** Vertices of the polygon that stands for a point farm's circle. */
const POINT_FARM_CIRCLE_STEPS = 64;

export interface GeoJsonPolygonGeometry {
  type: 'Polygon';
  coordinates: number[][][];
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const samePosition = (a: number[], b: number[]) => a[0] === b[0] && a[1] === b[1];
const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

function invalid(details: ErrorDetail[]): DomainError {
  const message = details.map((d) => `${d.path}: ${d.message}`).join('; ');
  return new DomainError('VALIDATION_ERROR', `Farm geolocation is invalid: ${message}.`, { details });
}

/**
 * Checks a farm's geolocation against docs/api/eudr.md#farm-geolocation and computes the polygon's area.
 *
 * Input: `{gps: {lat, lng} (degrees), polygon?: GeoJSON Polygon ([lng, lat] positions), area_ha}`.
 * Returns `{computed_area_ha}`: the polygon's geodesic area in hectares rounded to 4 decimals, or
 * `null` for a point farm.
 *
 * Rules, in order; each violation is reported as `details: [{path, message}]`:
 * 1. `farm.gps.lat` in −90..90, `farm.gps.lng` in −180..180; `farm.area_ha` a positive number.
 * 2. More than 4 ha without a polygon → `farm.polygon` "a farm of more than 4 ha must have a polygon".
 * 3. Polygon structure: `type` "Polygon"; at least one ring; each ring (`farm.polygon.coordinates.<i>`)
 *    has at least 4 positions and is closed (first = last); each position (`…<i>.<j>`) is `[lng, lat]`
 *    of numbers in range; at most {@link MAX_POLYGON_POSITIONS} positions.
 * 4. Topology (checked once the structure is sound; repeated consecutive positions are ignored here):
 *    no ring crosses itself (@turf/kinks), the polygon is a valid simple polygon (@turf/boolean-valid:
 *    no spikes, holes not crossing the outer ring) and encloses a non-zero area.
 * 5. The EU Information System's rules (./plot-rules.ts): no holes, no repeated consecutive position,
 *    still valid once cut to 6 decimals, every position and the GPS point inside Uganda.
 *
 * @throws DomainError `VALIDATION_ERROR` (400) naming the broken rule(s) of 1–4;
 *   `GEOMETRY_RULE_VIOLATED` (400, details `[{path, rule, message}]`) for rule 5.
 */
export function checkFarmGeolocation(farm: FarmLocation): { computed_area_ha: number | null } {
  const details: ErrorDetail[] = [];
  const gps = (farm as { gps?: unknown }).gps as { lat?: unknown; lng?: unknown } | undefined;
  if (!isFiniteNumber(gps?.lat) || gps.lat < -90 || gps.lat > 90) {
    details.push({ path: 'farm.gps.lat', message: 'latitude must be a number between -90 and 90' });
  }
  if (!isFiniteNumber(gps?.lng) || gps.lng < -180 || gps.lng > 180) {
    details.push({ path: 'farm.gps.lng', message: 'longitude must be a number between -180 and 180' });
  }
  if (!isFiniteNumber(farm.area_ha) || farm.area_ha <= 0) {
    details.push({ path: 'farm.area_ha', message: 'declared area must be a positive number of hectares' });
  }
  const polygon = farm.polygon as unknown;
  if (polygon === undefined || polygon === null) {
    if (isFiniteNumber(farm.area_ha) && farm.area_ha > POINT_FARM_MAX_AREA_HA) {
      details.push({
        path: 'farm.polygon',
        message: `a farm of more than ${POINT_FARM_MAX_AREA_HA} ha must have a polygon (declared area ${farm.area_ha} ha); a GPS point is enough only up to ${POINT_FARM_MAX_AREA_HA} ha`,
      });
    }
    if (details.length > 0) throw invalid(details);
    assertPlotRules(farm, 'farm');
    return { computed_area_ha: null };
  }

  const rings = checkPolygonStructure(polygon, details);
  if (details.length > 0 || !rings) throw invalid(details);
  checkPolygonTopology(rings, details);
  if (details.length > 0) throw invalid(details);

  const m2 = turfArea({ type: 'Polygon', coordinates: rings });
  if (!(m2 > 0)) throw invalid([{ path: 'farm.polygon.coordinates', message: 'polygon encloses no area' }]);
  assertPlotRules({ gps: farm.gps, polygon: { coordinates: rings } }, 'farm');
  return { computed_area_ha: round4(m2 / 10_000) };
}

/** Rule 3: shape, ring length, closure, positions. Returns the rings when the structure is sound. */
function checkPolygonStructure(polygon: unknown, details: ErrorDetail[]): number[][][] | null {
  if (typeof polygon !== 'object' || polygon === null || Array.isArray(polygon)) {
    details.push({ path: 'farm.polygon', message: 'polygon must be a GeoJSON Polygon object' });
    return null;
  }
  const p = polygon as { type?: unknown; coordinates?: unknown };
  if (p.type !== 'Polygon') details.push({ path: 'farm.polygon.type', message: 'type must be "Polygon"' });
  if (!Array.isArray(p.coordinates) || p.coordinates.length === 0) {
    details.push({ path: 'farm.polygon.coordinates', message: 'coordinates must be an array of linear rings, the outer ring first' });
    return null;
  }
  let total = 0;
  p.coordinates.forEach((ring: unknown, i) => {
    const path = `farm.polygon.coordinates.${i}`;
    if (!Array.isArray(ring)) {
      details.push({ path, message: 'ring must be an array of [lng, lat] positions' });
      return;
    }
    total += ring.length;
    let positionsOk = true;
    ring.forEach((pos: unknown, j) => {
      const at = `${path}.${j}`;
      if (!Array.isArray(pos) || pos.length !== 2 || !isFiniteNumber(pos[0]) || !isFiniteNumber(pos[1])) {
        details.push({ path: at, message: 'position must be [lng, lat], two numbers' });
        positionsOk = false;
        return;
      }
      if (pos[0] < -180 || pos[0] > 180) {
        details.push({ path: `${at}.0`, message: `longitude ${pos[0]} is outside -180..180 (positions are [lng, lat])` });
        positionsOk = false;
      }
      if (pos[1] < -90 || pos[1] > 90) {
        details.push({ path: `${at}.1`, message: `latitude ${pos[1]} is outside -90..90 (positions are [lng, lat])` });
        positionsOk = false;
      }
    });
    if (ring.length < 4) {
      details.push({
        path,
        message: `ring has ${ring.length} positions; a closed ring needs at least 4 (3 corners and the first repeated last)`,
      });
    } else if (positionsOk && !samePosition(ring[0] as number[], ring[ring.length - 1] as number[])) {
      details.push({ path, message: 'ring is not closed: the first and last positions differ' });
    }
  });
  if (total > MAX_POLYGON_POSITIONS) {
    details.push({
      path: 'farm.polygon.coordinates',
      message: `polygon has ${total} positions; at most ${MAX_POLYGON_POSITIONS} are accepted`,
    });
  }
  return details.length === 0 ? (p.coordinates as number[][][]) : null;
}

/** Drops a position equal to the one before it (a GPS walk often repeats a fix). */
function withoutRepeats(ring: number[][]): number[][] {
  return ring.filter((pos, j) => j === 0 || !samePosition(pos, ring[j - 1] as number[]));
}

/** Rule 4: no self-intersection, a valid simple polygon. */
function checkPolygonTopology(rings: number[][][], details: ErrorDetail[]): void {
  const cleaned = rings.map(withoutRepeats);
  cleaned.forEach((ring, i) => {
    const path = `farm.polygon.coordinates.${i}`;
    if (ring.length < 4) {
      details.push({ path, message: 'ring has fewer than 3 distinct corners, so it encloses no area' });
      return;
    }
    const crossings = kinks({ type: 'Polygon', coordinates: [ring] }).features;
    const first = crossings[0];
    if (first) {
      const [x, y] = first.geometry.coordinates as [number, number];
      details.push({ path, message: `polygon is self-intersecting: its edges cross at [${x.toFixed(6)}, ${y.toFixed(6)}]` });
    }
  });
  if (details.length > 0) return;
  if (!booleanValid({ type: 'Polygon', coordinates: cleaned })) {
    details.push({
      path: 'farm.polygon.coordinates',
      message: 'polygon is not a valid simple polygon: an edge folds back on itself (spike) or a hole crosses the outer ring',
    });
  }
}

/**
 * The polygon standing for a point farm when querying forest alerts (docs/api/eudr.md#forest-check: a point farm is
 * buffered to a circle of its declared area): a circle centred on `gps` ({lat, lng}, degrees) of
 * radius √(area_ha × 10,000 / π) metres, drawn by @turf/circle with 64 vertices (the inscribed
 * 64-gon's area is 0.16 % below the circle's). Returns a GeoJSON Polygon ([lng, lat] positions).
 * @throws DomainError `VALIDATION_ERROR` when `area_ha` is not a positive number or `gps` is out of range.
 */
export function pointFarmCircle(gps: { lat: number; lng: number }, area_ha: number): GeoJsonPolygonGeometry {
  const details: ErrorDetail[] = [];
  if (!isFiniteNumber(gps.lat) || gps.lat < -90 || gps.lat > 90)
    details.push({ path: 'farm.gps.lat', message: 'latitude must be a number between -90 and 90' });
  if (!isFiniteNumber(gps.lng) || gps.lng < -180 || gps.lng > 180)
    details.push({ path: 'farm.gps.lng', message: 'longitude must be a number between -180 and 180' });
  if (!isFiniteNumber(area_ha) || area_ha <= 0)
    details.push({ path: 'farm.area_ha', message: 'declared area must be a positive number of hectares' });
  if (details.length > 0) throw invalid(details);
  const radiusM = Math.sqrt((area_ha * 10_000) / Math.PI);
  const feature = circle([gps.lng, gps.lat], radiusM, { steps: POINT_FARM_CIRCLE_STEPS, units: 'meters' });
  return { type: 'Polygon', coordinates: feature.geometry.coordinates };
}

/** Decimals of a public coordinate: 3 (0.001° ≈ 111 m of latitude), so no public view pins a farm to better than about 110 m. */
const PUBLIC_COORDINATE_DECIMALS = 3;

/** A coordinate (degrees) rounded to {@link PUBLIC_COORDINATE_DECIMALS} decimals, as every public view shows it. */
export function publicCoordinate(deg: number): number {
  const f = 10 ** PUBLIC_COORDINATE_DECIMALS;
  // Rounding the scaled value then dividing gives the shortest decimal (0.123, not 0.12300000000000001); `+ 0` turns -0 into 0.
  return Math.round(deg * f) / f + 0;
}

/**
 * The farm's plot as anyone without a token may see it (the public trace page and its JSON): a
 * GeoJSON Polygon ([lng, lat]) whose every coordinate is rounded to 3 decimals (about 110 m). A
 * registered polygon has its positions rounded; a farm registered as a point gets the circle of its
 * declared area drawn round the ROUNDED point (then rounded too), so the circle's centre cannot be
 * recovered from its outline. The exact plot stays private (the DDS and the cooperative's views).
 * Errors: as {@link pointFarmCircle} for an invalid point or area.
 */
export function publicPlotGeometry(farm: {
  gps: { lat: number; lng: number };
  area_ha: number;
  polygon?: GeoJsonPolygonGeometry | null;
}): GeoJsonPolygonGeometry {
  const rounded = farm.polygon
    ? farm.polygon.coordinates
    : pointFarmCircle({ lat: publicCoordinate(farm.gps.lat), lng: publicCoordinate(farm.gps.lng) }, farm.area_ha).coordinates;
  return { type: 'Polygon', coordinates: rounded.map((ring) => ring.map((p) => p.map(publicCoordinate))) };
}

/**
 * The SHA-256 (hex) of a farm's plot: the JSON of `{gps: {lat, lng}, polygon (null for a point farm),
 * area_ha}` in that key order, so the same plot always gives the same digest whatever order its
 * record's keys were stored in. Identifies a plot in the audit of plot changes.
 */
export function farmSha256(farm: FarmLocation): string {
  const plot = {
    gps: { lat: farm.gps.lat, lng: farm.gps.lng },
    polygon: farm.polygon ? { type: 'Polygon', coordinates: farm.polygon.coordinates } : null,
    area_ha: farm.area_ha,
  };
  return createHash('sha256').update(JSON.stringify(plot)).digest('hex');
}
