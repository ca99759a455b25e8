import { ERROR_CODES } from './error-codes';
import type { ErrorCode } from '../domain/errors';
import type { DdsRecord } from '../domain/dds';
import type { Deposit, Loan } from '../domain/lending';
import {
  outboundEventBody,
  outboundEventsOfChange,
  type ItemImage,
  type OutboundDelivery,
  type RevealedEndpoint,
  type OutboundEvent,
  type OutboundEventType,
} from '../domain/outbound-webhooks';
import type { Job, Payout } from '../domain/records';
import { PaymentViewSchema } from './view-schemas';
import type { AnyRouteDefinition } from './routes/define';
import { deliveryView, endpointView, endpointWithSecretView } from './outbound-webhook-schemas';
import type * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';

/**
 * The responses of the OpenAPI document: for every route its success response(s) with a JSON
 * Schema and a realistic example (recorded from the local stack running `npm run demo`, shaped by
 * the views in shared/http/views.ts and deposit-views.ts), the error responses it can produce by
 * status with an example per code, the Standard Webhooks headers of the inbound webhook routes,
 * and the outbound webhook events. The outbound webhook routes' and events'
 * examples are made by the real views and event mapper from realistic records (see below).
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = Record<string, unknown>;

/**
 * A declared schema as JSON Schema 2020-12 for the document (custom checks left out). The
 * discriminated unions (`v.variant`) carry an OpenAPI `discriminator`, so each kind's required
 * fields apply only to it.
 */
function declaredSchema(schema: v.GenericSchema): Schema {
  const { $schema: _s, ...js } = toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore' }) as Schema;
  const key = (schema as { type?: string; key?: string }).type === 'variant' ? (schema as unknown as { key: string }).key : undefined;
  if (!key) return js;
  const named = NAMED_BRANCHES[key];
  const branches = js.oneOf as Schema[] | undefined;
  if (!named || !branches?.every((b) => named[branchValue(b, key)])) return { ...js, discriminator: { propertyName: key } };
  // Each branch becomes a component schema referenced by `$ref`, the discriminator mapping to it.
  const mapping: Record<string, string> = {};
  const oneOf = branches.map((b) => {
    const name = named[branchValue(b, key)]!;
    mapping[branchValue(b, key)] = `#/components/schemas/${name}`;
    return { $ref: `#/components/schemas/${name}` };
  });
  return { oneOf, discriminator: { propertyName: key, mapping } };
}

/** Component names of the branches of a discriminated union, by discriminator property and value. */
const NAMED_BRANCHES: Record<string, Record<string, string>> = {
  payment_type: { FARMER_PAYOUT: 'FarmerPayoutPayment', LOAN_DISBURSEMENT: 'LoanDisbursementPayment', MFI_DEPOSIT: 'MfiDepositPayment' },
};
/** The branch schemas named in NAMED_BRANCHES, as the document's `components.schemas` entries. */
export function namedBranchSchemas(): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const union of [PaymentViewSchema]) {
    const { oneOf } = toJsonSchema(union, { target: 'draft-2020-12', errorMode: 'ignore' }) as { oneOf: Schema[] };
    for (const b of oneOf) out[NAMED_BRANCHES.payment_type![branchValue(b, 'payment_type')]!] = b;
  }
  return out;
}
function branchValue(branch: Schema, key: string): string {
  return String((branch.properties as Record<string, { const?: unknown }> | undefined)?.[key]?.const);
}

/**
 * The shape of an outbound event's `data` as the real event mapper makes it (the events are
 * request bodies the service sends, not responses): types from the values, every key present.
 */
function schemaOf(value: Json): Schema {
  if (value === null) return {};
  if (Array.isArray(value)) return { type: 'array', items: value.length ? value.map((x) => schemaOf(x)).reduce(merge) : {} };
  if (typeof value === 'object') {
    const properties = Object.fromEntries(Object.entries(value).map(([k, x]) => [k, schemaOf(x)]));
    return { type: 'object', required: Object.keys(value), properties };
  }
  return { type: typeof value === 'number' ? 'number' : typeof value };
}

/** Two schemas of array elements as one: properties united (required by both), integer ∪ number = number. */
function merge(a: Schema, b: Schema): Schema {
  if (a.type === 'object' && b.type === 'object') {
    const pa = a.properties as Record<string, Schema>,
      pb = b.properties as Record<string, Schema>;
    const properties = Object.fromEntries(
      [...new Set([...Object.keys(pa), ...Object.keys(pb)])].map((k) => [k, pa[k] && pb[k] ? merge(pa[k], pb[k]) : (pa[k] ?? pb[k])!]),
    );
    return { ...a, properties, required: (a.required as string[]).filter((k) => (b.required as string[]).includes(k)) };
  }
  return a;
}

// ------------------------------------------------------------------------------------------ examples
// Recorded from the local stack (`npm start`, `npm run demo`), trimmed where lists are long.

const TX = '0xc5f83b8301f79f2e7f95e9be6f668aa7f9ecdf11bf9555340379b27760076f4f';
const GPS = { lng: 34.248713, lat: 1.231004 };

const cooperative = {
  cooperative_id: 'BUGISU-CU-01',
  name: 'Bugisu Cooperative Union',
  district: 'Mbale',
  licence_status: 'ACTIVE',
  licence_expires_at: '2027-06-30',
  manager: { name: 'Sarah Wanyama', phone: '+256 7•• ••• 019', email: 'manager@bugisu-cu.example' },
  prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
  export_premium_ugx_per_kg: 400,
  created_at: '2026-11-22T18:54:52.121Z',
  updated_at: '2026-11-22T18:54:52.121Z',
  active: true,
};

const farmer = {
  farmer_id: 'UG-BUD-004512',
  full_name: 'Nabulo Mirembe',
  cooperative_id: 'BUGISU-CU-01',
  phone: '+256 7•• ••• 305',
  district: 'Bududa',
  farm: { area_ha: 1.2, gps: { lng: 34.331245, lat: 1.011812 } },
  national_registry_status: 'VERIFIED',
  gfw_status: 'CLEAR',
  gfw_checked_at: '2026-11-22T18:54:52.323Z',
  gfw_dataset: { name: 'bundled-alert-areas', version: '2026-11-01' },
  registered_at: '2026-11-22T18:54:52.261Z',
};

