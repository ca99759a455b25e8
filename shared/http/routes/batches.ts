import { defineRoute } from './define';
import { ok, created, jobAccepted } from './success';
import { TX, batch, evidenceUpload, loan, stageUpdate } from '../openapi-example-records';
import * as V from '../view-schemas';
import { BatchIdParam } from '../path-params';
import { CreateEvidenceUploadSchema } from '../evidence-upload-schemas';
import { StageUpdateSchema, SubmitBatchSchema } from '../schemas';

/**
 * The batches routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /batch/submit */
export const submitBatchRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/batch/submit',
  fn: 'submit-batch',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'AGENT'],
  needs: ['table:write', 'ledger-write-queue:send'],
  summary: 'Record a delivered batch: mint its BatchToken and start the farmer payout.',
  body: SubmitBatchSchema,
  idempotent: true,
  notes:
    'Required fields: all but `weight_slip_photo_url`. Waits for the BatchToken mint receipt up to a few seconds and answers 201; if the receipt is slow, or the request carries `Prefer: respond-async` (RFC 7240), answers 202 `{job_id, status: "PENDING", batch_id}` with `Location: /jobs/{job_id}`. The batch starts at DELIVERED; its first audit entry is `AUD-<batch_id>-1`. The NET_COFFEE_PAYMENT payout (round(weight_kg × cooperative price for the grade) UGX) starts right after; `payment_status` is INITIATED, then PAYMENT_CONFIRMED on settlement, MANUAL_REVIEW when retries are exhausted, NOT_PAYABLE when the farmer has no phone. A farm whose forest check is PENDING may deliver; FLAGGED may not (GFW_CHECK_FAILED). A batch is not readable until its token is minted. An `Idempotency-Key` header (1–255 visible ASCII characters, kept 24 hours per token subject) makes a retry with the same body return the first answer (`idempotent-replayed: true`) instead of a second batch; the same key with another body is 400, a key whose first request is still running 409 DUPLICATE_REQUEST.',
  responses: { '201': V.SubmissionViewSchema, '202': V.SubmissionAcceptedViewSchema },
  notFound: ['FARMER_NOT_REGISTERED', 'COOPERATIVE_NOT_FOUND'],
  errors: ['WEIGHT_OUT_OF_RANGE', 'INVALID_GRADE', 'COOPERATIVE_NOT_ACTIVE'],
  success: [
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
});

/** /v1/batch/submit: the same operation under the versioned prefix. */
export const submitBatchV1Route = /* @__PURE__ */ defineRoute({
  ...submitBatchRoute,
  path: '/v1/batch/submit',
  summary: 'Same as POST /batch/submit.',
});

