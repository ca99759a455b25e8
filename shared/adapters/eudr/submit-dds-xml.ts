/**
 * The EUDR Information System's `SubmitDdsRequest` (DDS service V3) for a due diligence statement:
 * the SOAP body content, without envelope or WS-Security header. Element names, order and namespaces
 * follow `xsd/xsd4-due-diligence-statement-v3.xsd` and `xsd/xsd2-eudr-common-v3.xsd`; the layout mirrors
 * the shared sample request (prefixes `dds` and `eudrCommon`).
 */

import { XMLBuilder, type XmlBuilderOptions } from 'fast-xml-parser';
import type { DueDiligenceStatement } from '../../domain/dds';
import { PRODUCERS_PER_COMMODITY } from '../../domain/dds-shipment';

/** Namespace of the DDS service V3 messages (`dds:`). */
export const EUDR_DDS_NS = 'http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3';
/** Namespace of the EUDR common V3 types (`eudrCommon:`): the children of `descriptors`, operator identification. */
export const EUDR_COMMON_NS = 'http://ec.europa.eu/tracesnt/certificate/eudr/common/v3';

type EudrOperatorRole = 'OPERATOR' | 'REPRESENTATIVE_OPERATOR';

/** A structured address (`eudrCommon:AddressType`). */
export interface EudrAddress {
  /** ISO 3166-1 alpha-2. */
  country: string;
  street: string;
  postalCode: string;
  city: string;
  fullAddress?: string;
}

export interface SubmitDdsXmlOptions {
  /**
   * `OPERATOR` (default): the importer files with its own (delegated) credentials; the schema has no
   * operator identity element for this role — the Information System takes it from the account.
   * `REPRESENTATIVE_OPERATOR`: adds `representedOperator` (EORI, address, email, name) from `dds.operator`.
   */
  operatorRole?: EudrOperatorRole;
  /** `geoLocationConfidential`; default false (as the sample). */
  geoLocationConfidential?: boolean;
  /** Editorial comment for the competent authority, at most 2000 characters. */
  comment?: string;
  /** Structured address for `representedOperator`; default: parsed from `dds.operator.address`. */
  operatorAddress?: EudrAddress;
  /** Indented output (default true). Either form validates. */
  prettyPrint?: boolean;
}

/**
 * Serialises a DDS record as the `dds:SubmitDdsRequest` XML document (UTF-8, with XML declaration).
 * One commodity (position 1: description, net weight in kg with ≤ 6 decimals, hsHeading) and one
 * `producers` element per producer (country, name, `geometryGeojson` = the record's base64 GeoJSON);
 * above 1,000 producers (a statement per shipment), one commodity per 1,000 producers, each with the
 * summed green weight of its producers (`producer_net_weights_kg`).
 * Throws RangeError for a comment over 2000 characters or a net weight outside the schema's decimal range.
 */
export function submitDdsRequestXml(dds: DueDiligenceStatement, opts: SubmitDdsXmlOptions = {}): string {
  const role = opts.operatorRole ?? 'OPERATOR';
  if (opts.comment !== undefined && opts.comment.length > 2000) throw new RangeError('comment: at most 2000 characters');

  // At most 1,000 producers per commodity (the V3 schema): a statement per shipment is split into
  // commodities of 1,000 producers, each with the green weight of its own producers.
  const chunks: DueDiligenceStatement['producers'][] = [];
  for (let i = 0; i < Math.max(dds.producers.length, 1); i += PRODUCERS_PER_COMMODITY) {
    chunks.push(dds.producers.slice(i, i + PRODUCERS_PER_COMMODITY));
  }
  const weights = dds.producer_net_weights_kg;
  const commodities: XmlElement[] = chunks.map((producers, c) => ({
    'dds:position': String(c + 1),
    'dds:descriptors': {
      'eudrCommon:descriptionOfGoods': dds.description_of_goods,
      'eudrCommon:goodsMeasure': {
        'eudrCommon:netWeight': formatDecimal6(
          chunks.length === 1 || !weights ? dds.net_weight_kg : producers.reduce((sum, p) => sum + (weights[p.farmer_id] ?? 0), 0),
        ),
      },
    },
    'dds:hsHeading': dds.hs_heading,
    'dds:producers': producers.map((p, i) => ({
      'dds:position': String(i + 1),
      'dds:country': p.country,
      'dds:name': p.name,
      'dds:geometryGeojson': p.geolocation_base64,
    })),
  }));
  const statement: XmlElement = {
    'dds:internalReferenceNumber': dds.internal_reference_number,
    'dds:activityType': dds.activity_type,
    ...(role === 'REPRESENTATIVE_OPERATOR' ? { 'dds:representedOperator': representedOperator(dds, opts.operatorAddress) } : {}),
    'dds:countryOfActivity': dds.country_of_activity,
    'dds:borderCrossCountry': dds.country_of_entry,
    ...(opts.comment ? { 'dds:comment': opts.comment } : {}),
    'dds:commodities': commodities.length === 1 ? commodities[0]! : commodities,
    'dds:geoLocationConfidential': String(opts.geoLocationConfidential ?? false),
  };
  const document: XmlElement = {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    'dds:SubmitDdsRequest': {
      '@_xmlns:dds': EUDR_DDS_NS,
      '@_xmlns:eudrCommon': EUDR_COMMON_NS,
      'dds:operatorRole': role,
      'dds:statement': statement,
    },
  };

  const xml = ((opts.prettyPrint ?? true) ? prettyBuilder : compactBuilder).build(document) as string;
  return `${xml.replace(/\n$/, '')}\n`;
}

