/**
 * The price-feed document both price-feed adapters read (docs/api/lending.md#price-feed), the same shape from the
 * local file and from the configured HTTP source:
 *
 *   { "updated_at": "2026-11-22T08:00:00Z",
 *     "usd_per_kg": { "screen18": 6.2, "screen15": 5.8, "FAQ": 5.1, "PB": 6.0 } }
 *
 * `updated_at`: ISO 8601 with a time zone (when the source published the prices). `usd_per_kg`:
 * USD per kg of green coffee for every grade of the specification, each a JSON number or a decimal
 * string, ≥ 0, with at most 6 decimals; converted to integer micro-USD through the decimal text
 * (6.2 → 6_200_000 exactly, no float arithmetic). Unknown fields are ignored (a published source may
 * carry more), a missing grade is an error.
 */
import * as v from 'valibot';
import { decimalStringToMicro } from '../../domain/money';
import type { PriceFeedSnapshot } from '../../domain/lending';
import { GRADES, type Grade } from '../../domain/records';

/** A USD decimal as JSON number or string: ≥ 0, at most 6 decimals, at most 1,000,000 USD/kg. */
const UsdDecimal = v.pipe(
  v.union([
    v.pipe(
      v.number(),
      v.finite(),
      v.transform((n) => String(n)),
    ),
    v.string(),
  ]),
  v.regex(/^\d{1,7}(\.\d{1,6})?$/, 'must be a USD amount ≥ 0 with at most 6 decimals'),
);

const IsoTime = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/, 'must be an ISO 8601 date-time with a time zone'),
  v.check((s) => Number.isFinite(Date.parse(s)), 'must be a valid date-time'),
);

/** The document's schema (valibot). */
const PriceFeedDocumentSchema = v.object({
  updated_at: IsoTime,
  usd_per_kg: v.object(Object.fromEntries(GRADES.map((g) => [g, UsdDecimal])) as Record<Grade, typeof UsdDecimal>),
});

/**
 * Validates a parsed document and converts it to a snapshot from `source`.
 * @throws Error naming `source` and each problem (path: message) when the document is malformed
 */
function snapshotFromDocument(body: unknown, source: string): PriceFeedSnapshot {
  const r = v.safeParse(PriceFeedDocumentSchema, body);
  if (!r.success) {
    const problems = r.issues.map((i) => `${v.getDotPath(i) ?? '(document)'}: ${i.message}`).join('; ');
    throw new Error(`Malformed price feed at ${source}: ${problems}`);
  }
  const usd_micro_per_kg = Object.fromEntries(GRADES.map((g) => [g, decimalStringToMicro(r.output.usd_per_kg[g])])) as Record<
    Grade,
    number
  >;
  return { updated_at: new Date(Date.parse(r.output.updated_at)).toISOString(), usd_micro_per_kg, source };
}

/**
 * Parses the document's JSON text from `source`.
 * @throws Error naming `source` when the text is not JSON or the document is malformed
 */
export function snapshotFromText(text: string, source: string): PriceFeedSnapshot {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`Malformed price feed at ${source}: not JSON`);
  }
  return snapshotFromDocument(body, source);
}
