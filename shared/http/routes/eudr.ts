import { defineRoute } from './define';
import { ok, accepted, seeOther } from './success';
import { dds, ddsXmlLink, shipmentDds } from '../openapi-example-records';
import * as V from '../view-schemas';
import { DdsIdParam } from '../path-params';
import { GenerateDdsSchema, VerifyGfwSchema } from '../schemas';

/**
 * The eudr routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** What a route reading or keeping statements' documents (private object storage) answers while that store is out. */
const DDS_DOCUMENT_ERRORS = ['DDS_DOCUMENT_STORE_UNAVAILABLE'] as const;

/** /eudr/verify-gfw */
export const verifyGfwRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/eudr/verify-gfw',
  fn: 'verify-gfw',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'gfw'],
  summary: 'Check a farm against deforestation alerts after 2020-12-31 again.',
  body: VerifyGfwSchema,
  notes:
    'Roles: ADMIN; COOPERATIVE of the farmer. Integrated deforestation alerts after 2020-12-31 inside the farm polygon (a point farm buffered to a circle of its declared area). 503 GFW_API_UNAVAILABLE with Retry-After: 300 after 3 failed attempts. A FLAGGED farm is logged for manual review and its batches are refused (GFW_CHECK_FAILED).',
  responses: { '200': V.ForestCheckViewSchema },
  notFound: ['FARMER_NOT_REGISTERED'],
  success: [
    ok({
      farmer_id: 'UG-BUD-004512',
      status: 'CLEAR',
      checked_at: '2026-11-22T18:54:52.323Z',
      dataset: { name: 'bundled-alert-areas', version: '2026-11-01' },
      alerts: [],
    }),
  ],
});

/** /eudr/generate-dds */
export const generateDdsRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/eudr/generate-dds',
  fn: 'generate-dds',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'dds-filing-queue:send', 'dds-documents:write', 'dds-documents:read'],
  summary:
    'Generate the due diligence statement of a batch or of a purchase order (a shipment) and file it with the EU Information System.',
  body: GenerateDdsSchema,
  notes:
    "Body: `{batch_id}` (a batch's statement) or `{purchase_order_id}` (a shipment's statement), never both; optional `description` (at most 150 characters). A purchase order: ADMIN; COOPERATIVE of the order. It must be CONFIRMED (PO_NOT_CONFIRMED; unknown: PO_NOT_FOUND) and name the EU importer (`buyer_operator`, else BATCH_NOT_ELIGIBLE); every batch MILLED or later with its `outturn_kg` (BATCH_NOT_ELIGIBLE naming them). One producer per farmer with all of that farmer's plots and the summed green weight; net mass = Σ MILLED `outturn_kg`; HS 0901; the description names the grades. Refused: a farm not CLEAR (GFW_CHECK_FAILED, `details.farmers` naming every one), a stored plot breaking the geolocation rules (VALIDATION_ERROR or GEOMETRY_RULE_VIOLATED, paths `producers.<farmer_id>.farm…`), two farmers with identical plots (DUPLICATE_PLOT, `details.plots` naming both), more than 10,000 producers or 25 MB of base64 GeoJSON (DDS_TOO_LARGE). Above 1,000 producers the XML has one commodity per 1,000 producers, each with its producers' green weight. One statement per order: `DDS-<purchase_order_id>`, with `purchase_order_id` and `batch_ids`. A batch: ADMIN; COOPERATIVE of the batch. The batch must be GRADED or later (BATCH_NOT_ELIGIBLE) and on a purchase order naming the EU importer (`buyer_operator`, also BATCH_NOT_ELIGIBLE otherwise); its farm must be CLEAR (GFW_CHECK_FAILED). Builds the JSON record and the SubmitDdsRequest XML (EU Information System V3 schema: activity IMPORT, HS 0901, net weight, country of production UG, each producer with its base64 GeoJSON plot), keeps them privately (the statement holds full names and exact plots: it is read with a token through GET /eudr/dds/{id} and GET /eudr/dds/{id}/xml, never served by GET /ipfs nor pinned to IPFS; `ipfs_cid` is the CIDv1 of the UnixFS directory of `dds.json` and `dds.xml`, its content address) and queues the filing. Answer: 202 with `error.code` DDS_TRACES_PENDING and `dds_id`, `status` beside `error`; one statement per batch (a repeat returns the same one; 200 once AVAILABLE). GET /eudr/dds/{id} then shows SUBMITTED, AVAILABLE with `reference_number` and `verification_number`, or REJECTED with `rejection_reason`.",
  responses: { '200': V.DdsViewSchema, '202': V.DdsPendingViewSchema },
  notFound: ['BATCH_NOT_FOUND', 'PO_NOT_FOUND'],
  errors: DDS_DOCUMENT_ERRORS,
  success: [
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
});

