import * as v from 'valibot';

/**
 * The field formats every request schema shares (shared/http/schemas.ts and its parts): ids,
 * texts, coordinates, money, dates, contact fields. Kept apart so a handler's bundle carries only
 * the schemas it validates.
 */

// ------------------------------------------------------------------ numbers

/**
 * The number of decimal places of a finite number as JSON wrote it (its shortest round-trip
 * form): 12.5 → 1, 1e-7 → 7, 1.5e-300 → 301, 1200 → 0. Infinity and NaN → Infinity.
 */
export function decimalPlaces(x: number): number {
  const m = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  return m ? Math.max(0, (m[1]?.length ?? 0) - Number(m[2] ?? 0)) : Infinity;
}

/** The issue of {@link maxDecimals}. */
interface MaxDecimalsIssue extends v.BaseIssue<number> {
  readonly kind: 'validation';
  readonly type: 'max_decimals';
  readonly expected: string;
  readonly requirement: number;
}

/** The action of {@link maxDecimals}; the OpenAPI converter renders it as `multipleOf: 10^-n`. */
export interface MaxDecimalsAction extends v.BaseValidation<number, number, MaxDecimalsIssue> {
  readonly type: 'max_decimals';
  readonly reference: typeof maxDecimals;
  readonly expects: string;
  /** The largest number of decimal places accepted. */
  readonly requirement: number;
  readonly message: string;
}

/**
 * valibot action: the number has at most `n` decimal places (see {@link decimalPlaces}), so a
 * value like 1.5e-300 (which DynamoDB cannot store) or 12.3456 kg is a VALIDATION_ERROR rather
 * than a silent rounding or a 500. Issue type `max_decimals`. ±Infinity is left to the range
 * check that every number field has (JSON `1e400` parses to Infinity).
 */
/* @__NO_SIDE_EFFECTS__ */
export function maxDecimals(n: number, message = `must have at most ${n} decimal places`): MaxDecimalsAction {
  const expects = `<=${n} decimals`;
  return {
    kind: 'validation',
    type: 'max_decimals',
    reference: maxDecimals,
    async: false,
    expects,
    requirement: n,
    message,
    '~run'(dataset, config) {
      if (dataset.typed && Number.isFinite(dataset.value) && decimalPlaces(dataset.value) > n) {
        const issue: MaxDecimalsIssue = {
          kind: 'validation',
          type: 'max_decimals',
          input: dataset.value,
          expected: expects,
          received: String(dataset.value),
          message,
          requirement: n,
          lang: config.lang,
          abortEarly: config.abortEarly,
          abortPipeEarly: config.abortPipeEarly,
        };
        (dataset as { issues?: v.BaseIssue<unknown>[] }).issues = [...(dataset.issues ?? []), issue];
      }
      return dataset;
    },
  };
}

/**
 * A JSON number in [min, max] (so finite) with at most `decimals` decimal places (docs/api/conventions.md#http-and-errors:
 * no input gets a 5xx; every number the service stores fits DynamoDB and the field's unit).
 */
/* @__NO_SIDE_EFFECTS__ */
export function BoundedNumber(min: number, max: number, decimals: number) {
  return v.pipe(v.number(), v.minValue(min), v.maxValue(max), maxDecimals(decimals));
}

// ------------------------------------------------------------------ fields

export const Id = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1),
  v.maxLength(64),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'must contain only letters, digits, and _ . : -'),
);
export const NonEmpty = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
/** WGS84 latitude in degrees, at most 7 decimals (about 1 cm). */
export const Lat = BoundedNumber(-90, 90, 7);
/** WGS84 longitude in degrees, at most 7 decimals (about 1 cm). */
export const Lng = BoundedNumber(-180, 180, 7);
export const GpsSchema = v.strictObject({ lat: Lat, lng: Lng });
export const DateOnly = v.pipe(v.string(), v.isoDate('must be a date YYYY-MM-DD'));
export const PriceUgx = v.pipe(v.number(), v.integer('must be whole shillings'), v.minValue(0), v.maxValue(1_000_000));
export const Email = v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254));
export const Phone = v.pipe(v.string(), v.trim(), v.regex(/^\+256\d{9}$/, 'must be an E.164 Ugandan number: +256 followed by 9 digits'));

/** A trimmed, non-empty text of at most `max` characters. */
export const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
/**
 * A batch id `BATCH-<yyyy>-<nnnnnn>`: 6 to 12 digits (the BatchToken id is yyyy × 10^12 + n, so
 * no batch number has more than 12; shared/domain/ids.ts).
 */
export const BatchIdSchema = v.pipe(v.string(), v.regex(/^BATCH-\d{4}-\d{6,12}$/, 'must be a batch id BATCH-<yyyy>-<nnnnnn>'));
