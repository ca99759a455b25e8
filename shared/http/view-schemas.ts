import { FAILURE_REASONS } from '../domain/payout-failures';
import * as v from 'valibot';
import { ERROR_CODES } from './error-codes';

/**
 * The response bodies of the API, declared: one valibot schema per view. The views
 * (views.ts, deposit-views.ts, outbound-webhook-schemas.ts, evidence-upload-schemas.ts) are typed
 * against these (`v.InferOutput`), and the OpenAPI document's response schemas are made from them
 * (openapi-responses.ts), so the document says what the code sends. Objects are open (`v.object`):
 * every listed field is present (null where a state has no value yet); a field added to a view
 * without its schema is a type error.
 *
 * Units: `*_usdc` are USDC as JSON numbers with at most 6 decimals; `*_ugx` whole shillings;
 * `*_usd_micro` integers of micro-USDC; weights in kg are numbers (120.5 is a weight).
 */

const Str = v.string();
const NStr = v.nullable(v.string());
const Int = v.pipe(v.number(), v.integer());
const NInt = v.nullable(Int);
const Num = v.number();
const NNum = v.nullable(v.number());
const Time = v.pipe(v.string(), v.description('ISO 8601 UTC timestamp'));
const NTime = v.nullable(Time);
const Usdc = v.pipe(v.number(), v.description('USDC, at most 6 decimals'));
const NUsdc = v.nullable(Usdc);
const Ugx = v.pipe(v.number(), v.integer(), v.description('UGX, whole shillings'));
const Gps = v.object({ lat: Num, lng: Num });

// ---------------------------------------------------------------------------- error envelope

/** `{error: {code, message, docs, request_id, details?}}`: every error the service answers. */
const ErrorBodySchema = v.object({
  code: v.picklist(Object.keys(ERROR_CODES) as [string, ...string[]]),
  message: Str,
  docs: v.pipe(v.string(), v.description('Link to the code in the error reference: <docs base>/errors#CODE (GET /docs/errors).')),
  request_id: v.pipe(v.string(), v.description('ULID; also in the x-request-id header and the logs.')),
  details: v.optional(
    v.pipe(v.unknown(), v.description('VALIDATION_ERROR: [{path, message}]; other codes: an object of facts about the refusal.')),
  ),
});

// ---------------------------------------------------------------------------- registry

export const CooperativeViewSchema = v.object({
  cooperative_id: Str,
  name: Str,
  district: Str,
  licence_status: Str,
  licence_expires_at: Str,
  manager: v.object({ name: Str, email: Str, phone: v.pipe(v.string(), v.description('masked')) }),
  prices_ugx_per_kg: v.record(v.string(), Ugx),
  export_premium_ugx_per_kg: Ugx,
  created_at: Time,
  updated_at: Time,
  active: v.boolean(),
});

export const HoldingBalanceViewSchema = v.object({ cooperative_id: Str, held_usdc: Usdc, payouts_held: Int, updated_at: NTime });

const PhoneChangeSchema = v.object({ at: Time, actor: Str, actor_role: Str, previous_phone: NStr, phone: Str });

export const FarmerViewSchema = v.object({
  farmer_id: Str,
  full_name: Str,
  cooperative_id: Str,
  phone: v.pipe(v.nullable(v.string()), v.description('masked; null when the farmer has no phone')),
  district: Str,
  farm: v.object({
    gps: Gps,
    polygon: v.optional(v.object({ type: v.literal('Polygon'), coordinates: v.array(v.array(v.array(Num))) })),
    area_ha: Num,
    computed_area_ha: v.optional(NNum),
  }),
  gfw_status: v.picklist(['CLEAR', 'FLAGGED', 'PENDING']),
  national_registry_status: v.picklist(['VERIFIED', 'PENDING', 'REJECTED']),
  gfw_checked_at: v.optional(Time),
  gfw_dataset: v.optional(v.object({ name: Str, version: Str })),
  registered_at: Time,
  phone_changes: v.optional(v.array(PhoneChangeSchema)),
  phone_updated_at: v.optional(Time),
  farm_changes: v.optional(v.array(v.object({ at: Time, actor: Str, actor_role: Str, previous_farm_sha256: Str, farm_sha256: Str }))),
  farm_updated_at: v.optional(Time),
});

