import * as v from 'valibot';
import { GRADES, LICENCE_STATUSES, PAYOUT_REASONS, STAGES } from '../domain/records';

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

// ------------------------------------------------------------------ custody trail (decisions §8)

const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
const IsoDateTime = v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 timestamp'));
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
/** ISO 3166-1 alpha-2, checked against the ICU region list Node ships. */
export const CountryCode = v.pipe(
  v.string(),
  v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code (two capital letters)'),
  v.check((c) => { try { return regionNames.of(c) !== c; } catch { return false; } }, 'is not an ISO 3166-1 alpha-2 country code'),
);

/** GRADED evidence: grade data is mandatory (grade outside the set → INVALID_GRADE). */
export const GradedEvidenceSchema = v.strictObject({
  grade: v.picklist(GRADES, 'must be one of screen18, screen15, FAQ, PB'),
  moisture_pct: v.pipe(v.number(), v.minValue(0), v.maxValue(100)),
  screen_size: v.optional(v.pipe(v.number(), v.minValue(8), v.maxValue(20))),
  defect_count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  cupping_score: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
  notes: v.optional(Text(2000)),
});
/** MILLED evidence (decisions §8): outturn at most the batch weight (checked against the batch). */
export const MilledEvidenceSchema = v.strictObject({
  mill_id: Text(64),
  outturn_kg: v.pipe(v.number(), v.gtValue(0, 'must be greater than 0')),
  milled_at: v.optional(IsoDateTime),
});
/** WAREHOUSED evidence: a warehouse reference is mandatory. */
export const WarehousedEvidenceSchema = v.strictObject({
  warehouse_id: Text(64),
  lot_number: v.optional(Text(64)),
  position: v.optional(Text(64)),
});
/** EXPORTED evidence: the export permit reference is mandatory; destination ISO 3166 alpha-2. */
export const ExportedEvidenceSchema = v.strictObject({
  export_permit: Text(64),
  destination_country: CountryCode,
  vessel_name: v.optional(Text(120)),
  bill_of_lading: v.optional(Text(64)),
});
export const EVIDENCE_SCHEMAS = {
  GRADED: GradedEvidenceSchema,
  MILLED: MilledEvidenceSchema,
  WAREHOUSED: WarehousedEvidenceSchema,
  EXPORTED: ExportedEvidenceSchema,
} as const;

/** Fields every stage update carries besides its stage and evidence. */
const StageUpdateCommon = {
  evidence_photo_base64: v.optional(v.pipe(v.string(), v.maxLength(6 * 1024 * 1024))),
  cooperative_id: Id,
};

/**
 * PATCH /batch/{id}/stage: one body schema per `new_stage`, each with its evidence schema.
 * COMMITTED and SETTLED are not among them (set by the system only).
 */
export const StageUpdateSchema = v.variant('new_stage', [
  v.strictObject({ new_stage: v.literal('GRADED'), evidence: GradedEvidenceSchema, ...StageUpdateCommon }),
  v.strictObject({ new_stage: v.literal('MILLED'), evidence: MilledEvidenceSchema, ...StageUpdateCommon }),
  v.strictObject({ new_stage: v.literal('WAREHOUSED'), evidence: WarehousedEvidenceSchema, ...StageUpdateCommon }),
  v.strictObject({ new_stage: v.literal('EXPORTED'), evidence: ExportedEvidenceSchema, ...StageUpdateCommon }),
], 'must be one of GRADED, MILLED, WAREHOUSED, EXPORTED (COMMITTED and SETTLED are set by the system)');

/** A grade outside the set in GRADED evidence is INVALID_GRADE, not VALIDATION_ERROR. */
export const STAGE_UPDATE_ISSUE_CODES = [{ path: 'evidence.grade', types: ['picklist'], code: 'INVALID_GRADE' as const }];

const BatchIdSchema = v.pipe(v.string(), v.regex(/^BATCH-\d{4}-\d{6,}$/, 'must be a batch id BATCH-<yyyy>-<nnnnnn>'));

export const CreatePurchaseOrderSchema = v.strictObject({
  batch_ids: v.pipe(v.array(BatchIdSchema), v.minLength(1), v.maxLength(40), v.check((a) => new Set(a).size === a.length, 'must not repeat a batch')),
  buyer: Text(200),
  price_usd_per_kg: v.pipe(v.number(), v.gtValue(0), v.maxValue(1000)),
  buyer_operator: v.optional(v.strictObject({
    name: Text(200),
    eori: v.pipe(v.string(), v.regex(/^[A-Z]{2}[A-Za-z0-9]{1,15}$/, 'must be an EORI number: country code and up to 15 characters')),
    address: Text(300),
    email: v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254)),
    country: CountryCode,
  })),
});

// ------------------------------------------------------------------ EUDR (decisions §9)

export const VerifyGfwSchema = v.strictObject({ farmer_id: Id });

export const GenerateDdsSchema = v.strictObject({
  batch_id: BatchIdSchema,
  description: v.optional(Text(150)),
});

// ------------------------------------------------------------------ chain events (decisions §6)

/** The signed body of POST /api/webhooks/chain-events: `{type: "batch.stage_changed", data: {…}}`. */
export const ChainEventSchema = v.object({
  type: v.literal('batch.stage_changed'),
  data: v.object({
    batch_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
    /** uint256 token id as a decimal string (a safe integer number is accepted too). */
    token_id: v.union([
      v.pipe(v.string(), v.regex(/^\d{1,78}$/, 'must be a decimal uint256')),
      v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER)),
    ]),
    stage: v.picklist(STAGES),
    tx_hash: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 32-byte 0x hex hash')),
    block_number: v.pipe(v.number(), v.integer(), v.minValue(0)),
    log_index: v.pipe(v.number(), v.integer(), v.minValue(0)),
  }),
});
