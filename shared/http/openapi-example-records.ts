/** Examples of the OpenAPI document: realistic records recorded from the local stack. */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

// ------------------------------------------------------------------------------------------ examples
// Recorded from the local stack (`npm start`, `npm run demo`), trimmed where lists are long.

export const TX = '0xc5f83b8301f79f2e7f95e9be6f668aa7f9ecdf11bf9555340379b27760076f4f';
const GPS = { lng: 34.248713, lat: 1.231004 };

export const cooperative = {
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

export const farmer = {
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

export const batch = {
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

export const stageUpdate = {
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
export const evidenceUpload = {
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

export const payoutStatus = {
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
  failure_reason: null,
  provider: 'provider-api',
};

export const payment = {
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
  failure_reason: null,
  provider: 'provider-api',
};

export const deposit = {
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

export const loan = {
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

const purchaseOrderHead = {
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
};
const purchaseOrderAmounts = {
  amount_due_usdc: 1295.04,
  paid_usdc: 0,
  buyer_address: '0x427db1700a4209a8a9b5536753b06945892620ec',
  batch_count: 1,
  confirmed_batch_count: 0,
  bound_batch_count: 1,
  creation_error: null,
};
/** A purchase order as created (DRAFT). */
export const purchaseOrder = { ...purchaseOrderHead, ...purchaseOrderAmounts };
/** The same purchase order once confirmed, as GET /purchase-orders/{id} reads it. */
export const confirmedPurchaseOrder = {
  ...purchaseOrderHead,
  status: 'CONFIRMED',
  confirmed_at: '2026-11-22T18:55:01.950Z',
  ...purchaseOrderAmounts,
};

export const dds = {
  dds_id: 'DDS-01M82A0Q3V6W1T2X9EJ4B7N5KD',
  batch_id: 'BATCH-2026-000001',
  purchase_order_id: null,
  batch_ids: null,
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
      net_weight_kg: null,
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

/** A purchase order's statement (a shipment), just amended: SUBMITTED again, same reference number. */
export const shipmentDds = {
  ...dds,
  dds_id: 'DDS-PO-01M829S6SDZ6HNR7JWSZV7CY6H',
  batch_id: null,
  purchase_order_id: 'PO-01M829S6SDZ6HNR7JWSZV7CY6H',
  batch_ids: ['BATCH-2026-000001', 'BATCH-2026-000002'],
  status: 'SUBMITTED',
  internal_reference_number: 'DDS-PO-01M829S6SDZ6HNR7JWSZV7CY6H',
  description_of_goods:
    'Green coffee beans, not roasted, not decaffeinated, grades FAQ, screen18, Uganda, purchase order PO-01M829S6SDZ6HNR7JWSZV7CY6H',
  net_weight_kg: 302.4,
  producers: [{ ...dds.producers[0]!, net_weight_kg: 302.4 }],
};

/** GET /eudr/dds/{id}/xml of a shipment's large statement: 303 to a presigned GET as S3 signs it in AWS (credentials shortened). */
export const ddsXmlLink = {
  dds_id: 'DDS-PO-01M829S6SDZ6HNR7JWSZV7CY6H',
  xml_url:
    'https://coffeetrace-dev-evidencebucket4f2a3b4c-1x2y3z4w5v6u.s3.eu-west-1.amazonaws.com/dds/DDS-PO-01M829S6SDZ6HNR7JWSZV7CY6H/9b2f7c1e4d6a8b0c2e4f6a8b0d2c4e6f8a0b2d4c6e8f0a2b4c6d8e0f2a4b6c8d.xml?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Content-Sha256=UNSIGNED-PAYLOAD&X-Amz-Credential=ASIA3EXAMPLE%2F20261122%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20261122T190412Z&X-Amz-Expires=300&X-Amz-Security-Token=IQoJb3JpZ2luX2VjE…&X-Amz-Signature=7d1c3e5a9b2f4d6e8a0c2b4d6f8e0a2c4b6d8f0e2a4c6b8d0f2e4a6c8b0d2f4e&X-Amz-SignedHeaders=host&response-content-disposition=attachment%3B%20filename%3D%22DDS-PO-01M829S6SDZ6HNR7JWSZV7CY6H.xml%22',
  size_bytes: 18874368,
  sha256: '9b2f7c1e4d6a8b0c2e4f6a8b0d2c4e6f8a0b2d4c6e8f0a2b4c6d8e0f2a4b6c8d',
  expires_at: '2026-11-22T19:09:12.204Z',
};

export const settlement = {
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
export const unappliedPayment = {
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
export const settlementReading = {
  ...settlement,
  amount_due_usdc: 1295.04,
  buyer_address: '0x427db1700a4209a8a9b5536753b06945892620ec',
  payments: [buyerPayment],
  unapplied_payments: [unappliedPayment],
};

export const job = {
  job_id: 'JOB-01M829T1PT35DWEJKNCY8T3VQ9',
  type: 'STAGE_CHANGE',
  status: 'COMPLETE',
  batch_id: 'BATCH-2026-000001',
  tx_hash: '0x0629779bfe582648d7baa2eda96c489f34dbc9be35cb72ec597d4a9b5efa75df',
  created_at: '2026-11-22T18:54:59.001Z',
  completed_at: '2026-11-22T18:54:59.037Z',
};

export const webhookAck = { received: true, outcome: 'APPLIED' };
