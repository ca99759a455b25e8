/**
 * The due diligence statement of a shipment: one per confirmed purchase order
 * (docs/api/eudr.md#statement-per-purchase-order). Under the amended EUDR the EU importer files one
 * statement per shipment, naming every producer and plot. Net mass is the green coffee shipped: the
 * sum of the MILLED `outturn_kg` of the order's batches. Each farmer is one producer with all of
 * their plots; HS heading 0901; the description names the grades; the operator is the order's
 * `buyer_operator`. Pure: no I/O.
 */

import {
  checkOperator,
  DDS_COUNTRY_OF_PRODUCTION,
  DDS_HS_HEADING,
  type DdsOperator,
  type DueDiligenceStatement,
  euCountry,
  invalid,
  maxLength,
  producerOf,
} from './dds';
import { DomainError } from './errors';
import { checkFarmGeolocation } from './farm-geometry';
import { truncateCoordinate } from './plot-rules';
import { type Batch, type Farmer, STAGES } from './records';

/** The EU Information System's limits of one statement: producers, and bytes of geolocation (the base64 GeoJSON it receives). */
export const DDS_LIMITS = { maxProducers: 10_000, maxGeolocationBytes: 25 * 1024 * 1024 } as const;

/** Producers per commodity element (the V3 schema's `maxOccurs`); a larger statement is split into several commodities. */
export const PRODUCERS_PER_COMMODITY = 1000;

/** What {@link buildShipmentStatement} needs. */
export interface ShipmentStatementInput {
  ddsId: string;
  internalReferenceNumber: string;
  purchaseOrderId: string;
  batches: Array<Pick<Batch, 'batch_id' | 'farmer_id' | 'grade' | 'stage' | 'outturn_kg'>>;
  /** Every farmer of the batches, by id. */
  farmers: ReadonlyMap<string, Farmer>;
  operator: DdsOperator;
  description?: string;
  createdAt: string;
  /** Defaults to the Information System's ({@link DDS_LIMITS}). */
  limits?: { maxProducers: number; maxGeolocationBytes: number };
}

const MILLED = STAGES.indexOf('MILLED');
/** Green weight to the gram: sums of kg keep at most 3 decimals (the schema allows 6). */
const kg = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Builds the statement of a shipment. Checks, in order:
 * 1. every batch is MILLED or later with a positive `outturn_kg` (else 422 BATCH_NOT_ELIGIBLE naming them);
 * 2. at most `limits.maxProducers` distinct farmers (else 422 DDS_TOO_LARGE);
 * 3. every farm is CLEAR in the forest check (else 422 GFW_CHECK_FAILED; `details.farmers` names them all);
 * 4. every farm passes registration's geolocation rules again (400 VALIDATION_ERROR or
 *    GEOMETRY_RULE_VIOLATED, paths `producers.<farmer_id>.farm…`);
 * 5. no two farmers have the same plot once cut to 6 decimals (else 422 DUPLICATE_PLOT, `details.plots` naming both);
 * 6. the base64 GeoJSON of all producers is at most `limits.maxGeolocationBytes` (else 422 DDS_TOO_LARGE).
 * Producers are in order of first appearance of their farmer among the batches.
 */
