import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { ERROR_CODES } from '../domain/errors';
import { routes, type RouteDef } from './routes';
import { CreateCooperativeSchema, FarmerPayoutSchema, RegisterFarmerSchema, SubmitBatchSchema, UpdateCooperativeSchema } from './schemas';

/**
 * The OpenAPI 3.1 document, generated from the route table and the same valibot schemas that
 * validate requests. Behaviour the specification leaves open is written into `description`s here
 * (decisions.md: "write it into the service's OpenAPI document").
 */

const requestBodies: Record<string, v.GenericSchema> = {
  'create-cooperative': CreateCooperativeSchema,
  'update-cooperative': UpdateCooperativeSchema,
  'register-farmer': RegisterFarmerSchema,
  'submit-batch': SubmitBatchSchema,
  'create-farmer-payout': FarmerPayoutSchema,
};

const notes: Record<string, string> = {
  'submit-batch': 'Required fields: all but `weight_slip_photo_url`. Waits for the BatchToken mint receipt up to a few seconds and answers 201; if the receipt is slow, or the request carries `Prefer: respond-async` (RFC 7240), answers 202 `{job_id, status: "PENDING", batch_id}` with `Location: /jobs/{job_id}`. The batch starts at DELIVERED; its first audit entry is `AUD-<batch_id>-1`. The NET_COFFEE_PAYMENT payout (round(weight_kg × cooperative price for the grade) UGX) starts right after; `payment_status` is INITIATED, then PAYMENT_CONFIRMED on settlement, MANUAL_REVIEW when retries are exhausted, NOT_PAYABLE when the farmer has no phone. A farm whose forest check is PENDING may deliver; FLAGGED may not (GFW_CHECK_FAILED). A batch is not readable until its token is minted.',
  'create-farmer-payout': 'Answers 201 with status PROCESSING once the provider accepted the order. `amount_usdc`: > 0, at most 6 decimals, at most 100000. `batch_id` must name a batch of the cooperative delivered by `farmer_id`. Provider unreachable after 3 attempts: 503 PROVIDER_UNAVAILABLE and nothing is created (retry freely). Provider rejects the order: 500 PAYOUT_FAILED with `error.details.payout_id`; the payout is FAILED and its automatic retries (30/60/120 s) run. Payout ids may skip a sequence number when a creation was abandoned.',
  'list-payments': 'Query: `batch_id` (required), `limit` (1–100, default 50), `next_token` (opaque, from the previous page). Oldest first. `total` counts all payments of the batch.',
  'payout-provider-webhook': 'Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature` (v1, HMAC-SHA256 under the whsec_ secret), 5 minutes tolerance. Body `{type: "order.settled"|"order.failed", data: {order_id, reference, amount_ugx, exchange_rate, mobile_money_transaction_id, settled_at, failure_reason}}`. Acknowledged (200) only after the event is durably recorded; replays of a `webhook-id` and events that no longer apply are acknowledged and change nothing.',
  'get-farmer': 'The phone is masked (`+256 7•• ••• 123`).',
  'register-farmer': 'Phone: a Ugandan mobile number in E.164 (+2567…), optional, shown masked. The farm is forest-checked at registration (`gfw_status` CLEAR or FLAGGED, with the dataset used). GeoJSON positions are [lng, lat].',
};

const ErrorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'docs', 'request_id'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_CODES) },
        message: { type: 'string' },
        docs: { type: 'string', format: 'uri', description: 'Link to the code in the error reference (GET /docs#errors).' },
        request_id: { type: 'string', description: 'ULID; also in the x-request-id header and the logs.' },
        details: { description: 'VALIDATION_ERROR: [{path, message}]; PAYOUT_FAILED: {payout_id, status}.' },
      },
    },
  },
};

function operation(route: RouteDef) {
  const schema = requestBodies[route.fn];
  const op: Record<string, unknown> = {
    operationId: `${route.fn}${route.path.startsWith('/v1/') ? '-v1' : ''}`,
    summary: route.summary,
    ...(notes[route.fn] ? { description: notes[route.fn] } : {}),
    security: route.auth === 'jwt' ? [{ bearerAuth: [] }] : [],
    parameters: [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
    responses: {
      default: { description: 'Error (see the error reference)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      [route.method === 'POST' && !route.auth.startsWith('webhook') ? '201' : '200']: { description: 'Success' },
    },
  };
  if (schema) {
    op.requestBody = { required: true, content: { 'application/json': { schema: toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore' }) } } };
  }
  return op;
}

/** Builds the document; `serverUrl` is the base URL the caller reached. */
export function openApiDocument(serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Coffee batch traceability and farmer payout API',
      version: '1.0.0',
      description: 'Batches become BatchTokens on the ledger; farmers are paid to mobile money in UGX. Errors use one envelope `{error: {code, message, docs, request_id}}`. Unknown body fields are rejected (VALIDATION_ERROR). Order of checks: token 401, role 403, body 400, cooperative binding 403, existence 404, business rules 409/422. Timestamps are ISO 8601 UTC with Z; USDC amounts are JSON numbers with at most 6 decimals; UGX amounts are integers. Rate limit: 50 requests/s per token subject, bursts of 100 (429 RATE_LIMITED with Retry-After). Bodies up to 1 MiB (413 PAYLOAD_TOO_LARGE).',
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (RS256, ES256 or EdDSA; claims sub, role, cooperative_id, mfi_id, duties; at most 1 hour)' } },
      schemas: { Error: ErrorEnvelope },
    },
    'x-error-codes': Object.fromEntries(Object.entries(ERROR_CODES).map(([code, e]) => [code, { status: e.status, meaning: e.title }])),
  };
}

/** The API reference as one HTML page, with the error-code reference that `error.docs` links to. */
export function docsHtml(serverUrl: string): string {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  const rows = routes.map((r) => `<tr><td><code>${r.method}</code></td><td><code>${esc(r.path)}</code></td><td>${r.auth === 'jwt' ? 'Bearer JWT' : r.auth === 'webhook' ? 'Standard Webhooks signature' : 'none'}</td><td>${esc(r.summary)}${notes[r.fn] ? `<br><small>${esc(notes[r.fn]!)}</small>` : ''}</td></tr>`).join('\n');
  const errors = Object.entries(ERROR_CODES).map(([code, e]) => `<tr id="${code}"><td><code>${code}</code></td><td>${e.status}</td><td>${esc(e.title)}</td></tr>`).join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Coffee trace API reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4em;text-align:left;vertical-align:top}tr:target{background:#fff3c4}code{background:#f4f4f4;padding:0 .2em}</style></head><body>
<h1>Coffee batch traceability and farmer payout API</h1>
<p>Base URL <code>${esc(serverUrl)}</code>. Machine-readable: <a href="${esc(serverUrl)}/openapi.json">openapi.json</a> (OpenAPI 3.1).</p>
<h2 id="endpoints">Endpoints</h2><table><tr><th>Method</th><th>Path</th><th>Auth</th><th>What it does</th></tr>
${rows}</table>
<h2 id="errors">Error codes</h2><p>Every error is <code>{"error": {"code", "message", "docs", "request_id"}}</code>; <code>docs</code> links to the row below.</p>
<table><tr><th>Code</th><th>HTTP</th><th>Meaning</th></tr>
${errors}</table></body></html>`;
}
