import * as v from 'valibot';
import { Phone } from './schema-parts';

/** Bodies of PATCH /farmers/{id} and POST /payments/farmer-payout/{id}/resolve (docs/api/payouts.md#manual-review). */

/** PATCH /farmers/{id}: the phone, E.164 `+256…` (the use case applies the mobile-number rule of registration). */
export const UpdateFarmerSchema = v.strictObject({ phone: Phone });

/** A cash receipt number as the cooperative's receipt book prints it: 1–64 letters, digits and `/ _ . -`. */
const ReceiptNumber = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9/_.-]{0,63}$/, 'must be 1 to 64 letters, digits and / _ . - (starting with a letter or digit)'),
);

/** ISO 8601 UTC with `Z` (seconds, optional fraction). */
const UtcTimestamp = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, 'must be an ISO 8601 UTC timestamp, e.g. 2026-05-01T09:30:00Z'),
  v.check((s) => {
    const t = Date.parse(s);
    return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 19) === s.slice(0, 19);
  }, 'must be a real date and time'),
);

/** POST /payments/farmer-payout/{id}/resolve: paid in cash at the office, or a retry to the farmer's current phone. */
export const ResolvePayoutSchema = v.variant('resolution', [
  v.strictObject({ resolution: v.literal('PAID_IN_CASH'), receipt_number: ReceiptNumber, paid_at: UtcTimestamp }),
  v.strictObject({ resolution: v.literal('RETRY') }),
]);
