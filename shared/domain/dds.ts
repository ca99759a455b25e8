/**
 * EUDR due diligence statements (docs/api/eudr.md#due-diligence-statements). The statement is the EU importer's: activity IMPORT,
 * country of activity and of entry the member state the coffee goes to, HS heading 0901, country of
 * production UG, and each producer with the GeoJSON of its plot. This module builds the JSON record;
 * `shared/adapters/eudr/submit-dds-xml.ts` turns it into the Information System's `SubmitDdsRequest`.
 *
 * Geolocation follows the EUDR GeoJSON file description: WGS84, `[lng, lat]`, a FeatureCollection whose
 * features carry `ProducerName`, `ProducerCountry`, `ProductionPlace` and, for a point plot (≤ 4 ha),
 * `Area` in hectares. A plot over 4 ha must be a polygon. Coordinates are emitted with at least 6 decimals.
 */

import { DomainError } from './errors';
import { STAGES, type Batch, type Farmer } from './records';
import type { EvidencePinStatus } from './records';

/** HS heading for coffee (Chapter 9, heading 0901). */
export const DDS_HS_HEADING = '0901';
/** Country of production of every batch this service handles. */
export const DDS_COUNTRY_OF_PRODUCTION = 'UG';
/** Plots larger than this (hectares) must be declared as polygons (EUDR Art. 2(28), V3 schema docs). */
const DDS_POINT_MAX_AREA_HA = 4;
/** Minimum decimals of every emitted coordinate. */
const DDS_MIN_COORDINATE_DECIMALS = 6;
/** Values the V3 schema's `EuropeanCountryType` allows for country of activity / entry (EU-27 + XI). */
const EUDR_EU_COUNTRIES = [
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
  'XI',
] as const;
export type EudrEuCountry = (typeof EUDR_EU_COUNTRIES)[number];

/** Schema limits (eudr common/v3). */
const MAX_INTERNAL_REFERENCE = 50;
const MAX_DESCRIPTION = 150;
const MAX_PRODUCER_NAME = 500;
const MAX_OPERATOR_NAME = 200;

type GeoJsonPosition = number[];
interface GeoJsonPoint {
  type: 'Point';
  coordinates: GeoJsonPosition;
}
interface GeoJsonPolygon {
  type: 'Polygon';
  coordinates: GeoJsonPosition[][];
}

/** Feature properties per the EUDR GeoJSON file description. `Area` (ha) only on points. */
interface PlotProperties {
  ProducerName: string;
  ProducerCountry: string;
  ProductionPlace: string;
  Area?: number;
}

interface PlotFeature {
  type: 'Feature';
  properties: PlotProperties;
  geometry: GeoJsonPoint | GeoJsonPolygon;
}

export interface PlotFeatureCollection {
  type: 'FeatureCollection';
  features: PlotFeature[];
}

/** The EU operator (importer) the statement belongs to: the purchase order's `buyer_operator` (docs/api/batches-and-custody.md#custody-trail). */
export interface DdsOperator {
  name: string;
  /** EORI number, e.g. `DE123456789012345`. */
  eori: string;
  /** Postal address as one line, e.g. `Am Sandtorkai 5, 20457 Hamburg`. */
  address: string;
  email: string;
  /** ISO 3166-1 alpha-2 EU member state of the operator. */
  country: string;
}

export interface DdsProducer {
  farmer_id: string;
  name: string;
  country: 'UG';
  /** The plot as a FeatureCollection of one feature (polygon, or point with `Area`). */
  geolocation_geojson: PlotFeatureCollection;
  /** Base64 (UTF-8) of the exact GeoJSON text of `geolocation_geojson`, coordinates with ≥ 6 decimals: the XML `geometryGeojson`. */
  geolocation_base64: string;
}

/** The DDS JSON record (docs/api/eudr.md#due-diligence-statements). Filing state (status, reference numbers, IPFS) is added by the use case. */
export interface DueDiligenceStatement {
  dds_id: string;
  /** The batch of a per-batch statement; null for a purchase order's (see `purchase_order_id`). */
  batch_id: string | null;
  /** The purchase order of a statement per shipment (docs/api/eudr.md#statement-per-purchase-order). */
  purchase_order_id?: string;
  /** The batches a statement per shipment covers. */
  batch_ids?: string[];
  /** Green-coffee kg per producer of a statement per shipment (the XML splits producers into commodities of at most 1,000, each with its share). */
  producer_net_weights_kg?: Record<string, number>;
  internal_reference_number: string;
  activity_type: 'IMPORT';
  country_of_activity: EudrEuCountry;
  country_of_entry: EudrEuCountry;
  operator: DdsOperator;
  hs_heading: '0901';
  description_of_goods: string;
  net_weight_kg: number;
  country_of_production: 'UG';
  producers: DdsProducer[];
  /** All plots of the statement as one FeatureCollection. */
  geolocation: PlotFeatureCollection;
  created_at: string;
}

