import type { DdsRecord } from '../domain/dds';
import type { Deposit, Loan } from '../domain/lending';
import {
  outboundEventsOfChange,
  type ItemImage,
  type OutboundDelivery,
  type RevealedEndpoint,
  type OutboundEvent,
  type OutboundEventType,
} from '../domain/outbound-webhooks';
import type { Job, Payout } from '../domain/records';
import { dds } from './openapi-example-records';
import type { Json } from './openapi-example-records';

/** Examples of the outbound webhooks: events, endpoints and deliveries made from stored records by the real views and event mapper. */

// ---------------------------------------------- outbound webhooks: records run through the real code
// The examples of the webhook routes and events are not written by hand: they are the views
// (outbound-webhook-schemas.ts) and the event mapper (outboundEventsOfChange) applied to realistic
// stored records, so they cannot drift from what the service sends.

const COOP = 'BUGISU-CU-01';
const PHONE = '+256772418760';

/** A stored FARMER_PAYOUT settled to mobile money (the record, not the API's USDC view). */
const payoutRecord: Payout = {
  payment_id: 'PAY-2026-000002-01',
  payment_type: 'FARMER_PAYOUT',
  batch_id: 'BATCH-2026-000002',
  farmer_id: 'UG-SIR-001877',
  cooperative_id: COOP,
  reason: 'NET_COFFEE_PAYMENT',
  status: 'COMPLETED',
  amount_usd_micro: 238686576,
  amount_ugx: 883200,
  estimated_ugx: 883200,
  exchange_rate: '3700.25',
  quote_id: 'qt_01M829RYHQ2W7D4K9B1N5X3C8V',
  phone: PHONE,
  recipient_name: 'Wasswa Okello',
  attempt: 1,
  retry_count: 0,
  provider_order_id: 'ord_01M829RYHRT3KXMBX0GJ87H1VB',
  task_token: 'AQCEAAAAKgAAAA…',
  mobile_money_transaction_id: 'MP3412205833',
  created_at: '2026-11-22T18:54:53.470Z',
  updated_at: '2026-11-22T18:54:55.522Z',
  completed_at: '2026-11-22T18:54:55.522Z',
  settled_at: '2026-11-22T18:54:55.496Z',
  elapsed_seconds: 2,
  created_by: 'demo-field-agent',
  settlement_channel: 'MOBILE_MONEY',
};
/** The same payout while its attempts were running. */
const processing: Partial<Payout> = {
  status: 'PROCESSING',
  completed_at: undefined,
  settled_at: undefined,
  mobile_money_transaction_id: undefined,
  elapsed_seconds: undefined,
};
/** A payout whose four attempts failed (MANUAL_REVIEW), and one a manager then closed as paid in cash. */
const reviewRecord: Payout = {
  ...payoutRecord,
  ...processing,
  payment_id: 'PAY-2026-000004-01',
  batch_id: 'BATCH-2026-000004',
  farmer_id: 'UG-BUD-004613',
  recipient_name: 'Nakato Auma',
  phone: '+256701556613',
  status: 'MANUAL_REVIEW',
  amount_usd_micro: 126045538,
  amount_ugx: 466400,
  estimated_ugx: 466400,
  attempt: 4,
  retry_count: 3,
  provider_order_id: 'ord_01M82A2C6Q8J1N4T7W0Y3B5D9F',
  last_failure_reason: 'RECIPIENT_WALLET_INACTIVE',
  manager_notified_at: '2026-11-22T19:02:11.804Z',
  created_at: '2026-11-22T18:58:40.102Z',
  updated_at: '2026-11-22T19:02:11.804Z',
  settlement_channel: undefined,
};
const cashRecord: Payout = {
  ...reviewRecord,
  status: 'COMPLETED',
  settlement_channel: 'CASH_AT_OFFICE',
  cash_receipt_number: 'BCU/2026/0417',
  cash_paid_at: '2026-11-23T08:05:00.000Z',
  resolved_by: 'manager-bugisu',
  resolved_at: '2026-11-23T08:12:41.003Z',
  completed_at: '2026-11-23T08:12:41.003Z',
  updated_at: '2026-11-23T08:12:41.003Z',
};
/** The LOAN_DISBURSEMENT of LOAN-2026-000001, settled. */
const disbursementRecord: Payout = {
  ...payoutRecord,
  payment_id: 'DISB-2026-000001',
  payment_type: 'LOAN_DISBURSEMENT',
  loan_id: 'LOAN-2026-000001',
  batch_id: 'BATCH-2026-000001',
  farmer_id: 'UG-BUD-004512',
  recipient_name: 'Nabulo Mirembe',
  phone: '+256772903305',
  reason: 'LOAN_DISBURSEMENT',
  amount_usd_micro: 339260000,
  amount_ugx: 1255340,
  estimated_ugx: 1255340,
  provider_order_id: 'ord_01M829SCA7V2K5N8Q1T4W7Z0C3',
  mobile_money_transaction_id: 'MP3412206101',
  created_at: '2026-11-22T18:54:59.731Z',
  settled_at: '2026-11-22T18:55:01.530Z',
  completed_at: '2026-11-22T18:55:01.551Z',
  updated_at: '2026-11-22T18:55:01.551Z',
  created_by: 'manager-bugisu',
  settlement_channel: undefined, // absent = MOBILE_MONEY (records from before manual-review resolution)
};
const loanRecord: Loan = {
  loan_id: 'LOAN-2026-000001',
  batch_id: 'BATCH-2026-000001',
  token_id: '2026000000000001',
  farmer_id: 'UG-BUD-004512',
  cooperative_id: COOP,
  principal_usd_micro: 339260000,
  apr: '0.12',
  status: 'ACTIVE',
  collateral_value_usd_micro: 1130880000,
  ltv_bps: 3000,
  price_usd_micro_per_kg: 6200000,
  price_updated_at: '2026-11-22T18:54:28.747Z',
  disbursement_payment_id: 'DISB-2026-000001',
  lock_tx_hash: '0xb05f9474a2175c3b3025c0b0d18d42b5c2e86844dfa18a042ef76501b9d87f71',
  created_at: '2026-11-22T18:54:59.225Z',
  created_by: 'manager-bugisu',
  disbursed_at: '2026-11-22T18:55:01.551Z',
  updated_at: '2026-11-22T18:55:01.551Z',
};
const repaidLoan: Loan = {
  ...loanRecord,
  status: 'REPAID',
  repaid_usd_micro: 339371538,
  repay_tx_hash: '0x8496635bad50e9fda09037c52f2ce12e510e3be5e54b7c2f3d5c5fc986e0bacf',
  repaid_by_purchase_order_id: 'PO-01M829S6SDZ6HNR7JWSZV7CY6H',
  repaid_at: '2026-11-22T18:55:02.839Z',
  updated_at: '2026-11-22T18:55:02.839Z',
};
const depositRecord: Deposit = {
  payment_id: 'DEP-2026-000001',
  payment_type: 'MFI_DEPOSIT',
  mfi_id: 'MFI-ELGON-01',
  status: 'COMPLETED',
  source_currency: 'USD',
  source_amount: 20000,
  amount_usd_micro: 20000000000,
  ramp_payment_id: 'ramp_01M829S1K44TV0EH2F3T8EZYAK',
  chain_tx_hash: '0x5a85ca867d9c5e84a44ac6b7ac0c1363fa233a1a3e66c731de937a2454a58ff1',
  vault_shares_issued: '20000000000',
  created_at: '2026-11-22T18:54:56.592Z',
  created_by: 'mfi-elgon',
  completed_at: '2026-11-22T18:54:58.778Z',
  updated_at: '2026-11-22T18:54:58.778Z',
};
const stageJob: Job = {
  job_id: 'JOB-01M829T1PT35DWEJKNCY8T3VQ9',
  type: 'STAGE_CHANGE',
  status: 'COMPLETE',
  cooperative_id: COOP,
  batch_id: 'BATCH-2026-000001',
  tx_hash: '0x0629779bfe582648d7baa2eda96c489f34dbc9be35cb72ec597d4a9b5efa75df',
  created_at: '2026-11-22T18:54:59.001Z',
  completed_at: '2026-11-22T18:54:59.037Z',
};
const registrationJob: Job = {
  job_id: 'JOB-01M829Q8D2F5H8K1M4P7R0T3W6',
  type: 'FARMER_REGISTRATION',
  status: 'COMPLETE',
  cooperative_id: COOP,
  farmer_id: 'UG-BUD-004512',
  created_at: '2026-11-22T18:54:52.261Z',
  completed_at: '2026-11-22T18:55:12.044Z',
};
const ddsRecord: Pick<
  DdsRecord,
  | 'dds_id'
  | 'batch_id'
  | 'cooperative_id'
  | 'status'
  | 'ipfs_cid'
  | 'reference_number'
  | 'verification_number'
  | 'filed_at'
  | 'available_at'
  | 'created_at'
