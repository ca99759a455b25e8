/**
 * Request schemas (valibot). The same objects validate requests in the handlers and generate the
 * OpenAPI document (shared/http/openapi.ts), so the two cannot drift apart. Objects are strict:
 * an unknown field is a VALIDATION_ERROR naming it (docs/api/conventions.md#http-and-errors).
 */

import * as v from 'valibot';
import { MAX_PURCHASE_ORDER_BATCHES } from '../domain/purchase-order-limits';
import { GRADES, STAGES } from '../domain/records';
import { LEDGER_ADDRESS } from '../domain/lending';
import { BatchIdSchema, BoundedNumber, GpsSchema, Id, maxDecimals, Text } from './schema-parts';
import { EvidenceUploadIdSchema } from './evidence-upload-schemas';
import { PurchaseOrderIdParam } from './path-params';

export { FarmerPayoutSchema } from './payout-schemas';
export { CreateCooperativeSchema, FarmSchema, RegisterFarmerSchema, UpdateCooperativeSchema } from './registry-schemas';

export const SubmitBatchSchema = v.strictObject({
  farmer_id: Id,
  cooperative_id: Id,
  /** Kilograms, 1–5000, at most 3 decimals (grams). */
  weight_kg: v.pipe(v.number(), v.minValue(1, 'must be at least 1 kg'), v.maxValue(5000, 'must be at most 5000 kg'), maxDecimals(3)),
  grade: v.picklist(GRADES, 'must be one of screen18, screen15, FAQ, PB'),
  /** Percent, 0–100, at most 2 decimals. */
  moisture_pct: BoundedNumber(0, 100, 2),
  collection_point_gps: GpsSchema,
  weight_slip_photo_url: v.optional(
    v.pipe(v.string(), v.regex(/^ipfs:\/\/[A-Za-z0-9]+(\/[^\s]*)?$/, 'must be an ipfs:// URL'), v.maxLength(512)),
  ),
  collector_agent_id: Id,
});

// ------------------------------------------------------------------ custody trail (docs/api/batches-and-custody.md#custody-trail)

const IsoDateTime = v.pipe(v.string(), v.isoTimestamp('must be an ISO 8601 timestamp'));
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
/** ISO 3166-1 alpha-2, checked against the ICU region list Node ships. */
const CountryCode = v.pipe(
  v.string(),
  v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code (two capital letters)'),
  v.check((c) => {
    try {
      return regionNames.of(c) !== c;
    } catch {
      return false;
    }
  }, 'is not an ISO 3166-1 alpha-2 country code'),
);

/** GRADED evidence: grade data is mandatory (grade outside the set → INVALID_GRADE). */
const GradedEvidenceSchema = v.strictObject({
  grade: v.picklist(GRADES, 'must be one of screen18, screen15, FAQ, PB'),
  moisture_pct: BoundedNumber(0, 100, 2),
  /** Screen size in 64ths of an inch, 8–20, at most 1 decimal. */
  screen_size: v.optional(BoundedNumber(8, 20, 1)),
  /** Defects counted in the sample: a whole number, at most 10000. */
  defect_count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10_000))),
  /** SCA cupping score, 0–100, at most 2 decimals. */
  cupping_score: v.optional(BoundedNumber(0, 100, 2)),
  notes: v.optional(Text(2000)),
});
/** MILLED evidence (docs/api/batches-and-custody.md#custody-trail): outturn at most the batch weight (checked against the batch). */
export const MilledEvidenceSchema = v.strictObject({
  mill_id: Text(64),
  /** Kilograms, > 0, at most 5000 (and the batch weight), at most 3 decimals. */
  outturn_kg: v.pipe(v.number(), v.gtValue(0, 'must be greater than 0'), v.maxValue(5000, 'must be at most 5000 kg'), maxDecimals(3)),
  milled_at: v.optional(IsoDateTime),
});
/** WAREHOUSED evidence: a warehouse reference is mandatory. */
const WarehousedEvidenceSchema = v.strictObject({
  warehouse_id: Text(64),
  lot_number: v.optional(Text(64)),
  position: v.optional(Text(64)),
});
/** EXPORTED evidence: the export permit reference is mandatory; destination ISO 3166 alpha-2. */
const ExportedEvidenceSchema = v.strictObject({
  export_permit: Text(64),
  destination_country: CountryCode,
  vessel_name: v.optional(Text(120)),
  bill_of_lading: v.optional(Text(64)),
});

/** Fields every stage update carries besides its stage and evidence. */
const StageUpdateCommon = {
  evidence_photo_base64: v.optional(v.pipe(v.string(), v.maxLength(6 * 1024 * 1024))),
  /** The photo by upload URL instead (docs/api/evidence.md#evidence-photos-by-upload-url): an id from POST /batch/{id}/evidence-uploads; not with evidence_photo_base64. */
  evidence_upload_id: v.optional(EvidenceUploadIdSchema),
  cooperative_id: Id,
};