export interface BuildDdsInput {
  ddsId: string;
  /** Operator's own reference, at most 50 characters. */
  internalReferenceNumber: string;
  batch: Pick<Batch, 'batch_id' | 'weight_kg' | 'grade' | 'cooperative_id' | 'stage'>;
  producers: Array<{ farmer: Farmer }>;
  operator: DdsOperator;
  /** EU member state (or XI) the coffee is released in: country of activity and of entry. */
  destinationCountry: string;
  /** Commercial description, at most 150 characters; a default naming grade and batch otherwise. */
  description?: string;
  createdAt: string;
}

/**
 * Builds the due diligence statement JSON record for a batch (pure; no I/O).
 * Weight in kg; coordinates WGS84 `[lng, lat]`, kept at full precision and emitted with ≥ 6 decimals.
 * Throws `DomainError`: `BATCH_NOT_ELIGIBLE` (stage below GRADED), `GFW_CHECK_FAILED` (a farm not CLEAR),
 * `VALIDATION_ERROR` (no producers, a farm > 4 ha without polygon, a bad coordinate or ring, a destination
 * or operator country outside the EU list, weight not in (0, 9999999999.999999], a field over its schema length).
 */
export function buildDueDiligenceStatement(input: BuildDdsInput): DueDiligenceStatement {
  const { batch, operator } = input;
  if (batch.stage === null || STAGES.indexOf(batch.stage) < STAGES.indexOf('GRADED')) {
    throw new DomainError('BATCH_NOT_ELIGIBLE', `Batch ${batch.batch_id} is at ${batch.stage ?? 'no stage'}; a DDS needs GRADED or later.`);
  }
  const destination = euCountry(input.destinationCountry, 'destinationCountry');
  checkOperator(operator, input.internalReferenceNumber);
  if (!Number.isFinite(batch.weight_kg) || batch.weight_kg <= 0 || batch.weight_kg >= 1e10) {
    invalid('batch.weight_kg', 'must be a positive number of kg within the schema range');
  }
  if (input.producers.length === 0) invalid('producers', 'at least one producer is required');
  if (input.producers.length > 1000) invalid('producers', 'at most 1000 producers per commodity');

  const description =
    input.description ?? `Green coffee beans, not roasted, not decaffeinated, grade ${batch.grade}, Uganda, batch ${batch.batch_id}`;
  maxLength(description, MAX_DESCRIPTION, 'description', 1);

  const producers = input.producers.map(({ farmer }, i) => {
    if (farmer.gfw_status !== 'CLEAR') {
      throw new DomainError('GFW_CHECK_FAILED', `Farm of ${farmer.farmer_id} is ${farmer.gfw_status}, not CLEAR.`);
    }
    return producerOf(farmer, `producers[${i}].farmer`);
  });

  return {
    dds_id: input.ddsId,
    batch_id: batch.batch_id,
    internal_reference_number: input.internalReferenceNumber,
    activity_type: 'IMPORT',
    country_of_activity: destination,
    country_of_entry: destination,
    operator: { ...operator },
    hs_heading: DDS_HS_HEADING,
    description_of_goods: description,
    net_weight_kg: batch.weight_kg,
    country_of_production: DDS_COUNTRY_OF_PRODUCTION,
    producers,
    geolocation: { type: 'FeatureCollection', features: producers.flatMap((p) => p.geolocation_geojson.features) },
    created_at: input.createdAt,
  };
}

/**
 * The operator and reference checks every statement passes, per batch or per shipment: the
 * operator's country on the EU list, the internal reference (1–50 characters), the operator's name
 * (1–200) and EORI number. Throws VALIDATION_ERROR naming the field.
 */
