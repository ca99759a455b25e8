import * as v from 'valibot';

/**
 * The field formats every request schema shares (shared/http/schemas.ts and its parts): ids,
 * texts, coordinates, money, dates, contact fields. Kept apart so a handler's bundle carries only
 * the schemas it validates.
 */

export const Id = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(64), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'must contain only letters, digits, and _ . : -'));
export const NonEmpty = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
export const Lat = v.pipe(v.number(), v.minValue(-90), v.maxValue(90));
export const Lng = v.pipe(v.number(), v.minValue(-180), v.maxValue(180));
export const GpsSchema = v.strictObject({ lat: Lat, lng: Lng });
export const DateOnly = v.pipe(v.string(), v.isoDate('must be a date YYYY-MM-DD'));
export const PriceUgx = v.pipe(v.number(), v.integer('must be whole shillings'), v.minValue(0), v.maxValue(1_000_000));
export const Email = v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254));
export const Phone = v.pipe(v.string(), v.trim(), v.regex(/^\+256\d{9}$/, 'must be an E.164 Ugandan number: +256 followed by 9 digits'));

/** A trimmed, non-empty text of at most `max` characters. */
export const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
/** A batch id `BATCH-<yyyy>-<nnnnnn>`. */
export const BatchIdSchema = v.pipe(v.string(), v.regex(/^BATCH-\d{4}-\d{6,}$/, 'must be a batch id BATCH-<yyyy>-<nnnnnn>'));