> = {
  dds_id: dds.dds_id,
  batch_id: dds.batch_id,
  cooperative_id: COOP,
  status: 'AVAILABLE',
  ipfs_cid: dds.ipfs_cid,
  reference_number: dds.reference_number,
  verification_number: dds.verification_number,
  filed_at: '2026-11-22T18:55:10.988Z',
  available_at: '2026-11-22T18:55:41.305Z',
  created_at: dds.created_at,
};
const STAGE_TX = '0x0629779bfe582648d7baa2eda96c489f34dbc9be35cb72ec597d4a9b5efa75df';
const stageHistory = (graded: string | null) => [
  {
    stage: 'DELIVERED',
    at: '2026-11-22T18:54:52.870Z',
    actor: 'demo-field-agent',
    chain_tx_hash: '0x8e1f3c0d5b7a9e2c4f6a8b0d2e4f6a8c0e2a4c6e8f0b2d4f6a8c0e2a4c6e8f0b',
    audit_log_sequence_number: '1',
    evidence_ipfs_cid: null,
  },
  {
    stage: 'GRADED',
    at: '2026-11-22T18:54:59.001Z',
    actor: 'quality-bugisu',
    chain_tx_hash: graded,
    audit_log_sequence_number: '4',
    evidence_ipfs_cid: 'bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y',
  },
];

