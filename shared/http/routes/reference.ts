import { defineRoute } from './define';
import { ok } from './success';
import * as V from '../view-schemas';
import { BatchIdParam, CidParam, PathId } from '../path-params';

/**
 * The reference routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** The behaviour of both evidence routes (a package by CID, a file of it by name): one function serves them. */
const IPFS_NOTES =
  'Public, read-only: the public evidence packages of custody stages (a directory holding `evidence.json` and at most a photo) by their IPFS CID, from the service\'s own copy whatever their pin status — so anyone can fetch the bytes and recompute the CID with `ipfs add --cid-version 1 -r`. Nothing else is served: a due diligence statement (full names, exact plots) is private, and its CID answers 404 exactly as an unknown one. Photos have their metadata (EXIF, XMP, GPS, text chunks) removed before they are hashed. GET /ipfs/{cid}: a directory gives the JSON listing `{cid, entries: [{name, cid, size}]}` (size in bytes, sorted by name); GET /ipfs/{cid}/{name}: a text file (evidence.json) answers its exact bytes with the content type of its name; a photo (any other file) answers 302 to a presigned URL of the service\'s copy, valid 5 minutes, which serves its exact bytes. Listings and text files are immutable: `cache-control: public, max-age=29030400, immutable`, `etag: "<cid>[/name]"`. A CID or name the store does not hold: 404 ROUTE_NOT_FOUND; a malformed CID: 400 VALIDATION_ERROR. Only root CIDs of evidence packages are served (not their inner blocks).';

/** /ipfs/{id} */
export const getIpfsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/ipfs/{id}',
  fn: 'get-ipfs',
  auth: 'public',
  needs: ['evidence-archive:read', 'evidence-files:read'],
  summary: "A public evidence package by its IPFS CID from the service's own copy: the directory listing as JSON (a DDS is private: 404).",
  pathParams: CidParam,
  notes: IPFS_NOTES,
  responses: { '200': V.IpfsDirectoryViewSchema },
  // A CID (or a file name) the service's evidence store does not hold.
  notFound: ['ROUTE_NOT_FOUND'],
  success: [
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
});

/** /ipfs/{id}/{name} */
export const getIpfsNameRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/ipfs/{id}/{name}',
  fn: 'get-ipfs',
  auth: 'public',
  needs: ['evidence-archive:read', 'evidence-files:read'],
  summary: 'A file of a public evidence package by CID and name: its exact bytes.',
  // Routes with more than one path parameter: a schema per parameter.
  pathParams: { id: CidParam, name: PathId },
  notes: IPFS_NOTES,
  responses: { '200': V.IpfsDirectoryViewSchema },
  // A CID (or a file name) the service's evidence store does not hold.
  notFound: ['ROUTE_NOT_FOUND'],
  success: [
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
});

/** The behaviour of both trace routes (the page and its QR code): one function serves them. */
const TRACE_NOTES =
  "Public, no token: the trace of a batch for a buyer or a consumer scanning a bag. GET /trace/{id} answers an HTML page (phone-sized, no outside assets), or with `Accept: application/json` (and not text/html) the same view as JSON: `{batch_id, token_id, grade, weight_kg, stage, cooperative: {name, district}, farmer: {first_name, district}, plot: {source: POLYGON|POINT_AND_AREA, area_ha, geometry (GeoJSON Polygon, [lng, lat])}, stages: [{stage, at, chain_tx_hash, evidence_ipfs_cid}], dds_reference_number, dds_verification_number (of the statement covering the batch, its own or its purchase order's, once AVAILABLE; else null), dds_status (AVAILABLE; WITHDRAWN once that statement was withdrawn, the numbers shown struck through as no longer valid; null when there is none), verification: {verified, checks_passed, checks_total, failures: [{sequence_number, check}], entries_total, entries_anchored, awaiting_anchor}, page_url, qr_url}` (`entries_anchored` of `entries_total` audit entries anchored on the ledger; `awaiting_anchor` failed only for want of the next periodic anchor, which the page shows as pending rather than failed). A farm registered as a point is drawn as the circle of its declared area. `verification` is computed as GET /batch/{id}/audit computes `verified` (`verified: null` with `unavailable_reason` while the ledger cannot be read). Never a phone number, a payment or amount, a farmer id or a full name (first name and district only). Plot coordinates are rounded to 3 decimals (about 110 m); a point farm's circle is drawn round the rounded point. Evidence links go to GET /ipfs/{cid}. GET /trace/{id}/qr.svg: the QR code (image/svg+xml) of the page's absolute URL, `<PUBLIC_BASE_URL>/trace/{id}`: every link comes from the PUBLIC_BASE_URL setting, never from Host or X-Forwarded-* headers. HTML pages carry a Content-Security-Policy without inline script, `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer` (HSTS in AWS). An unknown batch: 404 BATCH_NOT_FOUND (an HTML page when HTML was asked for); a malformed id: 400 VALIDATION_ERROR. `cache-control: public, max-age=60` on the page (stages change).";

/** /trace/{id} */
export const getTraceRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/trace/{id}',
  fn: 'get-trace',
  auth: 'public',
  needs: ['table:read', 'ledger:read', 'evidence-archive:read'],
  summary: 'The public trace page of a batch (no token): HTML, or JSON with Accept: application/json.',
  pathParams: BatchIdParam,
  notes: TRACE_NOTES,
  notFound: ['BATCH_NOT_FOUND'],
  success: [
    {
      status: '200',
      description: 'The public trace page (HTML); with `Accept: application/json` the same view as JSON (see the description).',
      contentType: 'text/html',
      schema: { type: 'string' },
      more: { 'application/json': { schema: { type: 'object', description: 'The public view of the batch (see the description).' } } },
      example: '<!doctype html><html lang="en">…<h1>Coffee batch BATCH-2026-000123</h1>…</html>',
    },
  ],
});

/** /trace/{id}/qr.svg */
export const getTraceQrSvgRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/trace/{id}/qr.svg',
  fn: 'get-trace',
  auth: 'public',
  needs: ['table:read', 'ledger:read', 'evidence-archive:read'],
  summary: "The QR code (SVG) of the batch's public trace page URL.",
  pathParams: BatchIdParam,
  notes: TRACE_NOTES,
  notFound: ['BATCH_NOT_FOUND'],
  success: [
    {
      status: '200',
      description: 'The QR code of the page URL (SVG).',
      contentType: 'image/svg+xml',
      schema: { type: 'string' },
      example: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 37 37" shape-rendering="crispEdges">…</svg>',
    },
  ],
});

/** /openapi.json */
export const getOpenapiRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/openapi.json',
  fn: 'get-openapi',
  auth: 'public',
  needs: [],
  summary: 'The OpenAPI 3.1 document.',
  success: [
    {
      status: '200',
      description: 'This document.',
      schema: { type: 'object' },
      example: { openapi: '3.1.0', info: { title: 'Coffee batch traceability and farmer payout API', version: '1.0.0' } },
    },
  ],
});