/** /batch/{id}/stage */
export const updateBatchStageRoute = /* @__PURE__ */ defineRoute({
  method: 'PATCH',
  path: '/batch/{id}/stage',
  fn: 'update-batch-stage',
  auth: 'jwt',
  roles: ['COOPERATIVE', 'ADMIN'],
  needs: ['table:write', 'audit:append', 'pin-store', 'ledger-write-queue:send', 'evidence-uploads:read'],
  maxBodyBytes: 6_291_456,
  summary: 'Move a batch to its next custody stage with evidence (trace log, audit log, IPFS).',
  body: StageUpdateSchema,
  pathParams: BatchIdParam,
  notes:
    "Roles: COOPERATIVE with the stage's duty (GRADED: QUALITY_OFFICER, MILLED: MILL_OPERATOR, WAREHOUSED: WAREHOUSE_MANAGER, EXPORTED: EXPORTER; a token without `duties` holds all); AGENT tokens get 403. `evidence` by stage — GRADED: `{grade (required; outside the set: INVALID_GRADE), moisture_pct (required), screen_size, defect_count, cupping_score, notes}`; MILLED: `{mill_id, outturn_kg (> 0, at most the batch weight), milled_at}`; WAREHOUSED: `{warehouse_id (required), lot_number, position}`; EXPORTED: `{export_permit (required), destination_country (ISO 3166-1 alpha-2, required), vessel_name, bill_of_lading}`. Unknown evidence fields are rejected. `evidence_photo_base64`: a `data:image/jpeg|png|webp;base64,` URI whose bytes are that image type, at most 4 MiB decoded (413 above); the body may be up to 6 MiB. Larger photos, or clients that prefer it, go by upload URL: `evidence_upload_id` names an upload from POST /batch/{id}/evidence-uploads whose bytes were PUT to its URL (not together with `evidence_photo_base64`: 400). An upload that cannot be attached is 422 EVIDENCE_UPLOAD_INVALID with `details {upload_id, reason}`, reason MISSING (no such upload, or nothing was PUT), OTHER_BATCH, EXPIRED (older than 24 hours), SIZE_MISMATCH (the object is not the declared size), TYPE_MISMATCH (the bytes are not the declared image type) or ALREADY_USED (the evidence of another stage already; a retry of the same stage update may name it again); its bytes then go into the evidence like a base64 photo. The evidence JSON (RFC 8785 canonical) and the photo form one UnixFS directory; `evidence_ipfs_cid` is its CIDv1 (as `ipfs add --cid-version 1 -r` gives it). Its CAR is stored in the service's own evidence copy before anything commits (an outage there: 503 AUDIT_LOG_UNAVAILABLE, nothing changed) and served at GET /ipfs/{cid}; pinning to IPFS runs in the background: the answer does not wait for it, and GET /batch/{id} shows the stage's `evidence_pin_status` (PENDING, then PINNED, or FAILED while retries last). The stage, its audit entry and the trace-log write are committed in one transaction; the trace-log transaction is made by a single ledger writer. 200 once it is mined (`chain_tx_hash` set); 202 `{job_id, status: PENDING, …the same fields with chain_tx_hash null}` when the ledger is slow or unreachable, or at once when the request carries `Prefer: respond-async` (RFC 7240; the answer then carries `Preference-Applied: respond-async`): the stage change stands, and the job completes (GET /jobs/{id}: COMPLETE with `tx_hash`) once the transaction lands. EXPORTED from WAREHOUSED with an unconfirmed purchase order: 422 PO_NOT_CONFIRMED. COMMITTED and SETTLED are not accepted (400): COMMITTED follows purchase-order confirmation.",
  responses: { '200': V.StageUpdateViewSchema, '202': V.StageUpdateAcceptedViewSchema },
  notFound: ['BATCH_NOT_FOUND'],
  success: [
    ok(stageUpdate, 'The stage is recorded and its trace-log transaction mined.'),
    jobAccepted({ ...stageUpdate, chain_tx_hash: null }),
  ],
});

/** /batch/{id}/evidence-uploads */
export const createEvidenceUploadRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/batch/{id}/evidence-uploads',
  fn: 'create-evidence-upload',
  auth: 'jwt',
  roles: ['COOPERATIVE', 'ADMIN'],
  needs: ['table:write', 'evidence-uploads:presign'],
  summary: "An upload URL for a stage's evidence photo: a presigned S3 PUT bound to its image type and size.",
  body: CreateEvidenceUploadSchema,
  pathParams: BatchIdParam,
  idempotent: true,
  notes:
    "Photos by upload URL, for photos too large for the JSON body. Roles: ADMIN; COOPERATIVE with any stage duty (QUALITY_OFFICER, MILL_OPERATOR, WAREHOUSE_MANAGER, EXPORTER), of the batch's cooperative (another cooperative, AGENT, MFI: 403 INSUFFICIENT_PERMISSIONS). Body `{content_type: image/jpeg|image/png|image/webp, size_bytes: the photo's exact size, 1 to 10485760 (10 MiB)}`. 201 `{upload_id (UPL-<ULID>), batch_id, content_type, size_bytes, url, method: \"PUT\", headers, expires_at, attach_by}`: step 1, PUT the photo's bytes to `url` with exactly `headers` (Content-Type and Content-Length are signed: another type or size is refused by S3) before `expires_at` (15 minutes); step 2, send PATCH /batch/{id}/stage with `evidence_upload_id` instead of `evidence_photo_base64` before `attach_by` (24 hours). Unknown batch: 404 BATCH_NOT_FOUND. `Idempotency-Key` as on POST /batch/submit, per batch: a retry with the same key and body answers the same upload (`idempotent-replayed: true`; its URL may have expired by then), the same key with another body is 400, a key whose first request is still running 409 DUPLICATE_REQUEST.",
  responses: { '201': V.EvidenceUploadViewSchema },
  notFound: ['BATCH_NOT_FOUND'],
  success: [
    {
      ...created(
        evidenceUpload,
        'The upload: PUT the photo to `url` with `headers` before `expires_at`, then name `upload_id` as `evidence_upload_id` in PATCH /batch/{id}/stage before `attach_by`.',
      ),
      location: false,
    },
  ],
});

