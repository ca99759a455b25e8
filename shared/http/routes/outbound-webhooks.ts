import { defineRoute } from './define';
import { accepted, created, ok } from './success';
import { deliveries, disabledEndpoint, endpointRecord, replayed, rotatedEndpoint, view } from '../openapi-example-events';
import { deliveryView, endpointView, endpointWithSecretView } from '../outbound-webhook-schemas';
import * as V from '../view-schemas';
import { CreateOutboundEndpointSchema, DeliveryIdParam, EndpointIdParam } from '../outbound-webhook-schemas';

/**
 * The outbound webhooks routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /webhooks/endpoints */
export const createWebhookEndpointRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/webhooks/endpoints',
  fn: 'create-webhook-endpoint',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'MFI'],
  needs: ['table:write', 'outbound-webhooks', 'outbound-secrets:seal'],
  summary: 'Register an outbound webhook endpoint (ADMIN; a cooperative MANAGER; an MFI): its secret is shown only in this answer.',
  body: CreateOutboundEndpointSchema,
  notes:
    "Outbound webhooks. Roles: ADMIN (the service's own endpoints: every event); COOPERATIVE with the MANAGER duty (events of its own cooperative's batches: every type but deposit.completed); MFI (its own deposit.completed, and loan.disbursed / loan.repaid of every loan, since MFIs fund the vault every loan is drawn from). Other roles and duties: 403 INSUFFICIENT_PERMISSIONS. Body `{url, events: [1–8 distinct types], description?}`; an event the owner may not receive or a refused URL is 400 VALIDATION_ERROR with `details[].path` `events[i]` or `url`. URLs must be https and resolve only to public addresses (private, loopback, link-local, carrier-grade NAT, metadata 169.254.169.254, multicast and reserved ranges are refused; checked again at every delivery, on the connection's own DNS answer); the local stack also accepts http on loopback. 201 `{endpoint_id (whe_…), url, events, description, status: ACTIVE, disabled_reason: null, owner {kind, id}, created_at, updated_at, secret, previous_secret_expires_at: null}` with `Location`: the `whsec_…` secret is shown only in this answer and in rotate-secret's; store it to verify signatures (Standard Webhooks).",
  responses: { '201': V.EndpointWithSecretViewSchema },
  success: [created(view(endpointWithSecretView(endpointRecord)), 'Created; the `secret` (whsec_…) is shown only in this answer.')],
});

/** /webhooks/endpoints */
export const listWebhookEndpointsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/webhooks/endpoints',
  fn: 'list-webhook-endpoints',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'MFI'],
  needs: ['table:read'],
  summary: "The caller's own outbound webhook endpoints (secrets never shown).",
  notes:
    "The caller's own endpoints (ADMIN: the service's; a cooperative MANAGER: its cooperative's; an MFI: its own), oldest first, ACTIVE or DISABLED (`disabled_reason`: a 410 answer). Secrets are never shown. Other roles: 403 INSUFFICIENT_PERMISSIONS.",
  responses: { '200': V.EndpointListViewSchema },
  success: [ok({ endpoints: [view(endpointView(disabledEndpoint)), view(endpointView(endpointRecord))] })],
});

/** /webhooks/endpoints/{id} */
export const deleteWebhookEndpointRoute = /* @__PURE__ */ defineRoute({
  method: 'DELETE',
  path: '/webhooks/endpoints/{id}',
  fn: 'delete-webhook-endpoint',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'MFI'],
  needs: ['table:write'],
  summary: 'Delete an outbound webhook endpoint.',
  pathParams: EndpointIdParam,
  notes:
    "Deletes an endpoint of the caller (ADMIN: any). Its deliveries still waiting end DEAD. Unknown or deleted id: 404 ROUTE_NOT_FOUND (the catalogue has no webhook-specific code); another owner's: 403 INSUFFICIENT_PERMISSIONS.",
  responses: { '200': V.EndpointDeletedViewSchema },
  // Outbound webhook endpoints and deliveries not found (or not the caller's) are 404 ROUTE_NOT_FOUND.
  notFound: ['ROUTE_NOT_FOUND'],
  success: [ok({ endpoint_id: endpointRecord.endpoint_id, deleted: true })],
});