export const FlaggedFarmsViewSchema = v.object({ cooperative_id: Str, farmers: v.array(FarmerViewSchema), total: Int });

/** 202 of POST /farmers when the national registry does not answer: the pending envelope with the job and the farmer. */
export const FarmerPendingViewSchema = v.object({ error: ErrorBodySchema, job_id: Str, status: Str, farmer: FarmerViewSchema });

export const CreditScoreViewSchema = v.object({
  farmer_id: Str,
  score: Int,
  band: Str,
  computed_at: Time,
  formula_version: Str,
  factors: v.array(v.object({ name: Str, value: Num, effect: Num })),
});

export const ForestCheckViewSchema = v.object({
  farmer_id: Str,
  status: v.picklist(['CLEAR', 'FLAGGED', 'PENDING']),
  checked_at: v.optional(Time),
  cutoff_date: v.optional(Str),
  dataset: v.optional(v.object({ name: Str, version: Str })),
  alerts: v.optional(v.array(v.object({ date: Str, confidence: Str, area_ha: Num }))),
});

// ---------------------------------------------------------------------------- batches

export const SubmissionViewSchema = v.object({
  success: v.literal(true),
  data: v.object({
    batch_id: Str,
    token_id: NStr,
    chain_tx_hash: NStr,
    audit_log_message_id: Str,
    payment_status: Str,
    payment_amount_ugx: Ugx,
    farmer_phone: NStr,
    estimated_payment_time_seconds: Int,
    stage: NStr,
    created_at: Time,
  }),
});

/** 202 of POST /batch/submit: the mint is pending. */
export const SubmissionAcceptedViewSchema = v.object({ job_id: Str, status: Str, batch_id: NStr });

export const StageHistoryViewSchema = v.object({
  stage: Str,
  at: Time,
  actor: Str,
  chain_tx_hash: NStr,
  audit_log_sequence_number: Str,
  evidence_ipfs_cid: NStr,
  evidence_pin_status: v.nullable(v.picklist(['PENDING', 'PINNED', 'FAILED'])),
});

export const BatchViewSchema = v.object({
  batch_id: Str,
  token_id: NStr,
  farmer_id: Str,
  cooperative_id: Str,
  weight_kg: v.pipe(v.number(), v.description('kg, at most 2 decimals')),
  grade: Str,
  moisture_pct: Num,
  collection_point_gps: Gps,
  weight_slip_photo_url: NStr,
  collector_agent_id: Str,
  stage: NStr,
  chain_tx_hash: NStr,
  stage_history: v.array(StageHistoryViewSchema),
  dds_eligible: v.boolean(),
  dds: v.pipe(
    v.nullable(
      v.object({
        dds_id: Str,
        reference_number: Str,
        verification_number: Str,
        status: v.pipe(
          v.picklist(['AVAILABLE', 'WITHDRAWN']),
          v.description('WITHDRAWN once the statement was withdrawn: it no longer covers the batch'),
        ),
        withdrawn_at: v.pipe(v.nullable(Time), v.description('when the statement was withdrawn, else null')),
      }),
    ),
    v.description(
      "the due diligence statement covering the batch (its own or its purchase order's) once AVAILABLE, else null; after its withdrawal, still shown with status WITHDRAWN",
    ),
  ),
  payment_status: Str,
  payment_amount_ugx: Ugx,
  audit_log_length: Int,
  created_at: Time,
  updated_at: Time,
});