/**
 * PATCH /batch/{id}/stage: one body schema per `new_stage`, each with its evidence schema.
 * COMMITTED and SETTLED are not among them (set by the system only).
 */
export const StageUpdateSchema = v.variant(
  'new_stage',
  [
    v.strictObject({ new_stage: v.literal('GRADED'), evidence: GradedEvidenceSchema, ...StageUpdateCommon }),
    v.strictObject({ new_stage: v.literal('MILLED'), evidence: MilledEvidenceSchema, ...StageUpdateCommon }),
    v.strictObject({ new_stage: v.literal('WAREHOUSED'), evidence: WarehousedEvidenceSchema, ...StageUpdateCommon }),
    v.strictObject({ new_stage: v.literal('EXPORTED'), evidence: ExportedEvidenceSchema, ...StageUpdateCommon }),
  ],
  'must be one of GRADED, MILLED, WAREHOUSED, EXPORTED (COMMITTED and SETTLED are set by the system)',
);

/** A grade outside the set in GRADED evidence is INVALID_GRADE, not VALIDATION_ERROR. */
export const STAGE_UPDATE_ISSUE_CODES = [{ path: 'evidence.grade', types: ['picklist'], code: 'INVALID_GRADE' as const }];

export const CreatePurchaseOrderSchema = v.strictObject({
  batch_ids: v.pipe(
    v.array(BatchIdSchema),
    v.minLength(1),
    v.maxLength(MAX_PURCHASE_ORDER_BATCHES),
    v.check((a) => new Set(a).size === a.length, 'must not repeat a batch'),
  ),
  buyer: Text(200),
  /** US dollars per kg, > 0, at most 1000, at most 4 decimals. */
  price_usd_per_kg: v.pipe(v.number(), v.gtValue(0), v.maxValue(1000), maxDecimals(4)),
  buyer_operator: v.optional(
    v.strictObject({
      name: Text(200),
      eori: v.pipe(v.string(), v.regex(/^[A-Z]{2}[A-Za-z0-9]{1,15}$/, 'must be an EORI number: country code and up to 15 characters')),
      address: Text(300),
      email: v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254)),
      country: CountryCode,
    }),
  ),
  /** The ledger address the buyer pays from; when named, payments from other addresses do not count toward the order. */
  buyer_address: v.optional(v.pipe(v.string(), v.regex(LEDGER_ADDRESS, 'must be a ledger address: 0x and 40 hex digits'))),
});

/** POST /purchase-orders/{id}/settle: an ADMIN settles the order on what is paid (below the amount due only with accept_short_payment). */
export const SettlePurchaseOrderSchema = v.strictObject({
  accept_short_payment: v.optional(v.boolean(), false),
});

/** POST /purchase-orders/{id}/refunds: the unapplied buyer payment to return to its payer. */
export const RefundBuyerPaymentSchema = v.strictObject({
  tx_hash: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/, 'must be a transaction hash: 0x and 64 hex digits')),
  log_index: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000)),
});

// ------------------------------------------------------------------ EUDR (docs/api/eudr.md#eudr)

export const VerifyGfwSchema = v.strictObject({ farmer_id: Id });

/** `{batch_id}` (a batch's statement) or `{purchase_order_id}` (a shipment's), never both. */
export const GenerateDdsSchema = v.union([
  v.strictObject({ batch_id: BatchIdSchema, description: v.optional(Text(150)) }),
  v.strictObject({ purchase_order_id: PurchaseOrderIdParam, description: v.optional(Text(150)) }),
]);

// ------------------------------------------------------------------ chain events (docs/api/inbound-webhooks.md#chain-events)

/** The signed body of POST /api/webhooks/chain-events: `{type: "batch.stage_changed", data: {…}}`. */
/** A `purchase_order.paid` chain event: a buyer's payment into the lending vault (`PurchaseOrderPaid`). */
const BuyerPaymentEventSchema = v.object({
  type: v.literal('purchase_order.paid'),
  data: v.object({
    purchase_order_id: v.pipe(
      v.string(),
      v.regex(/^PO-[A-Za-z0-9][A-Za-z0-9_.:-]{0,29}$/, 'must be a purchase order id PO-… (at most 32 characters)'),
    ),
    payer: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 20-byte 0x address')),
    /** uint256 micro-USDC as a decimal string. */
    amount_usd_micro: v.pipe(v.string(), v.regex(/^\d{1,30}$/, 'must be a decimal amount of micro-USDC')),
    tx_hash: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 32-byte 0x hex hash')),
    block_number: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER)),
    log_index: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER)),
  }),
});

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
    block_number: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER)),
    log_index: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER)),
  }),
});

/** Every chain event the chain-events webhook takes: custody stages and buyer payments. */
export const AnyChainEventSchema = v.variant('type', [ChainEventSchema, BuyerPaymentEventSchema]);
