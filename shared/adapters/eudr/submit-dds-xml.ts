/**
 * The EUDR Information System's `SubmitDdsRequest` (DDS service V3) for a due diligence statement:
 * the SOAP body content, without envelope or WS-Security header. Element names, order and namespaces
 * follow `xsd/xsd4-due-diligence-statement-v3.xsd` and `xsd/xsd2-eudr-common-v3.xsd`; the layout mirrors
 * the shared sample request (prefixes `dds` and `eudrCommon`).
 */

import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces';
import type { DueDiligenceStatement } from '../../domain/dds';

/** Namespace of the DDS service V3 messages (`dds:`). */
export const EUDR_DDS_NS = 'http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3';
/** Namespace of the EUDR common V3 types (`eudrCommon:`): the children of `descriptors`, operator identification. */
export const EUDR_COMMON_NS = 'http://ec.europa.eu/tracesnt/certificate/eudr/common/v3';

export type EudrOperatorRole = 'OPERATOR' | 'REPRESENTATIVE_OPERATOR';

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
 * `producers` element per producer (country, name, `geometryGeojson` = the record's base64 GeoJSON).
 * Throws RangeError for a comment over 2000 characters or a net weight outside the schema's decimal range.
 */
export function submitDdsRequestXml(dds: DueDiligenceStatement, opts: SubmitDdsXmlOptions = {}): string {
  const role = opts.operatorRole ?? 'OPERATOR';
  if (opts.comment !== undefined && opts.comment.length > 2000) throw new RangeError('comment: at most 2000 characters');

  const doc = create({ version: '1.0', encoding: 'UTF-8' });
  const root = doc.ele(EUDR_DDS_NS, 'dds:SubmitDdsRequest').att('http://www.w3.org/2000/xmlns/', 'xmlns:eudrCommon', EUDR_COMMON_NS);
  dds_(root, 'operatorRole', role);

  const statement = dds_(root, 'statement');
  dds_(statement, 'internalReferenceNumber', dds.internal_reference_number);
  dds_(statement, 'activityType', dds.activity_type);
  if (role === 'REPRESENTATIVE_OPERATOR') representedOperator(statement, dds, opts.operatorAddress);
  dds_(statement, 'countryOfActivity', dds.country_of_activity);
  dds_(statement, 'borderCrossCountry', dds.country_of_entry);
  if (opts.comment) dds_(statement, 'comment', opts.comment);

  const commodity = dds_(statement, 'commodities');
  dds_(commodity, 'position', '1');
  const descriptors = dds_(commodity, 'descriptors');
  common(descriptors, 'descriptionOfGoods', dds.description_of_goods);
  const measure = common(descriptors, 'goodsMeasure');
  common(measure, 'netWeight', formatDecimal6(dds.net_weight_kg));
  dds_(commodity, 'hsHeading', dds.hs_heading);
  dds.producers.forEach((p, i) => {
    const producer = dds_(commodity, 'producers');
    dds_(producer, 'position', String(i + 1));
    dds_(producer, 'country', p.country);
    dds_(producer, 'name', p.name);
    dds_(producer, 'geometryGeojson', p.geolocation_base64);
  });
  dds_(statement, 'geoLocationConfidential', String(opts.geoLocationConfidential ?? false));

  return doc.end({ prettyPrint: opts.prettyPrint ?? true }) + '\n';
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

function representedOperator(statement: XMLBuilder, dds: DueDiligenceStatement, given?: EudrAddress): void {
  const op = dds.operator;
  const el = dds_(statement, 'representedOperator');
  const ref = common(el, 'operatorReferenceNumber');
  common(ref, 'identifierType', 'eori');
  common(ref, 'identifierValue', op.eori);
  const addr = given ?? parseOperatorAddress(op.address, op.country);
  if (addr) {
    const a = common(el, 'operatorAddress');
    common(a, 'country', addr.country);
    common(a, 'street', addr.street);
    common(a, 'postalCode', addr.postalCode);
    common(a, 'city', addr.city);
    if (addr.fullAddress) common(a, 'fullAddress', addr.fullAddress);
  }
  common(el, 'operatorEmail', op.email);
  common(el, 'operatorName', op.name);
}

/** A decimal with at most 6 fraction digits, no exponent (`eudrCommon:DecimalSixteenTotalSixPrecType`). */
function formatDecimal6(n: number): string {
  if (!Number.isFinite(n) || n < 0 || n > 9999999999.999999) throw new RangeError(`net weight ${n} outside 0–9999999999.999999`);
  return n.toFixed(6).replace(/\.?0+$/, '');
}

function dds_(parent: XMLBuilder, name: string, text?: string): XMLBuilder {
  const el = parent.ele(EUDR_DDS_NS, `dds:${name}`);
  return text === undefined ? el : el.txt(text);
}

function common(parent: XMLBuilder, name: string, text?: string): XMLBuilder {
  const el = parent.ele(EUDR_COMMON_NS, `eudrCommon:${name}`);
  return text === undefined ? el : el.txt(text);
}
