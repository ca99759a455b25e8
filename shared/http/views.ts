import { isCooperativeActive } from '../domain/access';
import type { AuditCheck } from '../domain/audit-verify';
import type { EntryAnchor } from '../domain/anchoring';
import { isDdsEligible } from '../domain/custody';
import type { DdsRecord } from '../domain/dds';
import type { BuyerPayment, Loan, Settlement } from '../domain/lending';
import { maskPhone } from '../domain/masking';
import { microToUsdc } from '../domain/money';
import { ESTIMATED_COMPLETION_SECONDS } from '../domain/payout-lifecycle';
import type { AuditEntry, Batch, Cooperative, Farmer, Job, Payout, PurchaseOrder } from '../domain/records';
import type { SubmitResult } from '../use-cases/batches';
import type { DdsXmlDelivery } from '../use-cases/dds-documents';
import type { StageChange } from '../use-cases/custody';
import type { SettlementReading } from '../use-cases/settlement';
import type {
  AuditViewSchema,
  BatchViewSchema,
  BuyerPaymentViewSchema,
  CooperativeViewSchema,
  DdsViewSchema,
  DdsXmlLinkViewSchema,
  FarmerViewSchema,
  JobViewSchema,
  LoanViewSchema,
  PaymentListItemViewSchema,
  PayoutCreatedViewSchema,
  PayoutRecordViewSchema,
  PayoutResolutionViewSchema,
  PayoutStatusViewSchema,
  PurchaseOrderViewSchema,
  SettlementReadingViewSchema,
  SettlementViewSchema,
  StageHistoryViewSchema,
  StageUpdateViewSchema,
  SubmissionViewSchema,
  View,
} from './view-schemas';

/**
 * Response views: how records look on the wire (the OpenAPI document's response shapes; docs/security.md#personal-data
 * masking). Handlers shape use-case results with these; use cases never build responses.
 */

/** The 201 body of POST /batch/submit (docs/api/batches-and-custody.md#batch-submission response). */
export function submissionView(r: Extract<SubmitResult, { kind: 'created' }>): View<typeof SubmissionViewSchema> {
  return {
    success: true,
    data: {
      batch_id: r.batch.batch_id,
      token_id: r.batch.token_id,
      chain_tx_hash: r.batch.chain_tx_hash ?? null,
      audit_log_message_id: r.auditMessageId,
      payment_status: r.batch.payment_status,
      payment_amount_ugx: r.batch.payment_amount_ugx,
      farmer_phone: r.farmerPhone ? maskPhone(r.farmerPhone) : null,
      estimated_payment_time_seconds: ESTIMATED_COMPLETION_SECONDS,
      stage: r.batch.stage,
      created_at: r.batch.created_at,
    },
  };
}