const batch = {
  batch_id: 'BATCH-2026-000002',
  token_id: '2026000000000002',
  farmer_id: 'UG-SIR-001877',
  cooperative_id: 'BUGISU-CU-01',
  weight_kg: 96,
  grade: 'screen15',
  moisture_pct: 12,
  collection_point_gps: GPS,
  weight_slip_photo_url: null,
  collector_agent_id: 'AGENT-MBL-07',
  stage: 'DELIVERED',
  chain_tx_hash: TX,
  stage_history: [
    {
      stage: 'DELIVERED',
      at: '2026-11-22T18:54:53.089Z',
      actor: 'demo-field-agent',
      chain_tx_hash: TX,
      audit_log_sequence_number: '1',
      evidence_ipfs_cid: null,
      evidence_pin_status: null,
    },
    {
      stage: 'GRADED',
      at: '2026-11-22T18:54:59.001Z',
      actor: 'quality-bugisu',
      chain_tx_hash: null,
      audit_log_sequence_number: '4',
      evidence_ipfs_cid: 'bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y',
      evidence_pin_status: 'PENDING',
    },
  ],
  dds_eligible: false,
  payment_status: 'PAYMENT_CONFIRMED',
  payment_amount_ugx: 883200,
  audit_log_length: 3,
  created_at: '2026-11-22T18:54:53.089Z',
  updated_at: '2026-11-22T18:54:55.522Z',
};

const stageUpdate = {
  batch_id: 'BATCH-2026-000001',
  previous_stage: 'DELIVERED',
  new_stage: 'GRADED',
  chain_tx_hash: '0x0629779bfe582648d7baa2eda96c489f34dbc9be35cb72ec597d4a9b5efa75df',
  audit_log_sequence_number: '4',
  evidence_ipfs_cid: 'bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y',
  dds_eligible: true,
  timestamp: '2026-11-22T18:54:59.037Z',
};

/** POST /batch/{id}/evidence-uploads: a presigned PUT as the S3 presigner makes it in AWS (credentials shortened). */
const evidenceUpload = {
  upload_id: 'UPL-01M82A3B5K7Q9S1V3X5Z7B9D1F',
  batch_id: 'BATCH-2026-000001',
  content_type: 'image/jpeg',
  size_bytes: 4718592,
  url: 'https://coffeetrace-dev-evidenceuploadsbucket1f2a3b4c-9x8y7z6w5v4u.s3.eu-west-1.amazonaws.com/evidence-uploads/BATCH-2026-000001/UPL-01M82A3B5K7Q9S1V3X5Z7B9D1F?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Credential=ASIA3EXAMPLE%2F20261122%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20261122T185412Z&X-Amz-Expires=900&X-Amz-Security-Token=IQoJb3JpZ2luX2VjE…&X-Amz-Signature=5f0c7e5d3b1a9e8c7f6d5b4a3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&x-id=PutObject',
  method: 'PUT',
  headers: { 'Content-Type': 'image/jpeg', 'Content-Length': '4718592' },
  expires_at: '2026-11-22T19:09:12.204Z',
  attach_by: '2026-11-23T18:54:12.204Z',
};

const payoutStatus = {
  payout_id: 'PAY-2026-000002-01',
  status: 'COMPLETED',
  amount_usdc: 238.686576,
  amount_ugx: 883200,
  provider_order_id: 'ord_01M829RYHRT3KXMBX0GJ87H1VB',
  mobile_money_transaction_id: 'MP3412205833',
  completed_at: '2026-11-22T18:54:55.522Z',
  elapsed_seconds: 2,
  retry_count: 0,
  settlement_channel: 'MOBILE_MONEY',
  cash_receipt: null,
};

const payment = {
  payment_id: 'PAY-2026-000002-01',
  payment_type: 'FARMER_PAYOUT',
  status: 'COMPLETED',
  amount_usdc: 238.686576,
  created_at: '2026-11-22T18:54:53.470Z',
  completed_at: '2026-11-22T18:54:55.522Z',
  settled_at: '2026-11-22T18:54:55.496Z',
  updated_at: '2026-11-22T18:54:55.522Z',
  farmer_id: 'UG-SIR-001877',
  batch_id: 'BATCH-2026-000002',
  cooperative_id: 'BUGISU-CU-01',
  amount_ugx: 883200,
  exchange_rate: 3700.25,
  provider_order_id: 'ord_01M829RYHRT3KXMBX0GJ87H1VB',
  mobile_money_transaction_id: 'MP3412205833',
  reason: 'NET_COFFEE_PAYMENT',
  elapsed_seconds: 2,
  retry_count: 0,
  settlement_channel: 'MOBILE_MONEY',
  cash_receipt: null,
};

const deposit = {
  payment_id: 'DEP-2026-000001',
  payment_type: 'MFI_DEPOSIT',
  status: 'COMPLETED',
  amount_usdc: 20000,
  created_at: '2026-11-22T18:54:56.592Z',
  completed_at: '2026-11-22T18:54:58.778Z',
  updated_at: '2026-11-22T18:54:58.778Z',
  mfi_id: 'MFI-ELGON-01',
  source_currency: 'USD',
  source_amount: 20000,
  ramp_payment_id: 'ramp_01M829S1K44TV0EH2F3T8EZYAK',
  chain_tx_hash: '0x5a85ca867d9c5e84a44ac6b7ac0c1363fa233a1a3e66c731de937a2454a58ff1',
  vault_shares_issued: 20000000000,
  refund_tx_hash: null,
  refunded_at: null,
  failure_reason: null,
};

