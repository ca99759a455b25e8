/**
 * The EU Information System's geometry rules for a plot (docs/api/eudr.md#geometry-rules), checked
 * when a farm is registered and again when a due diligence statement is built. The Information
 * System cuts every coordinate to 6 decimals and then refuses a polygon that is no longer valid; it
 * refuses polygons with holes, repeated consecutive positions, and plots outside the country of
 * production. Each broken rule is a 400 `GEOMETRY_RULE_VIOLATED` whose details name the rule.
 */

import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { booleanValid } from '@turf/boolean-valid';
import { lineString, point } from '@turf/helpers';
import { kinks } from '@turf/kinks';
import { nearestPointOnLine } from '@turf/nearest-point-on-line';
import { area as turfArea } from '@turf/area';
import { DomainError } from './errors';

/** The rules, as named in `error.details[].rule`. */
type GeometryRule = 'NO_HOLES' | 'NO_REPEATED_POSITION' | 'VALID_AT_6_DECIMALS' | 'INSIDE_UGANDA';

/** One broken rule: where (JSON path), which rule, and what is wrong. */
interface GeometryRuleDetail {
  path: string;
  rule: GeometryRule;
  message: string;
}

/** Decimals the Information System keeps of each coordinate (it truncates, it does not round). */
const IS_COORDINATE_DECIMALS = 6;

/**
 * Uganda's outline, [lng, lat]: Natural Earth's 1:110m admin-0 boundary (public domain), 26 positions,
 * Uganda's part of Lake Victoria included. At that scale the line can be some kilometres off the
 * true border, so a position within {@link UGANDA_MARGIN_KM} of it counts as inside: the rule catches
 * swapped or mistyped coordinates (another country, another hemisphere), not a plot by the border.
 */
const UGANDA_OUTLINE: number[][] = [
  [31.86617, -1.02736],
  [30.76986, -1.01455],
  [30.419105, -1.134659],
  [29.821519, -1.443322],
  [29.579466, -1.341313],
  [29.587838, -0.587406],
  [29.8195, -0.2053],
  [29.875779, 0.59738],
  [30.086154, 1.062313],
  [30.468508, 1.583805],
  [30.85267, 1.849396],
  [31.174149, 2.204465],
  [30.77332, 2.33989],
  [30.83385, 3.50917],
  [31.24556, 3.7819],
  [31.88145, 3.55827],
  [32.68642, 3.79232],
  [33.39, 3.79],
  [34.005, 4.249885],
  [34.47913, 3.5556],
  [34.59607, 3.05374],
  [35.03599, 1.90584],
  [34.6721, 1.17694],
  [34.18, 0.515],
  [33.893569, 0.109814],
  [33.903711, -0.95],
  [31.86617, -1.02736],
];
/** Tolerance round the coarse outline, km (the 1:110m line's error is of this order). */
const UGANDA_MARGIN_KM = 15;
const UGANDA_POLYGON = { type: 'Polygon' as const, coordinates: [UGANDA_OUTLINE] };
const UGANDA_LINE = lineString(UGANDA_OUTLINE);

/**
 * A coordinate cut (not rounded) to 6 decimals, as the Information System stores it: 34.1234569 →
 * 34.123456, -0.0000009 → -0. Works on the decimal text so 1.000001 stays 1.000001.
 */
export function truncateCoordinate(x: number): number {
  const s = Math.abs(x) < 1e-6 ? x.toFixed(12) : String(x);
  const m = /^(-?\d+)(?:\.(\d*))?$/.exec(s);
  if (!m) return x;
  return Number(`${m[1]}.${(m[2] ?? '').slice(0, IS_COORDINATE_DECIMALS)}0`) + 0;
}

/** Whether a [lng, lat] position is in Uganda (the outline above, with its margin). */
export function insideUganda(lng: number, lat: number): boolean {
  const p = point([lng, lat]);
  if (booleanPointInPolygon(p, UGANDA_POLYGON)) return true;
  return nearestPointOnLine(UGANDA_LINE, p, { units: 'kilometers' }).properties.dist <= UGANDA_MARGIN_KM;
}

const same = (a: number[], b: number[]) => a[0] === b[0] && a[1] === b[1];