/** /batch/{id}/audit */
export const getBatchAuditRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/batch/{id}/audit',
  fn: 'get-batch-audit',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'AGENT'],
  needs: ['table:read', 'ledger:read', 'evidence-archive:read'],
  summary: "The batch's hash-chained audit log, verified against the trace log and the pinned evidence.",
  pathParams: BatchIdParam,
  notes:
    "Entries `{sequence_number, message_id, type, at, actor, payload, prev_hash, hash}` of the batch's append-only, hash-chained audit log (hash = SHA-256 of the RFC 8785 canonical JSON of `{batch_id, sequence_number, type, at, actor, payload, prev_hash}`; the first prev_hash is 64 zeros). Each entry also carries `anchor` (not part of its hash): how it is anchored on the ledger — entry 1 by its BatchToken mint and each STAGE_CHANGED by its TraceLog transaction (`{tx_hash, block_number}`); every other entry (payout transitions, purchase orders, DDS, loans) by a periodic anchor: `{tx_hash, block_number, root, proof, head_sequence_number, head_hash}` — the AuditAnchor transaction that committed `root`, a Merkle root of many batches' audit heads (an OpenZeppelin StandardMerkleTree over leaves `(string batch_id, uint256 sequence_number, bytes32 0x<hash>)`), `proof` the head's proof, and the head (this batch's entry `head_sequence_number` ≥ this entry, linked to it by the hash chain); `null` until the next periodic anchor (every ANCHOR_INTERVAL_S, default 300 s) covers it. Anyone can check a head with AuditAnchor's `isAnchoredHead(root, proof, batch_id, head_sequence_number, 0x<head_hash>)`. `verified` recomputes the chain and compares it with the BatchToken mint and the TraceLog events on chain, with the pinned evidence and with every entry's anchor (the head's hash is the log's own entry, the proof leads to the root, AuditAnchor holds the root at that block): it is true only when every entry checks AND is anchored — a recent entry fails its `anchor` check with \"not yet anchored\" until then, and an entry rewritten after its anchor fails it with \"the log was rewritten after it was anchored\"; `checks` lists what matched. `npm run verify -- BATCH-…` does the same without trusting this service (it checks the anchors the entries claim on chain itself). For an AGENT token the entries of payouts, loans and settlements (and any other entry) come without amounts, phone numbers and transaction ids: those payload fields are left out and the entry carries `payload_redacted: true`; its hash can then not be recomputed from what is shown, and `verified` and `checks` are the service's verification of the full entries, unchanged (an AGENT who must check hashes asks a MANAGER or ADMIN, who read the entries as stored). Beside the entries, `evidence_pins`: `[{sequence_number, stage, evidence_ipfs_cid, evidence_pin_status}]` — each stage's evidence and whether it is pinned on IPFS yet (PENDING, PINNED, FAILED).",
  responses: { '200': V.AuditViewSchema },
  notFound: ['BATCH_NOT_FOUND'],
  success: [
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
});

/** /batch/{id} */
export const getBatchRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/batch/{id}',
  fn: 'get-batch',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'AGENT'],
  needs: ['table:read'],
  summary: 'Read a batch with its stage history.',
  pathParams: BatchIdParam,
  responses: { '200': V.BatchViewSchema },
  notFound: ['BATCH_NOT_FOUND'],
  success: [ok(batch)],
});

/** /batch/{id}/loan */
export const getBatchLoanRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/batch/{id}/loan',
  fn: 'get-batch-loan',
  auth: 'jwt',
  roles: ['ADMIN', 'MFI', 'COOPERATIVE'],
  needs: ['table:read'],
  summary: "The batch's active loan (404 LOAN_NOT_FOUND when none).",
  pathParams: BatchIdParam,
  notes:
    "Roles: ADMIN; MFI; COOPERATIVE of the batch. The batch's PENDING or ACTIVE loan, or its DEFAULTED one (written off: the BatchToken stays with the vault); 404 LOAN_NOT_FOUND when it has none (a repaid or cancelled loan is read at GET /loans/{id}).",
  responses: { '200': V.LoanViewSchema },
  notFound: ['LOAN_NOT_FOUND', 'BATCH_NOT_FOUND'],
  success: [ok(loan)],
});