/** /eudr/dds/{id} */
export const getDdsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/eudr/dds/{id}',
  fn: 'get-dds',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read', 'dds-documents:read'],
  summary: 'A due diligence statement with its filing state.',
  pathParams: DdsIdParam,
  responses: { '200': V.DdsViewSchema },
  notFound: ['DDS_NOT_FOUND'],
  errors: DDS_DOCUMENT_ERRORS,
  success: [ok(dds)],
});

/** /eudr/dds/{id}/xml */
export const getDdsXmlRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/eudr/dds/{id}/xml',
  fn: 'get-dds-xml',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read', 'dds-documents:read'],
  summary: 'The SubmitDdsRequest XML of a due diligence statement (a large one by a short-lived link).',
  pathParams: DdsIdParam,
  notes:
    "Roles as GET /eudr/dds/{id}: ADMIN; COOPERATIVE of the statement. Up to 4 MiB (the DDS_XML_INLINE_MAX_BYTES setting) the XML is the body: 200 `application/xml`, as an attachment `<dds_id>.xml`. A larger one (a shipment's statement may carry up to 25 MB of geolocation; an API answer is at most 6 MB) is 303 See Other: `Location` is a presigned URL of the kept document, valid 5 minutes, which answers the exact bytes (`application/xml`) without a token — do not send the Authorization header there (HTTP clients drop it on a redirect to another host); the JSON body `{dds_id, xml_url (the same URL), size_bytes, sha256, expires_at}` names it for clients that do not follow redirects, with the size and SHA-256 (hex) to check the bytes against. Ask this route again for a fresh link once it has expired. Never cached (`cache-control: no-store` on the 303).",
  responses: { '303': V.DdsXmlLinkViewSchema },
  notFound: ['DDS_NOT_FOUND'],
  errors: DDS_DOCUMENT_ERRORS,
  success: [
    {
      status: '200',
      description: 'The SubmitDdsRequest XML (EU Information System V3), as an attachment.',
      contentType: 'application/xml',
      schema: { type: 'string' },
      example:
        '<?xml version="1.0" encoding="UTF-8"?><v3:SubmitDdsRequest xmlns:v3="http://ec.europa.eu/tracesnt/certificate/eudr/submission/v3">…</v3:SubmitDdsRequest>',
    },
    seeOther(
      ddsXmlLink,
      'The XML is larger than DDS_XML_INLINE_MAX_BYTES: fetch it from `Location` (also `xml_url`), without a token, within 5 minutes.',
      'A presigned URL of the XML document (valid 5 minutes; no Authorization header).',
    ),
  ],
});

/** /eudr/dds/{id}/evidence */
export const getDdsEvidenceRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/eudr/dds/{id}/evidence',
  fn: 'get-dds-evidence',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read', 'ledger:read', 'evidence-archive:read', 'dds-documents:read'],
  summary:
    "The evidence pack of a due diligence statement for an EU authority: DDS, forest checks, the batch's trail and audit anchors, as canonical JSON with its CID.",
  pathParams: DdsIdParam,
  notes:
    "Roles as GET /eudr/dds/{id}: ADMIN; COOPERATIVE of the statement (another cooperative: 403 INSUFFICIENT_PERMISSIONS; unknown id: 404 DDS_NOT_FOUND). Built for a batch's statement; a purchase order's statement: 422 BATCH_NOT_ELIGIBLE. The evidence pack an EU importer hands an authority, one JSON document: `{pack_version: 1, dds (as GET /eudr/dds/{id}), batch: {batch_id, token_id, cooperative_id, farmer_id, grade, weight_kg, moisture_pct, stage, mint_tx_hash, purchase_order_id}, forest_checks: [{farmer_id, status, checked_at, dataset: {name, version}}] (one per producer, as last recorded by the forest check), trail: [{stage, at, evidence_ipfs_cid, chain_tx_hash, audit_log_sequence_number}], audit: {head: {sequence_number, hash}, entries: [{sequence_number, type, at, prev_hash, hash, anchor}]}}` — `anchor` as on GET /batch/{id}/audit: `{tx_hash, block_number}` for the mint and stage entries (their own transactions), `{tx_hash, block_number, root, proof, head_sequence_number, head_hash}` for the others (the periodic AuditAnchor transaction, the Merkle root and the head's proof), null until the next periodic anchor covers the entry. Audit entries go without their payloads and the batch without its payment fields: no phone number or payout amount. The body is the RFC 8785 canonical JSON (UTF-8) of the pack, built only from stored records and the ledger (no generation time), so the same trail always gives the same bytes. Its CID is in the `X-Evidence-Pack-CID` header and the strong `ETag: \"<cid>\"`: a CIDv1 with codec raw (0x55) over the multihash sha2-256 of exactly the body bytes, base32 (`bafkrei…`). To recompute it: sha256 of the body bytes as received → CIDv1 raw (with multiformats: `CID.create(1, 0x55, await sha256.digest(bytes)).toString()`; or `ipfs add --cid-version 1 --raw-leaves` of the saved file, up to 256 KiB). The pack changes, and so its CID, when the trail does (a stage, an anchor, the DDS filing state or pin status). 503 LEDGER_UNAVAILABLE when the ledger cannot be read for the anchors.",
  responses: { '200': V.EvidencePackViewSchema },
  notFound: ['DDS_NOT_FOUND'],
  errors: DDS_DOCUMENT_ERRORS,
  success: [
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
});