/** The event `type` the mapper makes of the change `before` → `after` of a stored item of `entity`. */
function eventOf(type: OutboundEventType, entity: string, before: object | undefined, after: object): OutboundEvent {
  const image = (o: object): ItemImage => JSON.parse(JSON.stringify({ ...o, entity })) as ItemImage;
  const event = outboundEventsOfChange(before && image(before), image(after)).find((e) => e.type === type);
  if (!event) throw new Error(`the event mapper makes no ${type} of this ${entity} change`);
  return event;
}

export const EVENTS: Array<{ type: OutboundEventType; summary: string; events: OutboundEvent[] }> = [
  {
    type: 'batch.stage_changed',
    summary:
      "A batch moved to a new custody stage, once the stage's trace-log transaction is mined (`data`: batch_id, stage, at, chain_tx_hash).",
    events: [
      eventOf(
        'batch.stage_changed',
        'BATCH',
        { batch_id: 'BATCH-2026-000001', cooperative_id: COOP, stage_history: stageHistory(null) },
        { batch_id: 'BATCH-2026-000001', cooperative_id: COOP, stage_history: stageHistory(STAGE_TX) },
      ),
    ],
  },
  {
    type: 'payout.completed',
    summary:
      'A payout (a FARMER_PAYOUT `PAY-…`, or a LOAN_DISBURSEMENT `DISB-…` with `loan_id`) became COMPLETED: to mobile money, or paid in cash at the office after a manual review (`settlement_channel: CASH_AT_OFFICE`, `cash_receipt_number`). `data` is the stored payment record: amounts are integers (`amount_usd_micro` in micro-USDC, `amount_ugx` whole shillings), `exchange_rate` a decimal string, `phone` masked.',
    events: [
      eventOf('payout.completed', 'PAYMENT', { ...payoutRecord, ...processing }, payoutRecord),
      eventOf('payout.completed', 'PAYMENT', { ...disbursementRecord, ...processing }, disbursementRecord),
      eventOf('payout.completed', 'PAYMENT', reviewRecord, cashRecord),
    ],
  },
  {
    type: 'payout.manual_review',
    summary:
      'A payout exhausted its attempts and waits for a manual review. `data` is the stored payment record as in payout.completed (`last_failure_reason`; phone masked). One event per review round (`webhook-id` ends `_r<round>`).',
    events: [
      eventOf('payout.manual_review', 'PAYMENT', { ...reviewRecord, status: 'RETRY_3' }, reviewRecord),
      eventOf(
        'payout.manual_review',
        'PAYMENT',
        { ...disbursementRecord, ...processing, status: 'RETRY_3' },
        {
          ...disbursementRecord,
          ...processing,
          status: 'MANUAL_REVIEW',
          attempt: 4,
          retry_count: 3,
          last_failure_reason: 'PROVIDER_TIMEOUT',
        },
      ),
    ],
  },
  {
    type: 'job.completed',
    summary:
      'An asynchronous operation finished (job status COMPLETE): `batch_id` and `tx_hash` for batch jobs, `farmer_id` for registrations.',
    events: [
      eventOf('job.completed', 'JOB', { ...stageJob, status: 'PENDING', completed_at: undefined }, stageJob),
      eventOf('job.completed', 'JOB', { ...registrationJob, status: 'PENDING', completed_at: undefined }, registrationJob),
    ],
  },
  {
    type: 'dds.generated',
    summary:
      'A due diligence statement became AVAILABLE: the EU Information System accepted the filing and gave its reference and verification numbers (sent once, at AVAILABLE; not at generation or PENDING_FILING).',
    events: [eventOf('dds.generated', 'DDS', { ...ddsRecord, status: 'SUBMITTED' }, ddsRecord)],
  },
  {
    type: 'loan.disbursed',
    summary:
      "A loan's principal reached the farmer (its LOAN_DISBURSEMENT `DISB-…` became COMPLETED): amounts are integers (`amount_usd_micro` micro-USDC, `amount_ugx` whole shillings).",
    events: [eventOf('loan.disbursed', 'PAYMENT', { ...disbursementRecord, ...processing }, disbursementRecord)],
  },
  {
    type: 'loan.repaid',
    summary:
      "A loan was repaid from a buyer's payment: `principal_usd_micro` and `repaid_usd_micro` (principal + interest) in micro-USDC integers.",
    events: [eventOf('loan.repaid', 'LOAN', loanRecord, repaidLoan)],
  },
  {
    type: 'deposit.completed',
    summary:
      "An MFI deposit reached the vault: `amount_usd_micro` micro-USDC (integer), `source_amount` whole units of `source_currency`, `vault_shares_issued` the vault's on-chain share units (12 decimals: a decimals offset of 6 over the 6-decimal asset) as a decimal string.",
    events: [
      eventOf(
        'deposit.completed',
        'DEPOSIT',
        { ...depositRecord, status: 'PROCESSING', chain_tx_hash: undefined, vault_shares_issued: undefined },
        depositRecord,
      ),
    ],
  },
];

