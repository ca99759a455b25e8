import { defineRoute } from './define';
import * as V from '../view-schemas';
import { DdsIdParam } from '../path-params';
import { GenerateDdsSchema, VerifyGfwSchema } from '../schemas';

/**
 * The eudr routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

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
});

/** /eudr/generate-dds */
export const generateDdsRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/eudr/generate-dds',
  fn: 'generate-dds',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'dds-filing-queue:send'],
  summary:
    'Generate the due diligence statement of a batch or of a purchase order (a shipment) and file it with the EU Information System.',
  body: GenerateDdsSchema,
  notes:
    "Body: `{batch_id}` (a batch's statement) or `{purchase_order_id}` (a shipment's statement), never both; optional `description` (at most 150 characters). A purchase order: ADMIN; COOPERATIVE of the order. It must be CONFIRMED (PO_NOT_CONFIRMED; unknown: PO_NOT_FOUND) and name the EU importer (`buyer_operator`, else BATCH_NOT_ELIGIBLE); every batch MILLED or later with its `outturn_kg` (BATCH_NOT_ELIGIBLE naming them). One producer per farmer with all of that farmer's plots and the summed green weight; net mass = Σ MILLED `outturn_kg`; HS 0901; the description names the grades. Refused: a farm not CLEAR (GFW_CHECK_FAILED, `details.farmers` naming every one), a stored plot breaking the geolocation rules (VALIDATION_ERROR or GEOMETRY_RULE_VIOLATED, paths `producers.<farmer_id>.farm…`), two farmers with identical plots (DUPLICATE_PLOT, `details.plots` naming both), more than 10,000 producers or 25 MB of base64 GeoJSON (DDS_TOO_LARGE). Above 1,000 producers the XML has one commodity per 1,000 producers, each with its producers' green weight. One statement per order: `DDS-<purchase_order_id>`, with `purchase_order_id` and `batch_ids`. A batch: ADMIN; COOPERATIVE of the batch. The batch must be GRADED or later (BATCH_NOT_ELIGIBLE) and on a purchase order naming the EU importer (`buyer_operator`, also BATCH_NOT_ELIGIBLE otherwise); its farm must be CLEAR (GFW_CHECK_FAILED). Builds the JSON record and the SubmitDdsRequest XML (EU Information System V3 schema: activity IMPORT, HS 0901, net weight, country of production UG, each producer with its base64 GeoJSON plot), keeps them privately (the statement holds full names and exact plots: it is read with a token through GET /eudr/dds/{id} and GET /eudr/dds/{id}/xml, never served by GET /ipfs nor pinned to IPFS; `ipfs_cid` is the CIDv1 of the UnixFS directory of `dds.json` and `dds.xml`, its content address) and queues the filing. Answer: 202 with `error.code` DDS_TRACES_PENDING and `dds_id`, `status` beside `error`; one statement per batch (a repeat returns the same one; 200 once AVAILABLE). GET /eudr/dds/{id} then shows SUBMITTED, AVAILABLE with `reference_number` and `verification_number`, or REJECTED with `rejection_reason`.",
  responses: { '200': V.DdsViewSchema, '202': V.DdsPendingViewSchema },
  notFound: ['BATCH_NOT_FOUND', 'PO_NOT_FOUND'],
});

/** /eudr/dds/{id} */
export const getDdsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/eudr/dds/{id}',
  fn: 'get-dds',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read'],
  summary: 'A due diligence statement with its filing state.',
  pathParams: DdsIdParam,
  responses: { '200': V.DdsViewSchema },
  notFound: ['DDS_NOT_FOUND'],
});

/** /eudr/dds/{id}/xml */
export const getDdsXmlRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/eudr/dds/{id}/xml',
  fn: 'get-dds-xml',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read'],
  summary: 'The SubmitDdsRequest XML of a due diligence statement.',
  pathParams: DdsIdParam,
  notFound: ['DDS_NOT_FOUND'],
});