export const StageUpdateViewSchema = v.object({
  batch_id: Str,
  previous_stage: Str,
  new_stage: Str,
  chain_tx_hash: NStr,
  audit_log_sequence_number: Str,
  evidence_ipfs_cid: NStr,
  dds_eligible: v.boolean(),
  timestamp: Time,
});
/** 202 of PATCH /batch/{id}/stage: the stage is recorded, its ledger write pending. */
export const StageUpdateAcceptedViewSchema = v.object({ job_id: Str, status: Str, ...StageUpdateViewSchema.entries });

export const JobViewSchema = v.object({
  job_id: Str,
  type: Str,
  status: Str,
  batch_id: v.optional(NStr),
  farmer_id: v.optional(Str),
  tx_hash: NStr,
  error: v.optional(v.object({ code: Str, message: Str })),
  created_at: Time,
  completed_at: NTime,
});

const EntryAnchorSchema = v.object({
  tx_hash: Str,
  block_number: Int,
  root: v.optional(Str),
  proof: v.optional(v.array(Str)),
  head_sequence_number: v.optional(Int),
  head_hash: v.optional(Str),
});

export const AuditViewSchema = v.object({
  batch_id: Str,
  token_id: Str,
  entries: v.array(
    v.object({
      batch_id: Str,
      sequence_number: Int,
      message_id: Str,
      type: Str,
      at: Time,
      actor: Str,
      payload: v.record(v.string(), v.unknown()),
      prev_hash: Str,
      hash: Str,
      payload_redacted: v.optional(v.literal(true)),
      anchor: v.nullable(EntryAnchorSchema),
    }),
  ),
  verified: v.boolean(),
  checks: v.array(v.object({ sequence_number: Int, message_id: Str, check: Str, ok: v.boolean(), detail: Str })),
  evidence_pins: v.array(v.object({ sequence_number: Int, stage: Str, evidence_ipfs_cid: NStr, evidence_pin_status: v.nullable(Str) })),
});

export const EvidenceUploadViewSchema = v.object({
  upload_id: Str,
  batch_id: Str,
  content_type: Str,
  size_bytes: Int,
  url: Str,
  method: v.literal('PUT'),
  headers: v.record(v.string(), v.string()),
  expires_at: Time,
  attach_by: Time,
});

// ---------------------------------------------------------------------------- purchase orders, settlement

const OperatorSchema = v.object({ name: Str, eori: Str, address: Str, email: Str, country: Str });

export const PurchaseOrderViewSchema = v.object({
  purchase_order_id: Str,
  status: Str,
  cooperative_id: Str,
  batch_ids: v.array(Str),
  buyer: Str,
  price_usd_per_kg: Num,
  buyer_operator: v.optional(OperatorSchema),
  amount_due_usdc: NUsdc,
  paid_usdc: Usdc,
  buyer_address: NStr,
  /** How many batches the order holds, and how many of them are confirmed (progress while CONFIRMING). */
  batch_count: Int,
  confirmed_batch_count: Int,
  /** How many of them are bound to the order (progress while CREATING; 0 once FAILED: released). */
  bound_batch_count: Int,
  /** Why a large order's creation failed (RELEASING, FAILED), else null. */
  creation_error: v.nullable(v.object({ code: Str, message: Str, batch_id: NStr })),
  created_at: Time,
  confirmed_at: v.optional(Time),
});
export const ConfirmedPurchaseOrderViewSchema = v.object({ ...PurchaseOrderViewSchema.entries, committed_batch_ids: v.array(Str) });

export const SettlementViewSchema = v.object({
  purchase_order_id: Str,
  cooperative_id: Str,
  status: Str,
  payment_tx_hash: NStr,
  payer: NStr,
  amount_usdc: Usdc,
  paid_usdc: Usdc,
  short_payment: v.boolean(),
  settled_by: NStr,
  repayments: v.array(
    v.object({
      loan_id: Str,
      batch_id: Str,
      principal_usdc: Usdc,
      interest_usdc: Usdc,
      amount_usdc: Usdc,
      status: Str,
      repay_tx_hash: NStr,
    }),
  ),
  unpaid_loan_ids: v.array(Str),
  settled_batch_ids: v.array(Str),
  remainder_usdc: Usdc,
  remainder_status: Str,
  remainder_tx_hash: NStr,
  created_at: Time,
  completed_at: NTime,
});