export function buildShipmentStatement(input: ShipmentStatementInput): DueDiligenceStatement {
  const limits = input.limits ?? DDS_LIMITS;
  const { operator } = input;
  const destination = euCountry(operator.country, 'operator.country');
  checkOperator(operator, input.internalReferenceNumber);
  if (input.batches.length === 0) invalid('batch_ids', 'the purchase order has no batches');

  const unmilled = input.batches.filter((b) => b.stage === null || STAGES.indexOf(b.stage) < MILLED || !(Number(b.outturn_kg) > 0));
  if (unmilled.length > 0) {
    const list = unmilled.slice(0, 20).map((b) => `${b.batch_id} (${b.stage ?? 'no stage'})`);
    throw new DomainError(
      'BATCH_NOT_ELIGIBLE',
      `A statement per shipment declares the green coffee shipped: every batch must be MILLED or later with its outturn_kg; ${unmilled.length} are not: ${list.join(', ')}${unmilled.length > 20 ? ', …' : ''}.`,
      { details: { batches: unmilled.map((b) => ({ batch_id: b.batch_id, stage: b.stage })) } },
    );
  }

  const weights = new Map<string, number>();
  const grades = new Set<string>();
  for (const b of input.batches) {
    weights.set(b.farmer_id, (weights.get(b.farmer_id) ?? 0) + (b.outturn_kg as number));
    grades.add(b.grade);
  }
  if (weights.size > limits.maxProducers) {
    throw new DomainError(
      'DDS_TOO_LARGE',
      `The shipment has ${weights.size} producers; the EU Information System accepts at most ${limits.maxProducers} in one statement.`,
      { details: { producers: weights.size, max_producers: limits.maxProducers } },
    );
  }
  const farmers = [...weights.keys()].map((id) => {
    const f = input.farmers.get(id);
    if (!f) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${id} of the purchase order is not registered.`);
    return f;
  });

  const notClear = farmers.filter((f) => f.gfw_status !== 'CLEAR');
  if (notClear.length > 0) {
    throw new DomainError(
      'GFW_CHECK_FAILED',
      `The farms of ${notClear.map((f) => `${f.farmer_id} (${f.gfw_status})`).join(', ')} are not CLEAR in the forest check; no statement can name them.`,
      { details: { farmers: notClear.map((f) => ({ farmer_id: f.farmer_id, gfw_status: f.gfw_status })) } },
    );
  }

  for (const f of farmers) recheckPlot(f);
  assertNoDuplicatePlots(farmers);

  let geolocationBytes = 0;
  const producers = farmers.map((farmer) => {
    const producer = producerOf(farmer, `producers.${farmer.farmer_id}`);
    geolocationBytes += producer.geolocation_base64.length;
    return producer;
  });
  if (geolocationBytes > limits.maxGeolocationBytes) {
    throw new DomainError(
      'DDS_TOO_LARGE',
      `The shipment's geolocation is ${geolocationBytes} bytes; the EU Information System accepts at most ${limits.maxGeolocationBytes} in one statement.`,
      { details: { geolocation_bytes: geolocationBytes, max_geolocation_bytes: limits.maxGeolocationBytes } },
    );
  }

  const gradeList = [...grades].sort().join(', ');
  const description =
    input.description ??
    `Green coffee beans, not roasted, not decaffeinated, grade${grades.size > 1 ? 's' : ''} ${gradeList}, Uganda, purchase order ${input.purchaseOrderId}`.slice(
      0,
      150,
    );
  maxLength(description, 150, 'description', 1);
  const net = kg([...weights.values()].reduce((a, b) => a + b, 0));
  if (!(net > 0) || net >= 1e10) invalid('net_weight_kg', 'must be a positive number of kg within the schema range');

  return {
    dds_id: input.ddsId,
    batch_id: null,
    purchase_order_id: input.purchaseOrderId,
    batch_ids: input.batches.map((b) => b.batch_id),
    producer_net_weights_kg: Object.fromEntries([...weights].map(([id, w]) => [id, kg(w)])),
    internal_reference_number: input.internalReferenceNumber,
    activity_type: 'IMPORT',
    country_of_activity: destination,
    country_of_entry: destination,
    operator: { ...operator },
    hs_heading: DDS_HS_HEADING,
    description_of_goods: description,
    net_weight_kg: net,
    country_of_production: DDS_COUNTRY_OF_PRODUCTION,
    producers,
    geolocation: { type: 'FeatureCollection', features: producers.flatMap((p) => p.geolocation_geojson.features) },
    created_at: input.createdAt,
  };
}

/** Registration's geolocation rules again on a stored farm; the error's paths and message name the farmer. */
function recheckPlot(f: Farmer): void {
  try {
    checkFarmGeolocation(f.farm);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const details = Array.isArray(err.details)
      ? (err.details as Array<{ path: string }>).map((d) => ({ ...d, path: d.path.replace(/^farm/, `producers.${f.farmer_id}.farm`) }))
      : err.details;
    throw new DomainError(err.code, `Farm of farmer ${f.farmer_id}: ${err.message}`, { details });
  }
}

/** The plot's identity as the Information System sees it: its geometry with every coordinate cut to 6 decimals. */
function plotKey(f: Farmer): string {
  const geometry = f.farm.polygon ? f.farm.polygon.coordinates : [f.farm.gps.lng, f.farm.gps.lat];
  const cut = (v: unknown): unknown => (Array.isArray(v) ? v.map(cut) : truncateCoordinate(v as number));
  return `${f.farm.polygon ? 'Polygon' : 'Point'}:${JSON.stringify(cut(geometry))}`;
}

/** 422 DUPLICATE_PLOT when two farmers have identical plots; `details.plots` lists each pair of farmer ids. */
function assertNoDuplicatePlots(farmers: Farmer[]): void {
  const seen = new Map<string, string>();
  const pairs: Array<[string, string]> = [];
  for (const f of farmers) {
    const key = plotKey(f);
    const first = seen.get(key);
    if (first) pairs.push([first, f.farmer_id]);
    else seen.set(key, f.farmer_id);
  }
  if (pairs.length === 0) return;
  throw new DomainError(
    'DUPLICATE_PLOT',
    `Identical plot geometries of two farmers block the statement: ${pairs.map(([a, b]) => `${a} and ${b}`).join('; ')}. Map each farm's own plot again.`,
    { details: { plots: pairs.map(([a, b]) => ({ farmer_ids: [a, b] })) } },
  );
}