/**
 * The Information System's rules for a plot whose structure is already sound (positions are pairs
 * of numbers in range, rings closed with ≥ 4 positions). `gps` is `{lat, lng}`, `polygon` a GeoJSON
 * Polygon's rings ([lng, lat]); `path` prefixes the detail paths (e.g. `farm`). Returns the broken
 * rules, in this order: no holes (one ring only); no repeated consecutive position; still a valid
 * polygon once every coordinate is cut to 6 decimals (≥ 4 positions, closed, no repeated consecutive
 * position, not self-intersecting (@turf/kinks), valid (@turf/boolean-valid), encloses an area);
 * every position, and the GPS point, inside Uganda. Empty when the plot passes.
 */
function plotRuleViolations(
  plot: { gps: { lat: number; lng: number }; polygon?: { coordinates: number[][][] } | null },
  path: string,
): GeometryRuleDetail[] {
  const out: GeometryRuleDetail[] = [];
  const rings = plot.polygon?.coordinates;
  if (rings) {
    if (rings.length > 1) {
      out.push({
        path: `${path}.polygon.coordinates`,
        rule: 'NO_HOLES',
        message: `polygon has ${rings.length - 1} hole(s) (interior rings); the EU Information System accepts only the outer ring`,
      });
    }
    const outer = rings[0] ?? [];
    const repeat = outer.findIndex((p, j) => j > 0 && same(p, outer[j - 1]!));
    if (repeat > 0) {
      out.push({
        path: `${path}.polygon.coordinates.0.${repeat}`,
        rule: 'NO_REPEATED_POSITION',
        message: `position ${repeat} repeats the one before it; remove repeated GPS fixes`,
      });
    } else {
      const cut = outer.map((p) => p.map(truncateCoordinate));
      const problem = truncatedProblem(cut);
      if (problem) {
        out.push({
          path: `${path}.polygon.coordinates.0`,
          rule: 'VALID_AT_6_DECIMALS',
          message: `cut to 6 decimals, as the EU Information System stores it, the polygon ${problem}`,
        });
      }
    }
    const outside = outer.findIndex((p) => !insideUganda(p[0]!, p[1]!));
    if (outside >= 0) {
      const [lng, lat] = outer[outside]!;
      out.push({
        path: `${path}.polygon.coordinates.0.${outside}`,
        rule: 'INSIDE_UGANDA',
        message: `position [${lng}, ${lat}] is outside Uganda (positions are [lng, lat])`,
      });
    }
  }
  if (!insideUganda(plot.gps.lng, plot.gps.lat)) {
    out.push({
      path: `${path}.gps`,
      rule: 'INSIDE_UGANDA',
      message: `point lat ${plot.gps.lat}, lng ${plot.gps.lng} is outside Uganda`,
    });
  }
  return out;
}

/** Why a ring cut to 6 decimals is no valid polygon, or null. */
function truncatedProblem(ring: number[][]): string | null {
  if (ring.length < 4) return `has ${ring.length} positions (at least 4 are needed)`;
  if (!same(ring[0]!, ring[ring.length - 1]!)) return 'is no longer closed';
  const j = ring.findIndex((p, i) => i > 0 && same(p, ring[i - 1]!));
  if (j > 0) return `has positions ${j - 1} and ${j} equal, so it collapses (plot too small or positions too close)`;
  if (kinks({ type: 'Polygon', coordinates: [ring] }).features.length > 0) return 'intersects itself';
  if (!booleanValid({ type: 'Polygon', coordinates: [ring] })) return 'is not a valid simple polygon';
  if (!(turfArea({ type: 'Polygon', coordinates: [ring] }) > 0)) return 'encloses no area';
  return null;
}

/**
 * Throws 400 `GEOMETRY_RULE_VIOLATED` when {@link plotRuleViolations} finds any: the message lists
 * each `path: rule: message`; `details` is the list of `{path, rule, message}`. `subject` starts the
 * message (e.g. "Farm geolocation" or "Farm of farmer F-1").
 */
export function assertPlotRules(
  plot: { gps: { lat: number; lng: number }; polygon?: { coordinates: number[][][] } | null },
  path: string,
  subject = 'Farm geolocation',
): void {
  const details = plotRuleViolations(plot, path);
  if (details.length === 0) return;
  const list = details.map((d) => `${d.path}: ${d.rule}: ${d.message}`).join('; ');
  throw new DomainError('GEOMETRY_RULE_VIOLATED', `${subject} breaks the EU Information System's geometry rules: ${list}.`, { details });
}