/** /webhooks/endpoints/{id}/rotate-secret */
export const rotateWebhookSecretRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/webhooks/endpoints/{id}/rotate-secret',
  fn: 'rotate-webhook-secret',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'MFI'],
  needs: ['table:write', 'outbound-secrets:seal'],
  summary: 'A new signing secret (shown only here); the old one keeps signing for 24 h.',
  pathParams: EndpointIdParam,
  notes:
    'A new `whsec_…` secret, shown only in this answer (200, the endpoint with `secret` and `previous_secret_expires_at`). For 24 hours both secrets sign: `webhook-signature` carries one `v1,…` signature per secret, space-separated, and a Standard Webhooks verifier accepts either. Errors as DELETE.',
  responses: { '200': V.EndpointWithSecretViewSchema },
  notFound: ['ROUTE_NOT_FOUND'],
  success: [
    ok(
      view(endpointWithSecretView(rotatedEndpoint)),
      'The new secret, shown only here; the previous one keeps signing until `previous_secret_expires_at` (24 h).',
    ),
  ],
});

/** /webhooks/endpoints/{id}/deliveries */
export const listWebhookDeliveriesRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/webhooks/endpoints/{id}/deliveries',
  fn: 'list-webhook-deliveries',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'MFI'],
  needs: ['table:read'],
  summary: "The endpoint's delivery log, newest first, paginated.",
  pathParams: EndpointIdParam,
  query: [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
    { name: 'next_token', in: 'query', required: false, description: 'Opaque, from the previous page.', schema: { type: 'string' } },
  ],
  notes:
    "The endpoint's delivery log, newest first: `{deliveries: [{delivery_id (whd_…), endpoint_id, event_id (the webhook-id), event_type, state, attempts, last_status_code, last_error, last_attempt_at, next_attempt_at, created_at, updated_at}], limit, next_token}`. `state`: PENDING (queued, not attempted yet, or replayed), FAILED (the last attempt failed; the next is due at `next_attempt_at`), DELIVERED (a 2xx answer), DEAD (no more attempts: the schedule of 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h is exhausted after 8 attempts, the receiver answered 410, or the endpoint was deleted or disabled). Query: `limit` 1–100 (default 50), `next_token` opaque. Errors as DELETE.",
  responses: { '200': V.DeliveryListViewSchema },
  notFound: ['ROUTE_NOT_FOUND'],
  success: [ok({ deliveries: deliveries.map((d) => view(deliveryView(d))), limit: 50, next_token: null })],
});

/** /webhooks/deliveries/{id}/replay */
export const replayWebhookDeliveryRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/webhooks/deliveries/{id}/replay',
  fn: 'replay-webhook-delivery',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'MFI'],
  needs: ['table:write', 'outbound-webhook-queue:send'],
  summary: 'Send a delivery again from the start of the retry schedule (same webhook-id).',
  pathParams: DeliveryIdParam,
  notes:
    "Sends a delivery again, whatever its state, from the start of the retry schedule: the same `webhook-id` and body (receivers deduplicate on webhook-id), signed with the endpoint's current secret(s). 202 with the delivery, `state: PENDING`, `attempts` keeping its total count, `next_attempt_at` now. Unknown delivery or deleted endpoint: 404 ROUTE_NOT_FOUND; another owner's: 403 INSUFFICIENT_PERMISSIONS; a DISABLED endpoint (it answered 410): 400 VALIDATION_ERROR — register the URL again.",
  responses: { '202': V.DeliveryViewSchema },
  notFound: ['ROUTE_NOT_FOUND'],
  success: [
    {
      ...accepted(
        view(deliveryView(replayed)),
        'Queued again from the start of the retry schedule (same webhook-id and body); `attempts` keeps its total, `next_attempt_at` is now.',
      ),
      location: false,
    },
  ],
});
