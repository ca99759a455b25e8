import * as v from 'valibot';
import { PAYOUT_REASONS } from '../domain/records';
import { BatchIdSchema, Id, maxDecimals } from './schema-parts';

/** Payout request, listing and provider-webhook schemas (re-exported by shared/http/schemas.ts). */

export const FarmerPayoutSchema = v.strictObject({
  farmer_id: Id,
  batch_id: BatchIdSchema,
  /** USDC, > 0, at most 100000, at most 6 decimals (micro-USDC). */
  amount_usdc: v.pipe(
    v.number(),
    v.gtValue(0, 'must be greater than 0'),
    v.maxValue(100_000, 'must be at most 100000 USDC per payout'),
    maxDecimals(6),
  ),
  reason: v.picklist(PAYOUT_REASONS),
  cooperative_id: Id,
});

export const ListPaymentsQuerySchema = v.strictObject({
  batch_id: BatchIdSchema,
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(1), v.maxValue(100)),
    '50',
  ),
  next_token: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

/** Standard Webhooks body of the payout provider (docs/api/inbound-webhooks.md#payout-provider-webhook). */
export const PayoutWebhookSchema = v.object({
  type: v.picklist(['order.settled', 'order.failed']),
  data: v.object({
    order_id: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
    reference: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
    amount_ugx: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER)))),
    exchange_rate: v.optional(
      v.nullable(v.union([v.pipe(v.string(), v.maxLength(64)), v.pipe(v.number(), v.minValue(0), v.maxValue(1e12))])),
    ),
    mobile_money_transaction_id: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(256)))),
    settled_at: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(64)))),
    failure_reason: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2048)))),
  }),
});

/**
 * pawaPay's payout callback body (docs/api/inbound-webhooks.md#pawapay-callback;
 * https://docs.pawapay.io/v2/api-reference/payouts/payout-callback): only `payoutId` and `status`
 * are read, the rest is pawaPay's record of the payout, which the service reads again from pawaPay.
 */
export const PawaPayCallbackSchema = v.looseObject({
  payoutId: v.pipe(v.string(), v.uuid()),
  status: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
});
