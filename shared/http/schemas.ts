import * as v from 'valibot';
import { GRADES, LICENCE_STATUSES, PAYOUT_REASONS } from '../domain/records';

/**
 * Request schemas (valibot). The same objects validate requests in the handlers and generate the
 * OpenAPI document (shared/http/openapi.ts), so the two cannot drift apart. Objects are strict:
 * an unknown field is a VALIDATION_ERROR naming it (decisions §5).
 */

const Id = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(64), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'must contain only letters, digits, and _ . : -'));
const NonEmpty = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
const Lat = v.pipe(v.number(), v.minValue(-90), v.maxValue(90));
const Lng = v.pipe(v.number(), v.minValue(-180), v.maxValue(180));
export const GpsSchema = v.strictObject({ lat: Lat, lng: Lng });
const DateOnly = v.pipe(v.string(), v.isoDate('must be a date YYYY-MM-DD'));
const PriceUgx = v.pipe(v.number(), v.integer('must be whole shillings'), v.minValue(0), v.maxValue(1_000_000));
const Email = v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254));
const Phone = v.pipe(v.string(), v.trim(), v.regex(/^\+256\d{9}$/, 'must be an E.164 Ugandan number: +256 followed by 9 digits'));

export const ManagerSchema = v.strictObject({ name: NonEmpty(120), email: Email, phone: Phone });
export const PricesSchema = v.strictObject({ screen18: PriceUgx, screen15: PriceUgx, FAQ: PriceUgx, PB: PriceUgx });

export const CreateCooperativeSchema = v.strictObject({
  cooperative_id: Id,
  name: NonEmpty(200),
  district: NonEmpty(100),
  licence_status: v.picklist(LICENCE_STATUSES),
  licence_expires_at: DateOnly,
  manager: ManagerSchema,
  prices_ugx_per_kg: PricesSchema,
  export_premium_ugx_per_kg: PriceUgx,
});

export const UpdateCooperativeSchema = v.pipe(
  v.strictObject({
    name: v.optional(NonEmpty(200)),
    district: v.optional(NonEmpty(100)),
    licence_status: v.optional(v.picklist(LICENCE_STATUSES)),
    licence_expires_at: v.optional(DateOnly),
    manager: v.optional(ManagerSchema),
    prices_ugx_per_kg: v.optional(PricesSchema),
    export_premium_ugx_per_kg: v.optional(PriceUgx),
  }),
  v.check((o) => Object.values(o).some((x) => x !== undefined), 'at least one field to change is required'),
);

const Position = v.pipe(v.array(v.number()), v.length(2, 'a position is [lng, lat]'));
export const PolygonSchema = v.strictObject({
  type: v.literal('Polygon'),
  coordinates: v.pipe(v.array(v.pipe(v.array(Position), v.minLength(4, 'a ring needs at least 4 positions'))), v.minLength(1)),
});

export const RegisterFarmerSchema = v.strictObject({
  farmer_id: Id,
  full_name: NonEmpty(200),
  cooperative_id: Id,
  phone: v.optional(Phone),
  district: NonEmpty(100),
  farm: v.strictObject({
    gps: GpsSchema,
    polygon: v.optional(PolygonSchema),
    area_ha: v.pipe(v.number(), v.gtValue(0, 'must be greater than 0'), v.maxValue(10_000)),
  }),
});

export const SubmitBatchSchema = v.strictObject({
  farmer_id: Id,
  cooperative_id: Id,
  weight_kg: v.pipe(v.number(), v.minValue(1, 'must be at least 1 kg'), v.maxValue(5000, 'must be at most 5000 kg')),
  grade: v.picklist(GRADES, 'must be one of screen18, screen15, FAQ, PB'),
  moisture_pct: v.pipe(v.number(), v.minValue(0), v.maxValue(100)),
  collection_point_gps: GpsSchema,
  weight_slip_photo_url: v.optional(v.pipe(v.string(), v.regex(/^ipfs:\/\/[A-Za-z0-9]+(\/[^\s]*)?$/, 'must be an ipfs:// URL'), v.maxLength(512))),
  collector_agent_id: Id,
});

export const FarmerPayoutSchema = v.strictObject({
  farmer_id: Id,
  batch_id: v.pipe(v.string(), v.regex(/^BATCH-\d{4}-\d{6,}$/, 'must be a batch id BATCH-<yyyy>-<nnnnnn>')),
  amount_usdc: v.pipe(v.number(), v.gtValue(0, 'must be greater than 0'), v.maxValue(100_000, 'must be at most 100000 USDC per payout')),
  reason: v.picklist(PAYOUT_REASONS),
  cooperative_id: Id,
});

export const ListPaymentsQuerySchema = v.strictObject({
  batch_id: v.pipe(v.string(), v.regex(/^BATCH-\d{4}-\d{6,}$/, 'must be a batch id BATCH-<yyyy>-<nnnnnn>')),
  limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(1), v.maxValue(100)), '50'),
  next_token: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

/** Standard Webhooks body of the payout provider (decisions §6). */
export const PayoutWebhookSchema = v.object({
  type: v.picklist(['order.settled', 'order.failed']),
  data: v.object({
    order_id: v.pipe(v.string(), v.minLength(1)),
    reference: v.pipe(v.string(), v.minLength(1)),
    amount_ugx: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0)))),
    exchange_rate: v.optional(v.nullable(v.union([v.string(), v.number()]))),
    mobile_money_transaction_id: v.optional(v.nullable(v.string())),
    settled_at: v.optional(v.nullable(v.string())),
    failure_reason: v.optional(v.nullable(v.string())),
  }),
});