const loan = {
  loan_id: 'LOAN-2026-000001',
  batch_id: 'BATCH-2026-000001',
  token_id: '2026000000000001',
  farmer_id: 'UG-BUD-004512',
  cooperative_id: 'BUGISU-CU-01',
  status: 'ACTIVE',
  principal_usdc: 339.26,
  apr: 0.12,
  collateral_value_usdc: 1130.88,
  ltv: 0.3,
  price_usd_per_kg: 6.2,
  price_updated_at: '2026-11-22T18:54:28.747Z',
  disbursement_payment_id: 'DISB-2026-000001',
  lock_tx_hash: '0xb05f9474a2175c3b3025c0b0d18d42b5c2e86844dfa18a042ef76501b9d87f71',
  repaid_usdc: null,
  repay_tx_hash: null,
  repaid_by_purchase_order_id: null,
  created_at: '2026-11-22T18:54:59.225Z',
  disbursed_at: '2026-11-22T18:55:01.551Z',
  repaid_at: null,
  cancelled_at: null,
  cancel_reason: null,
  due_at: '2027-05-21T18:54:59.225Z',
  defaulted_at: null,
  loss_usdc: null,
  write_off_tx_hash: null,
};

const purchaseOrder = {
  purchase_order_id: 'PO-01M829S6SDZ6HNR7JWSZV7CY6H',
  status: 'DRAFT',
  cooperative_id: 'BUGISU-CU-01',
  batch_ids: ['BATCH-2026-000001'],
  buyer: 'Hamburg Coffee Importers GmbH',
  price_usd_per_kg: 7.1,
  buyer_operator: {
    name: 'Hamburg Coffee Importers GmbH',
    eori: 'DE123456789012345',
    address: 'Am Sandtorkai 1, 20457 Hamburg',
    email: 'dds@hci.example',
    country: 'DE',
  },
  created_at: '2026-11-22T18:55:01.901Z',
  amount_due_usdc: 1295.04,
  paid_usdc: 0,
  buyer_address: '0x427db1700a4209a8a9b5536753b06945892620ec',
};

const dds = {
  dds_id: 'DDS-01M82A0Q3V6W1T2X9EJ4B7N5KD',
  batch_id: 'BATCH-2026-000001',
  status: 'AVAILABLE',
  internal_reference_number: 'BUGISU-CU-01/BATCH-2026-000001',
  activity_type: 'IMPORT',
  country_of_activity: 'DE',
  country_of_entry: 'DE',
  operator: {
    name: 'Hamburg Coffee Importers GmbH',
    eori: 'DE123456789012345',
    address: 'Am Sandtorkai 1, 20457 Hamburg',
    email: 'dds@hci.example',
    country: 'DE',
  },
  hs_heading: '0901',
  description_of_goods: 'Green coffee, not roasted, grade screen18, batch BATCH-2026-000001',
  net_weight_kg: 182.4,
  country_of_production: 'UG',
  producers: [
    {
      farmer_id: 'UG-BUD-004512',
      name: 'Nabulo Mirembe',
      country: 'UG',
      geolocation_geojson: 'eyJ0eXBlIjoiRmVhdHVyZUNvbGxlY3Rpb24iLCJmZWF0dXJlcyI6W119',
    },
  ],
  geolocation: {
    type: 'FeatureCollection',
    features: [
      {
        type: 'Feature',
        properties: { farmer_id: 'UG-BUD-004512', area_ha: 1.2 },
        geometry: { type: 'Point', coordinates: [34.331245, 1.011812] },
      },
    ],
  },
  ipfs_cid: 'bafybeihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku',
  reference_number: '26DEQ7VKZ3HX2M',
  verification_number: 'K7QW2P9D',
  rejection_reason: null,
  created_at: '2026-11-22T18:55:10.412Z',
};

const settlement = {
  purchase_order_id: 'PO-01M829S6SDZ6HNR7JWSZV7CY6H',
  cooperative_id: 'BUGISU-CU-01',
  status: 'COMPLETED',
  payment_tx_hash: '0xce94f1216ec49ac3e72986b7508acdf1fae65fbb4719af5fa69c5e49d61d89ae',
  payer: '0x427db1700a4209a8A9b5536753b06945892620eC',
  amount_usdc: 1295.04,
  repayments: [
    {
      loan_id: 'LOAN-2026-000001',
      batch_id: 'BATCH-2026-000001',
      principal_usdc: 339.26,
      interest_usdc: 0.111538,
      amount_usdc: 339.371538,
      status: 'REPAID',
      repay_tx_hash: '0x8496635bad50e9fda09037c52f2ce12e510e3be5e54b7c2f3d5c5fc986e0bacf',
    },
  ],
  unpaid_loan_ids: ['LOAN-2026-000007'],
  settled_batch_ids: ['BATCH-2026-000001'],
  remainder_usdc: 955.668462,
  remainder_status: 'RELEASED',
  remainder_tx_hash: '0xb3423902dbb491d9d6a2eafb0c0eac5d2dd33bad2bbedc997ceef8d7ff27705b',
  created_at: '2026-11-22T18:55:02.741Z',
  completed_at: '2026-11-22T18:55:02.947Z',
  paid_usdc: 1295.04,
  short_payment: false,
  settled_by: 'system:lending-vault',
};

/** A buyer payment as the settlement view and the refund answer show it. */
const buyerPayment = {
  tx_hash: '0xce94f1216ec49ac3e72986b7508acdf1fae65fbb4719af5fa69c5e49d61d89ae',
  log_index: 2,
  block_number: 41,
  payer: '0x427db1700a4209a8A9b5536753b06945892620eC',
  amount_usdc: 1295.04,
  status: 'COUNTED',
  unapplied_reason: null,
  received_at: '2026-11-22T18:55:02.701Z',
  refund_id: null,
  refund_tx_hash: null,
  refunded_at: null,
};
const unappliedPayment = {
  ...buyerPayment,
  tx_hash: '0x5be1d3f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3',
  log_index: 1,
  block_number: 44,
  payer: '0x8626f6940E2eb28930eFb4CeF49B2d1F2C9C1199',
  amount_usdc: 10,
  status: 'REFUNDED',
  unapplied_reason: 'OTHER_PAYER',
  refund_id: 'RFD-3f1c2a9e4b7d3f60a5c8e2d1b9f7',
  refund_tx_hash: '0x9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c',
  refunded_at: '2026-11-22T18:56:40.120Z',
};
const settlementReading = {
  ...settlement,
  amount_due_usdc: 1295.04,
  buyer_address: '0x427db1700a4209a8a9b5536753b06945892620ec',
  payments: [buyerPayment],
  unapplied_payments: [unappliedPayment],
};