export const BuyerPaymentViewSchema = v.object({
  tx_hash: Str,
  log_index: Int,
  block_number: Int,
  payer: Str,
  amount_usdc: Usdc,
  status: Str,
  unapplied_reason: NStr,
  received_at: Time,
  refund_id: NStr,
  refund_tx_hash: NStr,
  refunded_at: NTime,
});

export const SettlementReadingViewSchema = v.object({
  ...SettlementViewSchema.entries,
  amount_due_usdc: NUsdc,
  buyer_address: NStr,
  payments: v.array(BuyerPaymentViewSchema),
  unapplied_payments: v.array(BuyerPaymentViewSchema),
});

// ---------------------------------------------------------------------------- payments

const SettlementChannelEntries = {
  settlement_channel: v.picklist(['MOBILE_MONEY', 'CASH_AT_OFFICE']),
  cash_receipt: v.nullable(v.object({ receipt_number: NStr, paid_at: NTime })),
  failure_reason: v.pipe(
    v.nullable(v.picklist(FAILURE_REASONS)),
    v.description(
      'Why the last failed attempt failed, normalised across providers (null when no attempt failed). INSUFFICIENT_BALANCE and PROVIDER_ERROR are retried; INVALID_MSISDN, RECIPIENT_NAME_MISMATCH and WALLET_LIMIT_EXCEEDED send the payout to MANUAL_REVIEW at once.',
    ),
  ),
  provider: v.pipe(
    NStr,
    v.description(
      'The payout provider holding the current order, a name of PAYOUT_PROVIDERS (`provider-api`, `pawapay`): the one that paid once COMPLETED; another than the primary after a failover. Null before an order is placed.',
    ),
  ),
};

export const PayoutCreatedViewSchema = v.object({
  payout_id: Str,
  status: Str,
  farmer_id: Str,
  batch_id: Str,
  reason: Str,
  amount_usdc: Usdc,
  estimated_ugx: Ugx,
  exchange_rate: Num,
  phone: Str,
  provider_order_id: NStr,
  estimated_completion_seconds: Int,
  created_at: Time,
});

export const PayoutStatusViewSchema = v.object({
  payout_id: Str,
  status: Str,
  amount_usdc: Usdc,
  amount_ugx: v.nullable(Ugx),
  provider_order_id: NStr,
  mobile_money_transaction_id: NStr,
  completed_at: NTime,
  elapsed_seconds: NInt,
  retry_count: Int,
  ...SettlementChannelEntries,
});

export const PayoutResolutionViewSchema = v.object({
  ...PayoutStatusViewSchema.entries,
  resolution: v.picklist(['PAID_IN_CASH', 'RETRY']),
  phone: Str,
  attempt: Int,
  resolution_round: Int,
  resolved_at: NTime,
});

const PaymentRecordEntries = {
  payment_id: Str,
  status: Str,
  amount_usdc: Usdc,
  created_at: Time,
  completed_at: NTime,
  settled_at: NTime,
  updated_at: Time,
  farmer_id: Str,
  batch_id: Str,
  cooperative_id: Str,
  amount_ugx: v.nullable(Ugx),
  exchange_rate: Num,
  provider_order_id: NStr,
  mobile_money_transaction_id: NStr,
  reason: Str,
  elapsed_seconds: NInt,
  retry_count: Int,
  ...SettlementChannelEntries,
};
/** GET /payments/PAY-…: a farmer payout. */
const FarmerPayoutRecordSchema = v.object({ payment_type: v.literal('FARMER_PAYOUT'), ...PaymentRecordEntries });
/** GET /payments/DISB-…: a loan's disbursement, with its `loan_id`. */
const LoanDisbursementRecordSchema = v.object({ payment_type: v.literal('LOAN_DISBURSEMENT'), ...PaymentRecordEntries, loan_id: NStr });
/** A payout record of either kind (what `paymentRecordView` returns). */
export const PayoutRecordViewSchema = v.variant('payment_type', [FarmerPayoutRecordSchema, LoanDisbursementRecordSchema]);