/** GET /batch/{id} (docs/api/batches-and-custody.md#custody-trail). */
export function batchView(b: Batch): View<typeof BatchViewSchema> {
  return {
    batch_id: b.batch_id,
    token_id: b.token_id,
    farmer_id: b.farmer_id,
    cooperative_id: b.cooperative_id,
    weight_kg: b.weight_kg,
    grade: b.grade,
    moisture_pct: b.moisture_pct,
    collection_point_gps: b.collection_point_gps,
    weight_slip_photo_url: b.weight_slip_photo_url ?? null,
    collector_agent_id: b.collector_agent_id,
    stage: b.stage,
    chain_tx_hash: b.chain_tx_hash ?? null,
    stage_history: (b.stage_history ?? []).map(stageHistoryView),
    dds_eligible: isDdsEligible(b.stage),
    dds: b.dds
      ? {
          dds_id: b.dds.dds_id,
          reference_number: b.dds.reference_number,
          verification_number: b.dds.verification_number,
          status: b.dds.status ?? 'AVAILABLE',
          withdrawn_at: b.dds.withdrawn_at ?? null,
        }
      : null,
    payment_status: b.payment_status,
    payment_amount_ugx: b.payment_amount_ugx,
    audit_log_length: b.audit_seq,
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

/**
 * One stage-history entry as shown: its fields, and `evidence_pin_status` (docs/api/evidence.md#evidence-on-ipfs:
 * PENDING|PINNED|FAILED; null for DELIVERED, which has no evidence, and for stages committed before
 * background pinning).
 */
function stageHistoryView(h: Batch['stage_history'][number]): View<typeof StageHistoryViewSchema> {
  return {
    stage: h.stage,
    at: h.at,
    actor: h.actor,
    chain_tx_hash: h.chain_tx_hash,
    audit_log_sequence_number: h.audit_log_sequence_number,
    evidence_ipfs_cid: h.evidence_ipfs_cid,
    evidence_pin_status: h.evidence_pin_status ?? null,
  };
}

/** GET /jobs/{id} (docs/api/conventions.md#http-and-errors asynchronous operations). */
export function jobView(j: Job): View<typeof JobViewSchema> {
  return {
    job_id: j.job_id,
    type: j.type,
    status: j.status,
    ...(j.farmer_id ? { farmer_id: j.farmer_id } : { batch_id: j.batch_id ?? null }),
    tx_hash: j.tx_hash ?? null,
    ...(j.error ? { error: j.error } : {}),
    created_at: j.created_at,
    completed_at: j.completed_at ?? null,
  };
}

/** The stage-update response (docs/api/batches-and-custody.md#custody-trail response fields). */
export function stageUpdateView(c: StageChange): View<typeof StageUpdateViewSchema> {
  return {
    batch_id: c.batch_id,
    previous_stage: c.previous_stage,
    new_stage: c.new_stage,
    chain_tx_hash: c.chain_tx_hash,
    audit_log_sequence_number: String(c.audit_log_sequence_number),
    evidence_ipfs_cid: c.evidence_ipfs_cid,
    dds_eligible: c.dds_eligible,
    timestamp: c.at,
  };
}

/** GET /batch/{id}/audit (docs/api/batches-and-custody.md#custody-trail). */
export function auditView(r: {
  batch: Batch;
  entries: AuditEntry[];
  verified: boolean;
  checks: AuditCheck[];
  anchors: Array<EntryAnchor | null>;
}): View<typeof AuditViewSchema> {
  // The pin status of each stage's evidence (docs/api/evidence.md#evidence-on-ipfs), beside the entries (which are hashed as stored).
  const evidencePins = (r.batch.stage_history ?? [])
    .filter((h) => h.evidence_ipfs_cid)
    .map((h) => ({
      sequence_number: Number(h.audit_log_sequence_number),
      stage: h.stage,
      evidence_ipfs_cid: h.evidence_ipfs_cid,
      evidence_pin_status: h.evidence_pin_status ?? null,
    }));
  // Each entry with its anchor on the ledger (docs/api/anchoring.md#anchoring-of-the-audit-log); `anchor` is not hashed (auditHash names its fields).
  const entries = r.entries.map((e, i) => ({ ...e, anchor: r.anchors[i] ?? null }));
  return {
    batch_id: r.batch.batch_id,
    token_id: r.batch.token_id,
    entries,
    verified: r.verified,
    checks: r.checks,
    evidence_pins: evidencePins,
  };
}

/** The purchase order as shown to callers. */
export function purchaseOrderView(po: PurchaseOrder): View<typeof PurchaseOrderViewSchema> {
  const {
    created_by: _by,
    confirmed_by: _confirmedBy,
    confirmed_batch_count: confirmedCount,
    bound_batch_count: boundCount,
    creation_error: creationError,
    amount_due_usd_micro: due,
    paid_usd_micro: paid,
    settled_at: _settled,
    settle_request: _settleRequest,
    order_work_seq: _workSeq,
    order_work_requeues: _requeues,
    ...rest
  } = po;
  return {
    ...rest,
    amount_due_usdc: due === undefined ? null : microToUsdc(due),
    paid_usdc: microToUsdc(paid ?? 0),
    buyer_address: po.buyer_address ?? null,
    batch_count: po.batch_ids.length,
    confirmed_batch_count: po.status === 'CONFIRMED' ? po.batch_ids.length : (confirmedCount ?? 0),
    bound_batch_count: boundBatchCount(po.status, po.batch_ids.length, boundCount),
    creation_error: creationError
      ? { code: creationError.code, message: creationError.message, batch_id: creationError.batch_id ?? null }
      : null,
  };
}

/** Batches bound to an order: its progress while CREATING or RELEASING, none once FAILED (released), else all. */
function boundBatchCount(status: PurchaseOrder['status'], batchCount: number, bound: number | undefined): number {
  if (status === 'CREATING' || status === 'RELEASING') return bound ?? 0;
  return status === 'FAILED' ? 0 : batchCount;
}

/** The create response (docs/api/payouts.md#creating-a-payout create response). */
export function payoutCreatedView(p: Payout): View<typeof PayoutCreatedViewSchema> {
  return {
    payout_id: p.payment_id,
    status: p.status,
    farmer_id: p.farmer_id,
    batch_id: p.batch_id,
    reason: p.reason,
    amount_usdc: microToUsdc(p.amount_usd_micro),
    estimated_ugx: p.estimated_ugx,
    exchange_rate: Number(p.exchange_rate),
    phone: maskPhone(p.phone),
    provider_order_id: p.provider_order_id ?? null,
    estimated_completion_seconds: ESTIMATED_COMPLETION_SECONDS,
    created_at: p.created_at,
  };
}

/** GET /payments/farmer-payout/{id} (docs/api/payouts.md#payment-records). */
export function payoutStatusView(p: Payout): View<typeof PayoutStatusViewSchema> {
  return {
    payout_id: p.payment_id,
    status: p.status,
    amount_usdc: microToUsdc(p.amount_usd_micro),
    amount_ugx: p.amount_ugx,
    provider_order_id: p.provider_order_id ?? null,
    mobile_money_transaction_id: p.mobile_money_transaction_id ?? null,
    completed_at: p.completed_at ?? null,
    elapsed_seconds: p.elapsed_seconds ?? null,
    retry_count: p.retry_count,
    ...settlementChannelView(p),
  };
}

/**
 * A loan (docs/api/lending.md#loans): amounts in USDC, loan-to-value as a fraction (0.6 = 60 %), price in
 * USD per kg; fields not reached yet are null. `due_at` is when it is due (null on loans made
 * before terms existed); a DEFAULTED loan has `defaulted_at`, `loss_usdc` (the principal written
 * off in the vault) and `write_off_tx_hash`.
 */
export function loanView(l: Loan): View<typeof LoanViewSchema> {
  return {
    loan_id: l.loan_id,
    batch_id: l.batch_id,
    token_id: l.token_id,
    farmer_id: l.farmer_id,
    cooperative_id: l.cooperative_id,
    status: l.status,
    principal_usdc: microToUsdc(l.principal_usd_micro),
    apr: Number(l.apr),
    collateral_value_usdc: microToUsdc(l.collateral_value_usd_micro),
    ltv: l.ltv_bps / 10_000,
    price_usd_per_kg: microToUsdc(l.price_usd_micro_per_kg),
    price_updated_at: l.price_updated_at,
    disbursement_payment_id: l.disbursement_payment_id,
    lock_tx_hash: l.lock_tx_hash ?? null,
    repaid_usdc: l.repaid_usd_micro !== undefined ? microToUsdc(l.repaid_usd_micro) : null,
    repay_tx_hash: l.repay_tx_hash ?? null,
    repaid_by_purchase_order_id: l.repaid_by_purchase_order_id ?? null,
    created_at: l.created_at,
    disbursed_at: l.disbursed_at ?? null,
    repaid_at: l.repaid_at ?? null,
    cancelled_at: l.cancelled_at ?? null,
    cancel_reason: l.cancel_reason ?? null,
    due_at: l.due_at ?? null,
    defaulted_at: l.defaulted_at ?? null,
    loss_usdc: l.loss_usd_micro !== undefined ? microToUsdc(l.loss_usd_micro) : null,
    write_off_tx_hash: l.write_off_tx_hash ?? null,
  };
}

/**
 * How a payout was (or is being) paid (docs/api/payouts.md#manual-review): `settlement_channel` MOBILE_MONEY unless a
 * manual review was closed as paid in cash (CASH_AT_OFFICE), and then the cash receipt; the normalised
 * `failure_reason` of the last failed attempt (docs/api/payouts.md#failure-reasons), null when none failed.
 */
function settlementChannelView(p: Payout) {
  return {
    settlement_channel: p.settlement_channel ?? 'MOBILE_MONEY',
    cash_receipt:
      p.settlement_channel === 'CASH_AT_OFFICE' ? { receipt_number: p.cash_receipt_number ?? null, paid_at: p.cash_paid_at ?? null } : null,
    failure_reason: p.failure_reason ?? null,
    provider: p.provider ?? null,
  };
}

/** POST /payments/farmer-payout/{id}/resolve: the payout status response after the resolution. */
export function payoutResolutionView(p: Payout, resolution: 'PAID_IN_CASH' | 'RETRY'): View<typeof PayoutResolutionViewSchema> {
  return {
    ...payoutStatusView(p),
    resolution,
    phone: maskPhone(p.phone),
    attempt: p.attempt,
    resolution_round: p.resolution_round ?? 0,
    resolved_at: p.resolved_at ?? null,
  };
}

/** A purchase order's settlement: amounts in USDC, repayments oldest first. */
export function settlementView(st: Settlement): View<typeof SettlementViewSchema> {
  return {
    purchase_order_id: st.purchase_order_id,
    cooperative_id: st.cooperative_id,
    status: st.status,
    payment_tx_hash: st.payment_tx_hash,
    payer: st.payer,
    amount_usdc: microToUsdc(st.amount_usd_micro),
    paid_usdc: microToUsdc(st.amount_usd_micro),
    short_payment: st.short_payment ?? false,
    settled_by: st.settled_by ?? null,
    repayments: Object.values(st.repayments)
      .map((r) => ({
        loan_id: r.loan_id,
        batch_id: r.batch_id,
        principal_usdc: microToUsdc(r.principal_usd_micro),
        interest_usdc: microToUsdc(r.interest_usd_micro),
        amount_usdc: microToUsdc(r.amount_usd_micro),
        status: r.status,
        repay_tx_hash: r.repay_tx_hash ?? null,
      }))
      .sort((a, b) => a.loan_id.localeCompare(b.loan_id)),
    unpaid_loan_ids: st.unpaid_loan_ids,
    settled_batch_ids: st.settled_batch_ids,
    remainder_usdc: microToUsdc(st.remainder_usd_micro),
    remainder_status: st.remainder_status,
    remainder_tx_hash: st.remainder_tx_hash ?? null,
    created_at: st.created_at,
    completed_at: st.completed_at ?? null,
  };
}

/** A buyer payment into the vault for a purchase order (settlement view, refund answer). */
export function buyerPaymentView(p: BuyerPayment): View<typeof BuyerPaymentViewSchema> {
  return {
    tx_hash: p.tx_hash,
    log_index: p.log_index,
    block_number: p.block_number,
    payer: p.payer,
    amount_usdc: microToUsdc(p.amount_usd_micro),
    status: p.status,
    unapplied_reason: p.unapplied_reason ?? null,
    received_at: p.received_at,
    refund_id: p.refund_id ?? null,
    refund_tx_hash: p.refund_tx_hash ?? null,
    refunded_at: p.refunded_at ?? null,
  };
}

/**
 * GET /purchase-orders/{id}/settlement: one shape for every state — a settlement (STARTED,
 * COMPLETED) or the order AWAITING_PAYMENT (no payment applied yet: `payment_tx_hash` null, no
 * repayments) — with `amount_due_usdc`, `paid_usdc`, `buyer_address`, the counted `payments` and
 * the `unapplied_payments` (other payer, after settlement; refundable by an ADMIN).
 */
export function settlementReadingView(r: SettlementReading): View<typeof SettlementReadingViewSchema> {
  const counted = r.payments.filter((p) => p.status === 'COUNTED').map(buyerPaymentView);
  const unapplied = r.payments.filter((p) => p.status !== 'COUNTED').map(buyerPaymentView);
  const extra = {
    amount_due_usdc: r.amountDueUsdMicro === null ? null : microToUsdc(r.amountDueUsdMicro),
    buyer_address: r.po.buyer_address ?? null,
    payments: counted,
    unapplied_payments: unapplied,
  };
  if (r.kind === 'SETTLED') return { ...settlementView(r.settlement), ...extra };
  const paid = microToUsdc(r.po.paid_usd_micro ?? 0);
  return {
    purchase_order_id: r.po.purchase_order_id,
    cooperative_id: r.po.cooperative_id,
    status: 'AWAITING_PAYMENT' as const,
    payment_tx_hash: null,
    payer: null,
    amount_usdc: paid,
    paid_usdc: paid,
    short_payment: false,
    settled_by: null,
    repayments: [],
    unpaid_loan_ids: [],
    settled_batch_ids: [],
    remainder_usdc: 0,
    remainder_status: 'NONE' as const,
    remainder_tx_hash: null,
    created_at: r.po.created_at,
    completed_at: null,
    ...extra,
  };
}

/** GET /payments/{id} for a FARMER_PAYOUT (docs/api/payouts.md#payment-records). */
export function paymentRecordView(p: Payout): View<typeof PayoutRecordViewSchema> {
  const common = {
    payment_id: p.payment_id,
    status: p.status,
    amount_usdc: microToUsdc(p.amount_usd_micro),
    created_at: p.created_at,
    completed_at: p.completed_at ?? null,
    settled_at: p.settled_at ?? null,
    updated_at: p.updated_at,
    farmer_id: p.farmer_id,
    batch_id: p.batch_id,
    cooperative_id: p.cooperative_id,
    amount_ugx: p.amount_ugx,
    exchange_rate: Number(p.exchange_rate),
    provider_order_id: p.provider_order_id ?? null,
    mobile_money_transaction_id: p.mobile_money_transaction_id ?? null,
    reason: p.reason,
    elapsed_seconds: p.elapsed_seconds ?? null,
    retry_count: p.retry_count,
    ...settlementChannelView(p),
  };
  return p.payment_type === 'LOAN_DISBURSEMENT'
    ? { ...common, payment_type: 'LOAN_DISBURSEMENT', loan_id: p.loan_id ?? null }
    : { ...common, payment_type: 'FARMER_PAYOUT' };
}

/** One entry of GET /payments (the list view of a payment). */
export function paymentListItemView(p: Payout): View<typeof PaymentListItemViewSchema> {
  return {
    payment_id: p.payment_id,
    payment_type: p.payment_type,
    status: p.status,
    amount_usdc: microToUsdc(p.amount_usd_micro),
    completed_at: p.completed_at ?? null,
  };
}

/** The cooperative as shown to callers (manager phone masked). */
export function cooperativeView(c: Cooperative): View<typeof CooperativeViewSchema> {
  return { ...c, manager: { ...c.manager, phone: maskPhone(c.manager.phone) }, active: isCooperativeActive(c) };
}

/** The farmer as shown to callers (phone masked, docs/security.md#personal-data). */
export function farmerView(f: Farmer): View<typeof FarmerViewSchema> {
  const { registered_by: _by, updated_by: _upd, ...rest } = f;
  return { ...rest, national_registry_status: f.national_registry_status ?? 'VERIFIED', phone: f.phone ? maskPhone(f.phone) : null };
}

/** The DDS as returned by GET /eudr/dds/{id} (docs/api/eudr.md#due-diligence-statements), without the XML. */
export function ddsView(d: DdsRecord): View<typeof DdsViewSchema> {
  return {
    dds_id: d.dds_id,
    batch_id: d.batch_id,
    purchase_order_id: d.purchase_order_id ?? null,
    batch_ids: d.batch_ids ?? null,
    status: d.status,
    internal_reference_number: d.internal_reference_number,
    activity_type: d.activity_type,
    country_of_activity: d.country_of_activity,
    country_of_entry: d.country_of_entry,
    operator: d.operator,
    hs_heading: d.hs_heading,
    description_of_goods: d.description_of_goods,
    net_weight_kg: d.net_weight_kg,
    country_of_production: d.country_of_production,
    producers: d.producers.map((p) => ({
      farmer_id: p.farmer_id,
      name: p.name,
      country: p.country,
      net_weight_kg: d.producer_net_weights_kg?.[p.farmer_id] ?? null,
      geolocation_geojson: p.geolocation_geojson,
    })),
    geolocation: d.geolocation,
    ipfs_cid: d.ipfs_cid,
    reference_number: d.reference_number ?? null,
    verification_number: d.verification_number ?? null,
    rejection_reason: d.rejection_reason ?? null,
    created_at: d.created_at,
  };
}

/** The 303 body of GET /eudr/dds/{id}/xml for a large XML (docs/api/eudr.md#large-statements): the link, its document's size and SHA-256, its expiry. */
export function ddsXmlLinkView(d: Extract<DdsXmlDelivery, { kind: 'link' }>): View<typeof DdsXmlLinkViewSchema> {
  return { dds_id: d.dds_id, xml_url: d.xml_url, size_bytes: d.size_bytes, sha256: d.sha256, expires_at: d.expires_at };
}