const job = {
  job_id: 'JOB-01M829T1PT35DWEJKNCY8T3VQ9',
  type: 'STAGE_CHANGE',
  status: 'COMPLETE',
  batch_id: 'BATCH-2026-000001',
  tx_hash: '0x0629779bfe582648d7baa2eda96c489f34dbc9be35cb72ec597d4a9b5efa75df',
  created_at: '2026-11-22T18:54:59.001Z',
  completed_at: '2026-11-22T18:54:59.037Z',
};

const webhookAck = { received: true, outcome: 'APPLIED' };

/** A success response: status, what it means, its example (the schema is derived from it) and headers. */
interface Success {
  status: string;
  description: string;
  example: Json;
  location?: boolean;
  contentType?: string;
  schema?: Schema;
  /** Further media types of the same status (content negotiation, files served as they are). */
  more?: Record<string, { schema: Schema; example?: Json }>;
}

const ok = (example: Json, description = 'OK'): Success => ({ status: '200', description, example });
const created = (example: Json, description = 'Created; `Location` names the new resource.'): Success => ({
  status: '201',
  description,
  example,
  location: true,
});
const accepted = (example: Json, description: string): Success => ({ status: '202', description, example, location: true });
const jobAccepted = (extra: Record<string, Json>) =>
  accepted(
    { job_id: 'JOB-01M829T1PT35DWEJKNCY8T3VQ9', status: 'PENDING', ...extra },
    'Accepted: completes asynchronously; poll GET /jobs/{job_id} (`Location`).',
  );

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