export function checkOperator(operator: DdsOperator, internalReferenceNumber: string): void {
  euCountry(operator.country, 'operator.country');
  maxLength(internalReferenceNumber, MAX_INTERNAL_REFERENCE, 'internalReferenceNumber', 1);
  maxLength(operator.name, MAX_OPERATOR_NAME, 'operator.name', 1);
  if (!/^[A-Z]{2}[A-Za-z0-9]{1,15}$/.test(operator.eori))
    invalid('operator.eori', 'must be an EORI number (country code + up to 15 characters)');
}

/**
 * One producer of a statement: the farmer's name (1–500 characters) and their plot as a one-feature
 * GeoJSON collection, also base64 as the Information System receives it. `path` prefixes the
 * error paths (`<path>.full_name`, `<path>.farm…`). Throws VALIDATION_ERROR.
 */
export function producerOf(farmer: Farmer, path: string): DdsProducer {
  maxLength(farmer.full_name, MAX_PRODUCER_NAME, `${path}.full_name`, 1);
  const collection: PlotFeatureCollection = { type: 'FeatureCollection', features: [plotFeature(farmer, `${path}.farm`)] };
  return {
    farmer_id: farmer.farmer_id,
    name: farmer.full_name,
    country: DDS_COUNTRY_OF_PRODUCTION,
    geolocation_geojson: collection,
    geolocation_base64: Buffer.from(serializeGeoJson(collection), 'utf8').toString('base64'),
  };
}

/**
 * The GeoJSON text of a value with every number under a `coordinates` key written with at least
 * 6 decimals (`34.2337` → `34.233700`; longer inputs keep their digits). Other values as `JSON.stringify`.
 */
export function serializeGeoJson(value: unknown): string {
  return ser(value, false);
}

/** A coordinate as decimal text with ≥ 6 fraction digits and no exponent. Throws RangeError if not finite. */
export function formatCoordinate(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`coordinate ${n} is not a finite number`);
  const s = String(n);
  if (!/e/i.test(s)) {
    const decimals = s.split('.')[1]?.length ?? 0;
    return decimals >= DDS_MIN_COORDINATE_DECIMALS ? s : n.toFixed(DDS_MIN_COORDINATE_DECIMALS);
  }
  // |n| < 1e-6 (String gives an exponent): plain notation, 12 decimals, trailing zeros trimmed.
  const t = n.toFixed(12).replace(/0+$/, '');
  return t.endsWith('.') ? n.toFixed(DDS_MIN_COORDINATE_DECIMALS) : t;
}