/** /eudr/dds/{id}/evidence */
export const getDdsEvidenceRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/eudr/dds/{id}/evidence',
  fn: 'get-dds-evidence',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read', 'ledger:read', 'evidence-archive:read'],
  summary:
    "The evidence pack of a due diligence statement for an EU authority: DDS, forest checks, the batch's trail and audit anchors, as canonical JSON with its CID.",
  pathParams: DdsIdParam,
  notes:
    "Roles as GET /eudr/dds/{id}: ADMIN; COOPERATIVE of the statement (another cooperative: 403 INSUFFICIENT_PERMISSIONS; unknown id: 404 DDS_NOT_FOUND). Built for a batch's statement; a purchase order's statement: 422 BATCH_NOT_ELIGIBLE. The evidence pack an EU importer hands an authority, one JSON document: `{pack_version: 1, dds (as GET /eudr/dds/{id}), batch: {batch_id, token_id, cooperative_id, farmer_id, grade, weight_kg, moisture_pct, stage, mint_tx_hash, purchase_order_id}, forest_checks: [{farmer_id, status, checked_at, dataset: {name, version}}] (one per producer, as last recorded by the forest check), trail: [{stage, at, evidence_ipfs_cid, chain_tx_hash, audit_log_sequence_number}], audit: {head: {sequence_number, hash}, entries: [{sequence_number, type, at, prev_hash, hash, anchor}]}}` — `anchor` as on GET /batch/{id}/audit: `{tx_hash, block_number}` for the mint and stage entries (their own transactions), `{tx_hash, block_number, root, proof, head_sequence_number, head_hash}` for the others (the periodic AuditAnchor transaction, the Merkle root and the head's proof), null until the next periodic anchor covers the entry. Audit entries go without their payloads and the batch without its payment fields: no phone number or payout amount. The body is the RFC 8785 canonical JSON (UTF-8) of the pack, built only from stored records and the ledger (no generation time), so the same trail always gives the same bytes. Its CID is in the `X-Evidence-Pack-CID` header and the strong `ETag: \"<cid>\"`: a CIDv1 with codec raw (0x55) over the multihash sha2-256 of exactly the body bytes, base32 (`bafkrei…`). To recompute it: sha256 of the body bytes as received → CIDv1 raw (with multiformats: `CID.create(1, 0x55, await sha256.digest(bytes)).toString()`; or `ipfs add --cid-version 1 --raw-leaves` of the saved file, up to 256 KiB). The pack changes, and so its CID, when the trail does (a stage, an anchor, the DDS filing state or pin status). 503 LEDGER_UNAVAILABLE when the ledger cannot be read for the anchors.",
  responses: { '200': V.EvidencePackViewSchema },
  notFound: ['DDS_NOT_FOUND'],
});

/** /eudr/dds/{id}/amend */
export const amendDdsRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/eudr/dds/{id}/amend',
  fn: 'amend-dds',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'dds-filing-queue:send', 'eudr-registry'],
  summary: 'Amend a due diligence statement: rebuilt from the current records and sent with the EU Information System amendDds.',
  pathParams: DdsIdParam,
  notes:
    "Roles as POST /eudr/generate-dds: ADMIN; COOPERATIVE of the statement. No body. The statement must be AVAILABLE (else 422 DDS_NOT_AVAILABLE) and submitted at most 72 hours ago (else 422 DDS_AMENDMENT_WINDOW_CLOSED); when the Information System reports it locked (used for customs clearance): 422 DDS_LOCKED. It is rebuilt from the current records with generation's checks (a purchase order's batches and farmers, or the batch and its farmer: GFW_CHECK_FAILED, GEOMETRY_RULE_VIOLATED, DUPLICATE_PLOT, DDS_TOO_LARGE as there), sent with V3 amendDds, and recorded SUBMITTED again with its new XML and `ipfs_cid`, `amendments` counted and `amended_at`; the filer polls until it is AVAILABLE again with the same reference number. Answer 200: the statement as GET /eudr/dds/{id}. A concurrent change: 409 DUPLICATE_REQUEST.",
  responses: { '200': V.DdsViewSchema },
  notFound: ['DDS_NOT_FOUND'],
});

/** /eudr/dds/{id}/withdraw */
export const withdrawDdsRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/eudr/dds/{id}/withdraw',
  fn: 'withdraw-dds',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'eudr-registry'],
  summary: 'Withdraw a due diligence statement with the EU Information System withdrawDds.',
  pathParams: DdsIdParam,
  notes:
    'Roles as POST /eudr/generate-dds: ADMIN; COOPERATIVE of the statement. No body. The statement must be AVAILABLE (else 422 DDS_NOT_AVAILABLE) and submitted at most 72 hours ago (else 422 DDS_AMENDMENT_WINDOW_CLOSED); when the Information System reports it locked: 422 DDS_LOCKED. Sent with V3 withdrawDds; the statement becomes WITHDRAWN (`withdrawn_at`; its reference number stays on the record). Answer 200: the statement as GET /eudr/dds/{id}. A concurrent change: 409 DUPLICATE_REQUEST.',
  responses: { '200': V.DdsViewSchema },
  notFound: ['DDS_NOT_FOUND'],
});