const EVENTS: Array<{ type: OutboundEventType; summary: string; events: OutboundEvent[] }> = [
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

const endpointRecord: RevealedEndpoint = {
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
const disabledEndpoint: RevealedEndpoint = {
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
const rotatedEndpoint: RevealedEndpoint = {
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
const deliveries: OutboundDelivery[] = [
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
const replayed: OutboundDelivery = {
  ...failedDelivery,
  state: 'PENDING',
  round_attempts: 0,
  pending_token: 'tok_01M82BCQ0W3Z6C9F2H5K8N1R4T',
  next_attempt_at: REPLAYED_AT,
  updated_at: REPLAYED_AT,
};
const view = <T>(x: T): Json => JSON.parse(JSON.stringify(x)) as Json;

/** The success responses of each route, by function folder. */
const SUCCESS: Record<string, Success[]> = {
  'create-cooperative': [created(cooperative)],
  'update-cooperative': [ok(cooperative)],
  'get-cooperative': [ok(cooperative)],
  'get-holding-balance': [
    ok({ cooperative_id: 'BUGISU-CU-01', held_usdc: 126.045538, payouts_held: 1, updated_at: '2026-11-22T19:02:11.804Z' }),
  ],
  'register-farmer': [
    created(farmer),
    accepted(
      {
        error: {
          code: 'MAAIF_API_UNAVAILABLE',
          message: 'National farmer registry not responding; registration completes later.',
          docs: 'http://127.0.0.1:3000/docs/errors#MAAIF_API_UNAVAILABLE',
          request_id: '01M829T1PT35DWEJKNCY8T3VQ9',
        },
        job_id: 'JOB-01M829T1PT35DWEJKNCY8T3VQ9',
        status: 'PENDING',
        farmer: { ...farmer, national_registry_status: 'PENDING' },
      },
      'The national registry did not answer: the farmer is recorded as pending until the job completes.',
    ),
  ],
  'get-farmer': [ok(farmer)],
  'update-farmer': [
    ok({
      ...farmer,
      phone: '+256 7•• ••• 888',
      phone_updated_at: '2026-11-23T08:00:00.000Z',
      phone_changes: [
        {
          at: '2026-11-23T08:00:00.000Z',
          actor: 'manager-bugisu',
          actor_role: 'COOPERATIVE',
          previous_phone: '+256 7•• ••• 305',
          phone: '+256 7•• ••• 888',
        },
      ],
    }),
  ],
  'get-credit-score': [
    ok({
      farmer_id: 'UG-BUD-004512',
      score: 575,
      band: 'D',
      computed_at: '2026-11-22T18:55:29.460Z',
      formula_version: '1',
      factors: [
        { name: 'deliveries', value: 1, effect: 4 },
        { name: 'volume_kg', value: 182.4, effect: 1 },
        { name: 'quality', value: 100, effect: 30 },
        { name: 'loans_repaid_on_time', value: 1, effect: 40 },
      ],
    }),
  ],
  'submit-batch': [
    created(
      {
        success: true,
        data: {
          batch_id: 'BATCH-2026-000002',
          token_id: '2026000000000002',
          chain_tx_hash: TX,
          audit_log_message_id: 'AUD-BATCH-2026-000002-1',
          payment_status: 'INITIATED',
          payment_amount_ugx: 883200,
          farmer_phone: '+256 7•• ••• 760',
          estimated_payment_time_seconds: 30,
          stage: 'DELIVERED',
          created_at: '2026-11-22T18:54:53.089Z',
        },
      },
      'Minted: the BatchToken exists; the payout has started.',
    ),
    jobAccepted({ batch_id: 'BATCH-2026-000002' }),
  ],
  'update-batch-stage': [
    ok(stageUpdate, 'The stage is recorded and its trace-log transaction mined.'),
    jobAccepted({ ...stageUpdate, chain_tx_hash: null }),
  ],
  'create-evidence-upload': [
    {
      ...created(
        evidenceUpload,
        'The upload: PUT the photo to `url` with `headers` before `expires_at`, then name `upload_id` as `evidence_upload_id` in PATCH /batch/{id}/stage before `attach_by`.',
      ),
      location: false,
    },
  ],
  'get-batch-audit': [
    ok({
      batch_id: 'BATCH-2026-000002',
      token_id: '2026000000000002',
      entries: [
        {
          sequence_number: 1,
          message_id: 'AUD-BATCH-2026-000002-1',
          type: 'BATCH_SUBMITTED',
          at: '2026-11-22T18:54:53.089Z',
          actor: 'demo-field-agent',
          batch_id: 'BATCH-2026-000002',
          payload: { stage: 'DELIVERED', farmer_id: 'UG-SIR-001877', weight_kg: 96, grade: 'screen15', payment_amount_ugx: 883200 },
          prev_hash: '0'.repeat(64),
          hash: '65c7cd03f60110e64ae242c17a8922664cdef108182e89e83edd87456b584fc2',
          anchor: { tx_hash: TX, block_number: 41 },
        },
        {
          sequence_number: 2,
          message_id: 'AUD-BATCH-2026-000002-2',
          type: 'PAYOUT_PROCESSING',
          at: '2026-11-22T18:54:53.412Z',
          actor: 'system',
          batch_id: 'BATCH-2026-000002',
          payload: { payment_id: 'PAY-2026-000002-01', reason: 'NET_COFFEE_PAYMENT' },
          prev_hash: '65c7cd03f60110e64ae242c17a8922664cdef108182e89e83edd87456b584fc2',
          hash: '0d4f6a28b1c3e5f7092a4c6e8f0b2d4f6a8c0e2a4c6e8f0b2d4f6a8c0e2a4c6e',
          anchor: {
            tx_hash: '0x5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c',
            block_number: 57,
            root: '0x9c4e2a7b1d3f5a8c0e2b4d6f8a1c3e5b7d9f2a4c6e8b0d2f4a6c8e1b3d5f7a9c',
            proof: ['0x1f3a5c7e9b2d4f6a8c0e3b5d7f9a2c4e6b8d1f3a5c7e9b2d4f6a8c0e3b5d7f9a'],
            head_sequence_number: 3,
            head_hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
          },
        },
      ],
      verified: true,
      checks: [
        {
          sequence_number: 1,
          message_id: 'AUD-BATCH-2026-000002-1',
          check: 'mint_event',
          ok: true,
          detail: `BatchMinted(token 2026000000000002, BATCH-2026-000002, 0x65c7cd03f6…) in tx ${TX}`,
        },
        {
          sequence_number: 2,
          message_id: 'AUD-BATCH-2026-000002-2',
          check: 'anchor',
          ok: true,
          detail:
            'anchored by the periodic anchor 0x9c4e2a7b1d… in tx 0x5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c (block 57), through the hash chain to head #3',
        },
      ],
      evidence_pins: [
        {
          sequence_number: 4,
          stage: 'GRADED',
          evidence_ipfs_cid: 'bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y',
          evidence_pin_status: 'PINNED',
        },
      ],
    }),
  ],
  'create-purchase-order': [created(purchaseOrder)],
  'confirm-purchase-order': [
    ok({ ...purchaseOrder, status: 'CONFIRMED', confirmed_at: '2026-11-22T18:55:01.950Z', committed_batch_ids: ['BATCH-2026-000001'] }),
  ],
  'get-batch': [ok(batch)],
  'get-job': [ok(job)],
  'create-farmer-payout': [
    created({
      payout_id: 'PAY-2026-000002-02',
      status: 'PROCESSING',
      farmer_id: 'UG-SIR-001877',
      batch_id: 'BATCH-2026-000002',
      reason: 'QUALITY_BONUS',
      amount_usdc: 25.5,
      estimated_ugx: 94356,
      exchange_rate: 3700.25,
      phone: '+256 7•• ••• 760',
      provider_order_id: 'ord_01M829RYHRT3KXMBX0GJ87H1VB',
      estimated_completion_seconds: 30,
      created_at: '2026-11-22T18:56:10.470Z',
    }),
  ],
  'get-farmer-payout': [ok(payoutStatus)],
  'resolve-farmer-payout': [
    ok({
      ...payoutStatus,
      payout_id: 'PAY-2026-000004-01',
      settlement_channel: 'CASH_AT_OFFICE',
      cash_receipt: { receipt_number: 'RCPT-MBL-0042', paid_at: '2026-11-23T08:10:00.000Z' },
      resolution: 'PAID_IN_CASH',
      phone: '+256 7•• ••• 613',
      attempt: 4,
      resolution_round: 0,
      resolved_at: '2026-11-23T08:12:41.003Z',
    }),
  ],
  'get-payment': [
    ok(
      payment,
      'A FARMER_PAYOUT or LOAN_DISBURSEMENT (`PAY-…`, `DISB-…`, the latter with `loan_id`) or an MFI_DEPOSIT (`DEP-…`, see the deposit fields).',
    ),
  ],
  'list-payments': [
    ok({
      payments: [
        {
          payment_id: 'PAY-2026-000002-01',
          payment_type: 'FARMER_PAYOUT',
          status: 'COMPLETED',
          amount_usdc: 238.686576,
          completed_at: '2026-11-22T18:54:55.522Z',
        },
      ],
      total: 1,
      limit: 50,
      next_token: null,
    }),
  ],
  'create-loan': [
    accepted(
      { ...loan, status: 'PENDING', lock_tx_hash: null, disbursed_at: null },
      'The loan is PENDING: the BatchToken is being locked, then the principal paid out (`Location: /loans/{loan_id}`).',
    ),
  ],
  'get-loan': [ok(loan)],
  'get-batch-loan': [ok(loan)],
  'create-mfi-deposit': [
    accepted(
      { ...deposit, status: 'PROCESSING', amount_usdc: 0, completed_at: null, chain_tx_hash: null, vault_shares_issued: null },
      'The deposit is PROCESSING with the on-ramp (`Location: /payments/DEP-…`).',
    ),
  ],
  'get-mfi-vault': [
    ok({
      total_assets_usdc: 20000.111538,
      total_shares: 20000000000,
      share_price_usdc: 1.000005,
      loans_outstanding_usdc: 339.26,
      utilisation: 0.017,
      apr: 0.12,
      par30_usdc: 0,
      defaults_usdc: 0,
      shares: 20000000000,
      value_usdc: 20000.111537,
    }),
  ],
  'onramp-webhook': [ok(webhookAck, 'Acknowledged (`outcome`: APPLIED, DUPLICATE_WEBHOOK, IGNORED, UNKNOWN_REFERENCE or MISMATCH).')],
  'payout-provider-webhook': [
    ok(webhookAck, 'Acknowledged (`outcome`: APPLIED, DUPLICATE_WEBHOOK, IGNORED, UNKNOWN_REFERENCE or MISMATCH).'),
  ],
  'chain-events-webhook': [ok(webhookAck, 'Acknowledged (`outcome`: APPLIED, DUPLICATE_WEBHOOK, IGNORED or MISMATCH).')],
  'verify-gfw': [
    ok({
      farmer_id: 'UG-BUD-004512',
      status: 'CLEAR',
      checked_at: '2026-11-22T18:54:52.323Z',
      dataset: { name: 'bundled-alert-areas', version: '2026-11-01' },
      alerts: [],
    }),
  ],
  'list-flagged-farms': [ok({ cooperative_id: 'BUGISU-CU-01', farmers: [{ ...farmer, gfw_status: 'FLAGGED' }], total: 1 })],
  'generate-dds': [
    ok(dds, 'The statement exists and is AVAILABLE or REJECTED.'),
    accepted(
      {
        error: {
          code: 'DDS_TRACES_PENDING',
          message: 'DDS generated; filing with the EU Information System is queued.',
          docs: 'http://127.0.0.1:3000/docs/errors#DDS_TRACES_PENDING',
          request_id: '01M82A0Q3V6W1T2X9EJ4B7N5KE',
        },
        dds_id: dds.dds_id,
        status: 'PENDING_FILING',
      },
      'Generated and kept privately; the filing is queued (poll GET /eudr/dds/{dds_id}).',
    ),
  ],
  'get-dds': [ok(dds)],
  'get-dds-evidence': [
    ok(
      {
        pack_version: 1,
        dds,
        batch: {
          batch_id: 'BATCH-2026-000001',
          token_id: '1',
          cooperative_id: 'BUGISU-CU-01',
          farmer_id: 'UG-BUD-004512',
          grade: 'screen18',
          weight_kg: 240.75,
          moisture_pct: 11.5,
          stage: 'COMMITTED',
          mint_tx_hash: '0x8f1c2a9e4b7d3f60a5c8e2d1b9f7a3c6e4d2b0a8f6c4e2d0b8a6f4c2e0d8b6a4',
          purchase_order_id: 'PO-01M829S6SDZ6HNR7JWSZV7CY6H',
        },
        forest_checks: [
          {
            farmer_id: 'UG-BUD-004512',
            status: 'CLEAR',
            checked_at: '2026-11-22T18:54:52.323Z',
            dataset: { name: 'bundled-alert-areas', version: '2026-11-01' },
          },
        ],
        trail: [
          {
            stage: 'DELIVERED',
            at: '2026-11-22T18:54:53.101Z',
            evidence_ipfs_cid: null,
            chain_tx_hash: '0x8f1c2a9e4b7d3f60a5c8e2d1b9f7a3c6e4d2b0a8f6c4e2d0b8a6f4c2e0d8b6a4',
            audit_log_sequence_number: 1,
          },
          {
            stage: 'GRADED',
            at: '2026-11-22T18:55:02.877Z',
            evidence_ipfs_cid: 'bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y',
            chain_tx_hash: '0x3b5d7f91a2c4e6f80b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e',
            audit_log_sequence_number: 3,
          },
        ],
        audit: {
          head: { sequence_number: 5, hash: 'c0a5e1d3b7f9a2c4e6d8b0f1a3c5e7d9b1f3a5c7e9d1b3f5a7c9e1d3b5f7a9c1' },
          entries: [
            {
              sequence_number: 1,
              type: 'BATCH_SUBMITTED',
              at: '2026-11-22T18:54:53.101Z',
              prev_hash: '0'.repeat(64),
              hash: '5e2b8d4f6a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b',
              anchor: { tx_hash: '0x8f1c2a9e4b7d3f60a5c8e2d1b9f7a3c6e4d2b0a8f6c4e2d0b8a6f4c2e0d8b6a4', block_number: 41 },
            },
            {
              sequence_number: 5,
              type: 'PURCHASE_ORDER_CONFIRMED',
              at: '2026-11-22T18:55:10.412Z',
              prev_hash: '9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f',
              hash: 'c0a5e1d3b7f9a2c4e6d8b0f1a3c5e7d9b1f3a5c7e9d1b3f5a7c9e1d3b5f7a9c1',
              anchor: {
                tx_hash: '0x1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f',
                block_number: 58,
                root: '0x7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e',
                proof: ['0x2a4c6e8f0b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a'],
                head_sequence_number: 5,
                head_hash: 'c0a5e1d3b7f9a2c4e6d8b0f1a3c5e7d9b1f3a5c7e9d1b3f5a7c9e1d3b5f7a9c1',
              },
            },
          ],
        },
      },
      'The evidence pack: RFC 8785 canonical JSON; its CID (CIDv1 raw, sha2-256 of the body bytes) in `X-Evidence-Pack-CID` and the `ETag`.',
    ),
  ],
  'get-dds-xml': [
    {
      status: '200',
      description: 'The SubmitDdsRequest XML (EU Information System V3), as an attachment.',
      contentType: 'application/xml',
      schema: { type: 'string' },
      example:
        '<?xml version="1.0" encoding="UTF-8"?><v3:SubmitDdsRequest xmlns:v3="http://ec.europa.eu/tracesnt/certificate/eudr/submission/v3">…</v3:SubmitDdsRequest>',
    },
  ],
  'get-settlement': [ok(settlementReading)],
  'settle-purchase-order': [
    ok({
      ...settlement,
      status: 'STARTED',
      short_payment: true,
      settled_by: 'admin-1',
      remainder_status: 'REQUESTED',
      remainder_tx_hash: null,
      completed_at: null,
    }),
  ],
  'refund-buyer-payment': [
    {
      status: '202',
      description: 'Accepted: the refund is requested from the vault (REFUNDED on GET /purchase-orders/{id}/settlement once mined).',
      example: { ...unappliedPayment, status: 'REFUND_REQUESTED', refund_tx_hash: null, refunded_at: null },
    },
  ],
  'create-webhook-endpoint': [
    created(view(endpointWithSecretView(endpointRecord)), 'Created; the `secret` (whsec_…) is shown only in this answer.'),
  ],
  'list-webhook-endpoints': [ok({ endpoints: [view(endpointView(disabledEndpoint)), view(endpointView(endpointRecord))] })],
  'delete-webhook-endpoint': [ok({ endpoint_id: endpointRecord.endpoint_id, deleted: true })],
  'rotate-webhook-secret': [
    ok(
      view(endpointWithSecretView(rotatedEndpoint)),
      'The new secret, shown only here; the previous one keeps signing until `previous_secret_expires_at` (24 h).',
    ),
  ],
  'list-webhook-deliveries': [ok({ deliveries: deliveries.map((d) => view(deliveryView(d))), limit: 50, next_token: null })],
  'replay-webhook-delivery': [
    {
      ...accepted(
        view(deliveryView(replayed)),
        'Queued again from the start of the retry schedule (same webhook-id and body); `attempts` keeps its total, `next_attempt_at` is now.',
      ),
      location: false,
    },
  ],
  'get-openapi': [
    {
      status: '200',
      description: 'This document.',
      schema: { type: 'object' },
      example: { openapi: '3.1.0', info: { title: 'Coffee batch traceability and farmer payout API', version: '1.0.0' } },
    },
  ],
  'get-ipfs': [
    ok(
      {
        cid: 'bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y',
        entries: [
          { name: 'evidence.json', cid: 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku', size: 74 },
          { name: 'photo.jpg', cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', size: 182344 },
        ],
      },
      "GET /ipfs/{cid}: the directory listing (sizes in bytes). GET /ipfs/{cid}/{name}: a text file's exact bytes (application/json, application/xml), or 302 to a 5-minute URL of a photo's exact bytes.",
    ),
  ],
  'get-trace': [
    {
      status: '200',
      description: 'The public trace page (HTML); with `Accept: application/json` the same view as JSON (see the description).',
      contentType: 'text/html',
      schema: { type: 'string' },
      more: { 'application/json': { schema: { type: 'object', description: 'The public view of the batch (see the description).' } } },
      example: '<!doctype html><html lang="en">…<h1>Coffee batch BATCH-2026-000123</h1>…</html>',
    },
  ],
  'get-docs': [
    {
      status: '200',
      description: 'The rendered API reference (HTML).',
      contentType: 'text/html',
      schema: { type: 'string' },
      example: '<!doctype html><html lang="en">…</html>',
    },
  ],
};

/** Routes that share a function but answer differently. */
const PATH_SUCCESS: Record<string, Success[]> = {
  '/ipfs/{id}/{name}': [
    {
      status: '200',
      description:
        'A text file of the directory (evidence.json), its exact bytes with the content type of its name; a photo answers 302 to a presigned URL of its bytes instead.',
      contentType: 'application/json',
      schema: { description: 'The stored JSON file as it is.' },
      example: { cupping_score: 85, grade: 'screen18', moisture_pct: 11.4 },
      more: { 'application/xml': { schema: { type: 'string' } } },
    },
  ],
  '/docs/errors': [
    {
      status: '200',
      description: "The error-code reference (HTML); each code's row is anchored `#CODE`.",
      contentType: 'text/html',
      schema: { type: 'string' },
      example: '<!doctype html><html lang="en">…<tr id="BATCH_NOT_FOUND"><td><code>BATCH_NOT_FOUND</code></td><td>404</td>…</html>',
    },
  ],
  '/trace/{id}/qr.svg': [
    {
      status: '200',
      description: 'The QR code of the page URL (SVG).',
      contentType: 'image/svg+xml',
      schema: { type: 'string' },
      example: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 37 37" shape-rendering="crispEdges">…</svg>',
    },
  ],
  '/docs/scalar.js': [
    {
      status: '200',
      description: "Scalar's standalone API reference bundle (JavaScript).",
      contentType: 'text/javascript',
      schema: { type: 'string' },
      example: '/* Scalar API reference standalone bundle */',
    },
  ],
};

// ------------------------------------------------------------------------------------------- errors

/**
 * The error codes a route can answer: the transport's (token, role, body, size, rate limit,
 * internal error), its 404s, and every code its behaviour note names.
 */
export function errorCodesFor(route: AnyRouteDefinition): ErrorCode[] {
  const note = `${route.notes ?? ''} ${route.summary}`;
  const hasBody = Boolean(route.body);
  const codes = new Set<ErrorCode>(['RATE_LIMITED', 'INTERNAL_ERROR']);
  if (route.auth === 'jwt') codes.add('UNAUTHORIZED').add('INSUFFICIENT_PERMISSIONS');
  if (route.auth === 'webhook') codes.add('INVALID_SIGNATURE').add('VALIDATION_ERROR');
  if (hasBody || route.path.includes('{') || (route.method === 'GET' && route.fn === 'list-payments')) codes.add('VALIDATION_ERROR');
  if (hasBody || route.auth === 'webhook') codes.add('PAYLOAD_TOO_LARGE').add('UNSUPPORTED_MEDIA_TYPE');
  for (const c of [...(route.notFound ?? []), ...(route.errors ?? [])]) codes.add(c);
  for (const c of Object.keys(ERROR_CODES) as ErrorCode[]) if (new RegExp(`\\b${c}\\b`).test(note)) codes.add(c);
  // Codes answered with a 2xx (the 202 "pending" envelopes) are success responses, not errors.
  for (const c of NOT_AN_ERROR_RESPONSE) codes.delete(c);
  if (route.auth === 'public') codes.delete('UNAUTHORIZED');
  return [...codes];
}

/** One error response per status, with an example per code. */
export function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ERROR_CODES[c].status, [...(byStatus.get(ERROR_CODES[c].status) ?? []), c]);
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, cs]) => [
        String(status),
        {
          description: cs.map((c) => `${c}: ${ERROR_CODES[c].title}`).join(' '),
          ...(status === 429 || status === 503
            ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } } }
            : {}),
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/Error' },
              examples: Object.fromEntries(cs.map((c) => [c, { $ref: `#/components/examples/${c}` }])),
            },
          },
        },
      ]),
  );
}