function ser(v: unknown, coords: boolean): string {
  if (typeof v === 'number') return coords ? formatCoordinate(v) : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => ser(x, coords)).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      parts.push(`${JSON.stringify(k)}:${ser(x, coords || k === 'coordinates')}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A farmer's plot as an EUDR GeoJSON feature (polygon, or point with `Area`). Throws VALIDATION_ERROR at `path`. */
function plotFeature(farmer: Farmer, path: string): PlotFeature {
  const { farm } = farmer;
  const properties: PlotProperties = {
    ProducerName: farmer.full_name,
    ProducerCountry: DDS_COUNTRY_OF_PRODUCTION,
    ProductionPlace: `${farmer.district}, Uganda`,
  };
  if (farm.polygon) {
    const rings = farm.polygon.coordinates;
    if (rings.length === 0) invalid(`${path}.polygon`, 'has no ring');
    rings.forEach((ring, r) => {
      if (ring.length < 4) invalid(`${path}.polygon.coordinates[${r}]`, 'a ring needs at least 4 positions');
      ring.forEach((p, j) => {
        position(p, `${path}.polygon.coordinates[${r}][${j}]`);
      });
      const [first, last] = [ring[0]!, ring[ring.length - 1]!];
      if (first[0] !== last[0] || first[1] !== last[1]) invalid(`${path}.polygon.coordinates[${r}]`, 'ring is not closed');
    });
    return { type: 'Feature', properties, geometry: { type: 'Polygon', coordinates: rings.map((ring) => ring.map((p) => [...p])) } };
  }
  if (!(farm.area_ha > 0)) invalid(`${path}.area_ha`, 'must be positive');
  if (farm.area_ha > DDS_POINT_MAX_AREA_HA) {
    invalid(`${path}.polygon`, `a farm of more than ${DDS_POINT_MAX_AREA_HA} ha must be declared as a polygon (EUDR)`);
  }
  const point = [farm.gps.lng, farm.gps.lat];
  position(point, `${path}.gps`);
  return { type: 'Feature', properties: { ...properties, Area: farm.area_ha }, geometry: { type: 'Point', coordinates: point } };
}

function position(p: GeoJsonPosition, path: string): void {
  const [lng, lat] = p;
  if (
    p.length < 2 ||
    lng === undefined ||
    lat === undefined ||
    !Number.isFinite(lng) ||
    !Number.isFinite(lat) ||
    lng < -180 ||
    lng > 180 ||
    lat < -90 ||
    lat > 90
  ) {
    invalid(path, 'must be [lng, lat] in WGS84 degrees');
  }
}

/** An EU member state code (or XI) as the schema allows it. Throws VALIDATION_ERROR at `path`. */
export function euCountry(code: string, path: string): EudrEuCountry {
  if (!(EUDR_EU_COUNTRIES as readonly string[]).includes(code)) invalid(path, 'must be an EU member state code (ISO alpha-2) or XI');
  return code as EudrEuCountry;
}

/** `s` is a string of `min`–`max` characters. Throws VALIDATION_ERROR at `path`. */
export function maxLength(s: string, max: number, path: string, min = 0): void {
  if (typeof s !== 'string' || s.length < min || s.length > max) invalid(path, `must be ${min}–${max} characters`);
}

/** Throws VALIDATION_ERROR naming `path`. */
export function invalid(path: string, message: string): never {
  throw new DomainError('VALIDATION_ERROR', `${path} ${message}`, { details: [{ path, message }] });
}

/** A due diligence statement with its filing state (docs/api/eudr.md#due-diligence-statements). */
export interface DdsRecord extends DueDiligenceStatement {
  /**
   * PENDING_FILING (not yet filed), then the Information System's V3 status: SUBMITTED, AVAILABLE,
   * REJECTED, WITHDRAWN, ARCHIVED, GROUPED, SUSPENDED, UPDATED or OBSOLETE.
   */
  status:
    | 'PENDING_FILING'
    | 'SUBMITTED'
    | 'AVAILABLE'
    | 'REJECTED'
    | 'WITHDRAWN'
    | 'ARCHIVED'
    | 'SUSPENDED'
    | 'UPDATED'
    | 'GROUPED'
    | 'OBSOLETE';
  cooperative_id: string;
  /**
   * CIDv1 of the UnixFS directory of `dds.json` and `dds.xml`: the statement's content address. The
   * documents themselves are private (this record); GET /ipfs does not serve them.
   */
  ipfs_cid: string;
  /** Statements made before the DDS became private carry the public link they had then (no longer served). Never shown. */
  ipfs_url?: string;
  /** Statements made before the DDS became private carry the pin status they had then. Never shown. */
  ipfs_pin_status?: EvidencePinStatus;
  xml: string;
  registry_uuid?: string;
  reference_number?: string;
  verification_number?: string;
  rejection_reason?: string;
  filed_at?: string;
  available_at?: string;
  /** Amendments accepted by the Information System (V3 amendDds), and the last one's time. */
  amendments?: number;
  amended_at?: string;
  withdrawn_at?: string;
  /** Where the statement's documents are kept (a statement made before they moved to object storage has none: its parts are inline). */
  documents?: DdsDocumentRefs;
}

/** One document of a statement in object storage: its key, size in bytes and SHA-256 (lowercase hex) of exactly its bytes. */
export interface DdsDocumentRef {
  key: string;
  size_bytes: number;
  sha256: string;
}

/**
 * The documents of a statement in object storage: `statement` the canonical JSON (RFC 8785) of the
 * statement (`dds.json`), `xml` the SubmitDdsRequest XML (`dds.xml`); the UnixFS directory of the two
 * is the statement's `ipfs_cid`.
 */
interface DdsDocumentRefs {
  statement: DdsDocumentRef;
  xml: DdsDocumentRef;
}

/** The large parts of a statement: its producers and plots (up to 25 MB of GeoJSON) and its XML, kept outside the table. */
export const DDS_LARGE_PARTS = ['producers', 'geolocation', 'producer_net_weights_kg', 'xml'] as const;
type DdsLargePart = (typeof DDS_LARGE_PARTS)[number];

/**
 * A statement as its store (the table) holds it: without its large parts, which are in object storage
 * (`documents`), or — a statement made before they moved there — with them inline and no `documents`.
 */
export type StoredDdsRecord = Omit<DdsRecord, DdsLargePart> & Partial<Pick<DdsRecord, DdsLargePart>>;