/** GET /payments/DEP-… and the 202 of POST /mfi/deposits. */
export const DepositViewSchema = v.object({
  payment_type: v.literal('MFI_DEPOSIT'),
  payment_id: Str,
  status: Str,
  amount_usdc: v.pipe(v.number(), v.description('USDC the on-ramp delivered, at most 6 decimals (0 until it completes)')),
  created_at: Time,
  completed_at: NTime,
  updated_at: Time,
  mfi_id: Str,
  source_currency: Str,
  source_amount: Num,
  ramp_payment_id: NStr,
  chain_tx_hash: NStr,
  vault_shares_issued: v.pipe(NInt, v.description('micro-shares (10^-6 share)')),
  refund_tx_hash: NStr,
  refunded_at: NTime,
  failure_reason: NStr,
});

/** GET /payments/{id}: one of three kinds, told apart by `payment_type`. */
export const PaymentViewSchema = v.variant('payment_type', [FarmerPayoutRecordSchema, LoanDisbursementRecordSchema, DepositViewSchema]);

export const PaymentListItemViewSchema = v.object({
  payment_id: Str,
  payment_type: Str,
  status: Str,
  amount_usdc: Usdc,
  completed_at: NTime,
});
export const PaymentListViewSchema = v.object({ payments: v.array(PaymentListItemViewSchema), total: Int, limit: Int, next_token: NStr });

/** Inbound webhooks' acknowledgement. */
export const WebhookAckViewSchema = v.object({ received: v.literal(true), outcome: Str });

// ---------------------------------------------------------------------------- lending

export const LoanViewSchema = v.object({
  loan_id: Str,
  batch_id: Str,
  token_id: Str,
  farmer_id: Str,
  cooperative_id: Str,
  status: Str,
  principal_usdc: Usdc,
  apr: Num,
  collateral_value_usdc: Usdc,
  ltv: Num,
  price_usd_per_kg: Num,
  price_updated_at: Time,
  disbursement_payment_id: Str,
  lock_tx_hash: NStr,
  repaid_usdc: NUsdc,
  repay_tx_hash: NStr,
  repaid_by_purchase_order_id: NStr,
  created_at: Time,
  disbursed_at: NTime,
  repaid_at: NTime,
  cancelled_at: NTime,
  cancel_reason: NStr,
  due_at: NTime,
  defaulted_at: NTime,
  loss_usdc: NUsdc,
  write_off_tx_hash: NStr,
});

export const VaultViewSchema = v.object({
  total_assets_usdc: Usdc,
  total_shares: v.pipe(Int, v.description('micro-shares')),
  share_price_usdc: Num,
  loans_outstanding_usdc: Usdc,
  utilisation: Num,
  apr: Num,
  par30_usdc: Usdc,
  defaults_usdc: Usdc,
  shares: v.optional(Int),
  value_usdc: v.optional(Usdc),
});

// ---------------------------------------------------------------------------- EUDR

export const DdsViewSchema = v.object({
  dds_id: Str,
  batch_id: v.pipe(NStr, v.description("the batch of a batch's statement; null for a purchase order's")),
  purchase_order_id: v.pipe(NStr, v.description("the purchase order of a shipment's statement; null for a batch's")),
  batch_ids: v.pipe(v.nullable(v.array(Str)), v.description("the batches a purchase order's statement covers; null for a batch's")),
  status: Str,
  internal_reference_number: Str,
  activity_type: Str,
  country_of_activity: Str,
  country_of_entry: Str,
  operator: OperatorSchema,
  hs_heading: Str,
  description_of_goods: Str,
  net_weight_kg: Num,
  country_of_production: Str,
  producers: v.array(
    v.object({
      farmer_id: Str,
      name: Str,
      country: Str,
      net_weight_kg: v.pipe(
        NNum,
        v.description("green-coffee kg of this producer's batches (a purchase order's statement); null for a batch's"),
      ),
      geolocation_geojson: v.pipe(
        v.object({ type: v.literal('FeatureCollection'), features: v.array(v.unknown()) }),
        v.description("the producer's plots (GeoJSON)"),
      ),
    }),
  ),
  geolocation: v.object({ type: v.literal('FeatureCollection'), features: v.array(v.unknown()) }),
  ipfs_cid: Str,
  reference_number: NStr,
  verification_number: NStr,
  rejection_reason: NStr,
  created_at: Time,
});