/**
 * Codes no operation answers as an error response: the two 202 "pending" envelopes (shown as
 * success responses) and AUDIT_LOG_UNAVAILABLE (reserved by the catalogue). All are in the error
 * reference (/docs/errors).
 */
const NOT_AN_ERROR_RESPONSE: ErrorCode[] = ['MAAIF_API_UNAVAILABLE', 'DDS_TRACES_PENDING', 'AUDIT_LOG_UNAVAILABLE'];

/** `components.examples`: one error envelope per code, as the service answers it. */
export function errorExamples(serverUrl: string): Record<string, unknown> {
  const asErrors = Object.entries(ERROR_CODES).filter(([code]) => !NOT_AN_ERROR_RESPONSE.includes(code as ErrorCode));
  return Object.fromEntries(
    asErrors.map(([code, e]) => [
      code,
      {
        summary: `${e.status} ${code}`,
        value: {
          error: {
            code,
            message: e.title,
            docs: `${serverUrl}/docs/errors#${code}`,
            request_id: '01M829T1PT35DWEJKNCY8T3VQ9',
            ...(code === 'VALIDATION_ERROR' ? { details: [{ path: 'weight_kg', message: 'must be at most 5000' }] } : {}),
          },
        },
      },
    ]),
  );
}

/** The success responses of a route in OpenAPI form. */
export function successResponses(route: AnyRouteDefinition): Record<string, unknown> {
  const { fn, path } = route;
  const own = route.example === undefined ? undefined : successOf(route);
  const list = PATH_SUCCESS[path] ?? SUCCESS[fn] ?? own ?? [ok({})];
  return Object.fromEntries(
    list.map((s) => [
      s.status,
      {
        description: s.description,
        ...(s.location
          ? { headers: { Location: { description: 'Path of the created resource or job.', schema: { type: 'string' } } } }
          : {}),
        content: {
          [s.contentType ?? 'application/json']: {
            schema: s.schema ?? declaredOf(route, s.status),
            ...(fn === 'get-payment'
              ? {
                  examples: {
                    FARMER_PAYOUT: { summary: 'A farmer payout (PAY-…)', value: s.example },
                    MFI_DEPOSIT: { summary: 'An MFI deposit (DEP-…)', value: deposit },
                  },
                }
              : { example: s.example }),
          },
          ...s.more,
        },
      },
    ]),
  );
}