/** /eudr/dds/{id}/amend */
export const amendDdsRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/eudr/dds/{id}/amend',
  fn: 'amend-dds',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'dds-filing-queue:send', 'eudr-registry', 'dds-documents:write', 'dds-documents:read'],
  summary: 'Amend a due diligence statement: rebuilt from the current records and sent with the EU Information System amendDds.',
  pathParams: DdsIdParam,
  notes:
    "Roles as POST /eudr/generate-dds: ADMIN; COOPERATIVE of the statement. No body. The statement must be AVAILABLE (else 422 DDS_NOT_AVAILABLE) and submitted at most 72 hours ago (else 422 DDS_AMENDMENT_WINDOW_CLOSED); when the Information System reports it locked (used for customs clearance): 422 DDS_LOCKED. It is rebuilt from the current records with generation's checks (a purchase order's batches and farmers, or the batch and its farmer: GFW_CHECK_FAILED, GEOMETRY_RULE_VIOLATED, DUPLICATE_PLOT, DDS_TOO_LARGE as there), sent with V3 amendDds, and recorded SUBMITTED again with its new XML and `ipfs_cid`, `amendments` counted and `amended_at`; the filer polls until it is AVAILABLE again with the same reference number. Answer 200: the statement as GET /eudr/dds/{id}. A concurrent change: 409 DUPLICATE_REQUEST.",
  responses: { '200': V.DdsViewSchema },
  notFound: ['DDS_NOT_FOUND'],
  errors: DDS_DOCUMENT_ERRORS,
  success: [ok(shipmentDds, 'Amended: SUBMITTED again with the rebuilt statement; AVAILABLE again with the same reference number.')],
});

/** /eudr/dds/{id}/withdraw */
export const withdrawDdsRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/eudr/dds/{id}/withdraw',
  fn: 'withdraw-dds',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'eudr-registry', 'dds-documents:read', 'dds-filing-queue:send'],
  summary: 'Withdraw a due diligence statement with the EU Information System withdrawDds.',
  pathParams: DdsIdParam,
  notes:
    'Roles as POST /eudr/generate-dds: ADMIN; COOPERATIVE of the statement. No body. The statement must be AVAILABLE (else 422 DDS_NOT_AVAILABLE) and submitted at most 72 hours ago (else 422 DDS_AMENDMENT_WINDOW_CLOSED); when the Information System reports it locked: 422 DDS_LOCKED. Sent with V3 withdrawDds; the statement becomes WITHDRAWN (`withdrawn_at`; its reference number stays on the record). Within seconds the withdrawal reaches every batch whose `dds` names the statement: GET /batch/{id} shows `dds.status` WITHDRAWN with `withdrawn_at` beside the numbers, the trace page `dds_status` WITHDRAWN, and the audit log of each a DDS_WITHDRAWN entry (anchored like any entry). Answer 200: the statement as GET /eudr/dds/{id}. A concurrent change: 409 DUPLICATE_REQUEST.',
  responses: { '200': V.DdsViewSchema },
  notFound: ['DDS_NOT_FOUND'],
  errors: DDS_DOCUMENT_ERRORS,
  success: [ok({ ...dds, status: 'WITHDRAWN' }, 'Withdrawn in the EU Information System.')],
});