/**
 * Best-effort split of a one-line address `Street 1, 20457 City[, Country]` into the schema's
 * structured address (street, postal code with at least one digit, city). Null when it does not fit.
 */
export function parseOperatorAddress(address: string, country: string): EudrAddress | null {
  const m = /^\s*([^,]+?)\s*,\s*([A-Z0-9](?=[A-Z0-9 -]*\d)[A-Z0-9 -]{1,10}[A-Z0-9])\s+([^,]+?)\s*(?:,\s*[^,]+)?\s*$/i.exec(address);
  if (!m) return null;
  return { country, street: m[1]!, postalCode: m[2]!, city: m[3]!, fullAddress: address.trim().slice(0, 250) };
}

function representedOperator(dds: DueDiligenceStatement, given?: EudrAddress): XmlElement {
  const op = dds.operator;
  const addr = given ?? parseOperatorAddress(op.address, op.country);
  return {
    'eudrCommon:operatorReferenceNumber': { 'eudrCommon:identifierType': 'eori', 'eudrCommon:identifierValue': op.eori },
    ...(addr
      ? {
          'eudrCommon:operatorAddress': {
            'eudrCommon:country': addr.country,
            'eudrCommon:street': addr.street,
            'eudrCommon:postalCode': addr.postalCode,
            'eudrCommon:city': addr.city,
            ...(addr.fullAddress ? { 'eudrCommon:fullAddress': addr.fullAddress } : {}),
          },
        }
      : {}),
    'eudrCommon:operatorEmail': op.email,
    'eudrCommon:operatorName': op.name,
  };
}

/** A decimal with at most 6 fraction digits, no exponent (`eudrCommon:DecimalSixteenTotalSixPrecType`). */
function formatDecimal6(n: number): string {
  // 9999999999.999999 (the schema's largest value) is no double: the largest double below 1e10 is the largest accepted.
  if (!Number.isFinite(n) || n < 0 || n >= 1e10) throw new RangeError(`net weight ${n} outside 0–9999999999.999999`);
  return n.toFixed(6).replace(/\.?0+$/, '');
}

/**
 * An element's content for fast-xml-parser's XMLBuilder: keys are qualified element names in
 * document order (`@_`-prefixed keys are attributes, `?xml` the declaration), a string is the
 * element's text, an array repeats the element.
 */
interface XmlElement {
  [name: string]: string | XmlElement | XmlElement[];
}

/**
 * Builder settings. Text is escaped by the library; its `entities` table is narrowed to `&`, `<`
 * and `>` (in that order: `&` first) so character data reads as before (`"` and `'` stay literal,
 * as the XML spec allows outside attribute values). Attributes (only the two xmlns declarations
 * here) keep the library's quoting. `entities` is not in the option typings, hence the widened type.
 */
const builderOptions: XmlBuilderOptions & { entities: { regex: RegExp; val: string }[] } = {
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  suppressBooleanAttributes: false,
  processEntities: true,
  entities: [
    { regex: /&/g, val: '&amp;' },
    { regex: /</g, val: '&lt;' },
    { regex: />/g, val: '&gt;' },
  ],
  indentBy: '  ',
};
// An element with empty text comes out as `<x/>` indented and `<x></x>` on one line, as before.
const prettyBuilder = new XMLBuilder({ ...builderOptions, format: true, suppressEmptyNode: true });
const compactBuilder = new XMLBuilder({ ...builderOptions, format: false, suppressEmptyNode: false });