/** 303 of GET /eudr/dds/{id}/xml (a large XML): where to fetch it, its size (bytes) and SHA-256 (hex), until when (ISO 8601). */
export const DdsXmlLinkViewSchema = v.object({ dds_id: Str, xml_url: Str, size_bytes: Int, sha256: Str, expires_at: Time });

/** 202 of POST /eudr/generate-dds: the pending envelope with the statement's id and status. */
export const DdsPendingViewSchema = v.object({ error: ErrorBodySchema, dds_id: Str, status: Str });

export const EvidencePackViewSchema = v.object({
  pack_version: v.literal(1),
  dds: DdsViewSchema,
  batch: v.object({
    batch_id: Str,
    token_id: Str,
    cooperative_id: Str,
    farmer_id: Str,
    grade: Str,
    weight_kg: Num,
    moisture_pct: Num,
    stage: Str,
    mint_tx_hash: NStr,
    purchase_order_id: NStr,
  }),
  forest_checks: v.array(
    v.object({ farmer_id: Str, status: Str, checked_at: NTime, dataset: v.nullable(v.object({ name: Str, version: Str })) }),
  ),
  trail: v.array(v.object({ stage: Str, at: Time, evidence_ipfs_cid: NStr, chain_tx_hash: NStr, audit_log_sequence_number: Int })),
  audit: v.object({
    head: v.object({ sequence_number: Int, hash: Str }),
    entries: v.array(
      v.object({ sequence_number: Int, type: Str, at: Time, prev_hash: Str, hash: Str, anchor: v.nullable(EntryAnchorSchema) }),
    ),
  }),
});

// ---------------------------------------------------------------------------- outbound webhooks

export const EndpointViewSchema = v.object({
  endpoint_id: Str,
  url: Str,
  events: v.array(Str),
  description: NStr,
  status: v.pipe(v.string(), v.description('ACTIVE or DISABLED')),
  disabled_reason: NStr,
  owner: v.object({ kind: Str, id: v.optional(Str) }),
  created_at: Time,
  updated_at: Time,
});
export const EndpointWithSecretViewSchema = v.object({ ...EndpointViewSchema.entries, secret: Str, previous_secret_expires_at: NTime });
export const EndpointListViewSchema = v.object({ endpoints: v.array(EndpointViewSchema) });
export const EndpointDeletedViewSchema = v.object({ endpoint_id: Str, deleted: v.literal(true) });

export const DeliveryViewSchema = v.object({
  delivery_id: Str,
  endpoint_id: Str,
  event_id: Str,
  event_type: Str,
  state: v.picklist(['PENDING', 'FAILED', 'DELIVERED', 'DEAD']),
  attempts: Int,
  last_status_code: NInt,
  last_error: NStr,
  last_attempt_at: NTime,
  next_attempt_at: NTime,
  created_at: Time,
  updated_at: Time,
});
export const DeliveryListViewSchema = v.object({ deliveries: v.array(DeliveryViewSchema), limit: Int, next_token: NStr });

// ---------------------------------------------------------------------------- reference

export const IpfsDirectoryViewSchema = v.object({ cid: Str, entries: v.array(v.object({ name: Str, cid: Str, size: Int })) });

export type View<S extends v.GenericSchema> = v.InferOutput<S>;
