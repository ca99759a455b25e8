import { deliveryView, endpointView, endpointWithSecretView } from './outbound-webhook-schemas';
import {
  TX,
  batch,
  cooperative,
  dds,
  shipmentDds,
  deposit,
  evidenceUpload,
  farmer,
  job,
  loan,
  payment,
  payoutStatus,
  purchaseOrder,
  settlement,
  settlementReading,
  stageUpdate,
  unappliedPayment,
  webhookAck,
} from './openapi-example-records';
import { deliveries, disabledEndpoint, endpointRecord, replayed, rotatedEndpoint, view } from './openapi-example-events';
import type { Json } from './openapi-example-records';

/** The success responses of the OpenAPI document: status, description, example and media types, by function folder (and by path where routes share a function). */

type Schema = Record<string, unknown>;

/** A success response: status, what it means, its example (the schema is derived from it) and headers. */
export interface Success {
  status: string;
  description: string;
  example: Json;
  location?: boolean;
  contentType?: string;
  schema?: Schema;
  /** Further media types of the same status (content negotiation, files served as they are). */
  more?: Record<string, { schema: Schema; example?: Json }>;
}

export const ok = (example: Json, description = 'OK'): Success => ({ status: '200', description, example });
export const created = (example: Json, description = 'Created; `Location` names the new resource.'): Success => ({
  status: '201',
  description,
  example,
  location: true,
});
export const accepted = (example: Json, description: string): Success => ({ status: '202', description, example, location: true });
const jobAccepted = (extra: Record<string, Json>) =>
  accepted(
    { job_id: 'JOB-01M829T1PT35DWEJKNCY8T3VQ9', status: 'PENDING', ...extra },
    'Accepted: completes asynchronously; poll GET /jobs/{job_id} (`Location`).',
  );

/** The success responses of each route, by function folder. */
export const SUCCESS: Record<string, Success[]> = {
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
    ok({
      ...purchaseOrder,
      status: 'CONFIRMED',
      confirmed_at: '2026-11-22T18:55:01.950Z',
      confirmed_batch_count: 1,
      committed_batch_ids: ['BATCH-2026-000001'],
    }),
    {
      status: '202',
      description:
        'A large order still CONFIRMING after this call: its progress (`confirmed_batch_count` of `batch_count`); call confirm again to continue.',
      example: {
        ...purchaseOrder,
        status: 'CONFIRMING',
        confirmed_at: '2026-11-22T18:55:01.950Z',
        batch_count: 600,
        confirmed_batch_count: 350,
        committed_batch_ids: ['BATCH-2026-000001'],
      },
    },
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
      failure_reason: 'INVALID_MSISDN',
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
  'amend-dds': [ok(shipmentDds, 'Amended: SUBMITTED again with the rebuilt statement; AVAILABLE again with the same reference number.')],
  'withdraw-dds': [ok({ ...dds, status: 'WITHDRAWN' }, 'Withdrawn in the EU Information System.')],
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
export const PATH_SUCCESS: Record<string, Success[]> = {
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