/** The success response a route's own `example` gives: its first declared status, as `ok`/`created`/`accepted` describe it. */
function successOf(route: AnyRouteDefinition): Success[] {
  const status = Object.keys(route.responses ?? { '200': true })[0] ?? '200';
  const example = route.example as Json;
  return [status === '201' ? created(example) : status === '202' ? accepted(example, 'Accepted.') : ok(example)];
}

/** The declared schema of `fn`'s `status` answer; a route without one is a programming error (the document test fails). */
function declaredOf(route: AnyRouteDefinition, status: string): Schema {
  const schema = (route.responses as Record<string, v.GenericSchema> | undefined)?.[status];
  if (!schema) throw new Error(`no declared response schema for ${route.method} ${route.path} ${status}`);
  return declaredSchema(schema);
}

/** The Standard Webhooks headers every signed request carries (inbound and outbound). */
export const STANDARD_WEBHOOK_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'Unique message id; a replay of an id is acknowledged and not applied again.',
    schema: { type: 'string' },
    example: 'msg_2mXk9Qf3T1b7',
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds; more than 5 minutes away from now is rejected (401 INVALID_SIGNATURE).',
    schema: { type: 'string' },
    example: '1795460093',
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description: 'Space-separated `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" under the whsec_ secret>`.',
    schema: { type: 'string' },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
];

