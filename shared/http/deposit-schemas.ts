import * as v from 'valibot';
import { DEPOSIT_SOURCE_CURRENCIES, MAX_DEPOSIT_SOURCE_AMOUNT } from '../domain/deposits';
import { Id } from './schema-parts';

/**
 * `POST /mfi/deposits` body: `source_currency` one of the on-ramp's supported ISO 4217 codes,
 * `source_amount` whole units of it (integer, 1 … MAX_DEPOSIT_SOURCE_AMOUNT); `mfi_id` for ADMIN.
 */
export const CreateDepositSchema = v.strictObject({
  source_currency: v.picklist(DEPOSIT_SOURCE_CURRENCIES, `must be one of ${DEPOSIT_SOURCE_CURRENCIES.join(', ')} (ISO 4217)`),
  source_amount: v.pipe(
    v.number(),
    v.safeInteger('must be a whole amount of the source currency'),
    v.minValue(1, 'must be greater than 0'),
    v.maxValue(MAX_DEPOSIT_SOURCE_AMOUNT, `must be at most ${MAX_DEPOSIT_SOURCE_AMOUNT}`),
  ),
  mfi_id: v.optional(Id),
});

const Str = (max: number) => v.pipe(v.string(), v.minLength(1), v.maxLength(max));

/** The on-ramp's webhook body (see shared/adapters/onramp/http-onramp.ts); unknown fields are tolerated. */
export const OnRampWebhookSchema = v.object({
  type: v.picklist(['onramp.order.completed', 'onramp.order.reversed', 'onramp.order.failed']),
  data: v.object({
    ramp_payment_id: Str(256),
    reference: Str(256),
    source_currency: v.optional(v.nullable(Str(8))),
    source_amount: v.optional(v.nullable(v.pipe(v.number(), v.safeInteger(), v.minValue(0)))),
    usdc_amount: v.optional(v.nullable(Str(32))),
    transfer_tx_hash: v.optional(v.nullable(Str(80))),
    completed_at: v.optional(v.nullable(Str(64))),
    reversed_at: v.optional(v.nullable(Str(64))),
    failure_reason: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2048)))),
  }),
});