/** The example event of each type, as the mapper makes it. */
export const OUTBOUND_EVENT_EXAMPLES: Record<string, OutboundEvent> = Object.fromEntries(EVENTS.map((e) => [e.type, e.events[0]!]));

export const endpointRecord: RevealedEndpoint = {
  endpoint_id: 'whe_01JD7Q0S6W3M8Z4R2N5B9X1CTE',
  owner: { kind: 'COOPERATIVE', id: COOP },
  url: 'https://erp.bugisu-cu.example/hooks/coffee-trace',
  events: ['batch.stage_changed', 'payout.completed', 'payout.manual_review'],
  description: 'Cooperative ERP',
  status: 'ACTIVE',
  secret: 'whsec_MfKQ9r8GKYqXnOoIyC1B2Bf8q3r0PmIzVw4xT7uS',
  created_at: '2026-11-22T19:10:04.211Z',
  created_by: 'manager-bugisu',
  updated_at: '2026-11-22T19:10:04.211Z',
};
export const disabledEndpoint: RevealedEndpoint = {
  ...endpointRecord,
  endpoint_id: 'whe_01JD7PY2B5E8H1K4N7Q0T3V6X9',
  url: 'https://old-erp.bugisu-cu.example/webhooks',
  events: ['job.completed'],
  description: undefined,
  status: 'DISABLED',
  disabled_reason: 'the receiver answered 410 Gone at 2026-11-22T19:05:17.482Z',
  created_at: '2026-11-20T07:31:55.019Z',
  updated_at: '2026-11-22T19:05:17.482Z',
};
export const rotatedEndpoint: RevealedEndpoint = {
  ...endpointRecord,
  secret: 'whsec_3v9XbT0kq1Zr7YdPLw2s8NfGmH5c4JuAe6Rp',
  previous_secret_expires_at: '2026-11-23T19:12:00.000Z',
  updated_at: '2026-11-22T19:12:00.000Z',
};
const payoutEvent = EVENTS[1]!.events[0]!;
const failedDelivery: OutboundDelivery = {
  delivery_id: 'whd_4T9KQ2M7XB3N8V5C1R6W0ZD2HF',
  endpoint_id: endpointRecord.endpoint_id,
  event: payoutEvent,
  state: 'FAILED',
  attempts: 2,
  round_attempts: 2,
  last_status_code: 503,
  last_attempt_at: '2026-11-22T19:11:09.530Z',
  next_attempt_at: '2026-11-22T19:16:09.530Z',
  pending_token: 'tok_01M82B4G2K5N8Q1T4W7Z0C3F6H',
  created_at: '2026-11-22T19:11:04.102Z',
  updated_at: '2026-11-22T19:11:09.530Z',
};
export const deliveries: OutboundDelivery[] = [
  failedDelivery,
  {
    ...failedDelivery,
    delivery_id: 'whd_8PZ3J6M1QC5X9R2V7B0K4NT8WD',
    event: EVENTS[0]!.events[0]!,
    state: 'DELIVERED',
    attempts: 1,
    round_attempts: 1,
    last_status_code: 200,
    pending_token: undefined,
    next_attempt_at: undefined,
    last_attempt_at: '2026-11-22T19:10:31.207Z',
    created_at: '2026-11-22T19:10:30.995Z',
    updated_at: '2026-11-22T19:10:31.207Z',
  },
  {
    ...failedDelivery,
    delivery_id: 'whd_2GH7W4Y9D1S6F3A8E5C0V2X7NB',
    event: EVENTS[2]!.events[0]!,
    state: 'DEAD',
    attempts: 8,
    round_attempts: 8,
    last_status_code: undefined,
    last_error: 'ECONNREFUSED',
    pending_token: undefined,
    next_attempt_at: undefined,
    last_attempt_at: '2026-11-21T06:44:12.300Z',
    created_at: '2026-11-19T10:02:11.804Z',
    updated_at: '2026-11-21T06:44:12.300Z',
  },
];
const REPLAYED_AT = '2026-11-22T19:20:00.000Z';
export const replayed: OutboundDelivery = {
  ...failedDelivery,
  state: 'PENDING',
  round_attempts: 0,
  pending_token: 'tok_01M82BCQ0W3Z6C9F2H5K8N1R4T',
  next_attempt_at: REPLAYED_AT,
  updated_at: REPLAYED_AT,
};
export const view = <T>(x: T): Json => JSON.parse(JSON.stringify(x)) as Json;