// ------------------------------------------------------------------------------ outbound webhooks

/**
 * The body schema of an event type: the examples' shapes merged (a field some variants lack is
 * not required); values are never null in events (absent fields are left out), `type` is fixed.
 */
function eventBodySchema(type: OutboundEventType, events: OutboundEvent[]): Schema {
  const data = events.map((e) => schemaOf(e.data as Json)).reduce(merge);
  return {
    type: 'object',
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { type: 'string', const: type },
      timestamp: {
        type: 'string',
        format: 'date-time',
        description: 'When the change happened (from the record: a replay sends the same body).',
      },
      data,
    },
  };
}

/** Who receives an event type. */
const RECEIVERS = (type: OutboundEventType) =>
  type === 'deposit.completed'
    ? "ADMIN endpoints and the depositing MFI's own"
    : type.startsWith('loan.')
      ? "ADMIN endpoints, the batch's cooperative's, and every MFI's"
      : "ADMIN endpoints and the batch's cooperative's";

/** The OpenAPI `webhooks`: what the service POSTs to registered endpoints, examples made by the real event mapper. */
export function outboundWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    EVENTS.map((e) => {
      const first = e.events[0]!;
      const example = JSON.parse(outboundEventBody(first)) as Json;
      const examples = Object.fromEntries(
        e.events.map((ev, i) => [
          i === 0 ? 'example' : `variant_${i}`,
          { summary: `webhook-id ${ev.event_id}`, value: JSON.parse(outboundEventBody(ev)) as Json },
        ]),
      );
      return [
        e.type,
        {
          post: {
            operationId: `webhook-${e.type.replace('.', '-')}`,
            summary: e.type,
            description: `${e.summary} Delivered at least once to the endpoints subscribed to \`${e.type}\` (${RECEIVERS(e.type)}), signed per Standard Webhooks with the endpoint's secret (both secrets sign for 24 h after a rotation); \`webhook-id\` is the stable event id (\`${first.event_id}\`). Answer 2xx to acknowledge; anything else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then the delivery is DEAD (replayable); 410 disables the endpoint. Deduplicate on \`webhook-id\`.`,
            security: [],
            parameters: STANDARD_WEBHOOK_HEADERS.map((h) =>
              h.name === 'webhook-id'
                ? {
                    ...h,
                    description: 'The event id (`evt_…`), the same for every delivery and replay of the event: deduplicate on it.',
                    example: first.event_id,
                  }
                : h,
            ),
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: eventBodySchema(e.type, e.events), ...(e.events.length > 1 ? { examples } : { example }) },
              },
            },
            responses: {
              '200': { description: 'Delivered (any 2xx).' },
              '410': { description: 'Gone: the service disables the endpoint.' },
            },
          },
        },
      ];
    }),
  );
}
