import * as v from 'valibot';
import type { OutboundDelivery, OutboundEndpoint, RevealedEndpoint } from '../domain/outbound-webhooks';
import { OUTBOUND_EVENT_TYPES } from '../domain/outbound-webhooks';
import type { DeliveryViewSchema, EndpointViewSchema, EndpointWithSecretViewSchema, View } from './view-schemas';

/**
 * Outbound webhooks on the wire (docs/api/outbound-webhooks.md#outbound-webhooks): the request bodies, path and query parameters,
 * and the views of endpoints and deliveries. A secret appears only in the views of creation and
 * rotation (`endpointWithSecretView`).
 */

/** `POST /webhooks/endpoints` body: the receiver URL (≤ 2048), 1–8 distinct event types, an optional description (≤ 256). */
export const CreateOutboundEndpointSchema = v.strictObject({
  url: v.pipe(v.string(), v.minLength(8), v.maxLength(2048), v.url('must be an absolute URL')),
  events: v.pipe(
    v.array(v.picklist(OUTBOUND_EVENT_TYPES, `must be one of ${OUTBOUND_EVENT_TYPES.join(', ')}`)),
    v.minLength(1, 'must name at least one event'),
    v.maxLength(OUTBOUND_EVENT_TYPES.length, `must name at most ${OUTBOUND_EVENT_TYPES.length} events`),
  ),
  description: v.optional(v.pipe(v.string(), v.maxLength(256))),
});

/** `whe_<ULID>`. */
export const EndpointIdParam = v.pipe(v.string(), v.regex(/^whe_[0-9A-HJKMNP-TV-Z]{26}$/i, 'must be an endpoint id whe_<ULID>'));
/** `whd_<26 base32>`. */
export const DeliveryIdParam = v.pipe(v.string(), v.regex(/^whd_[0-9A-HJKMNP-TV-Z]{26}$/i, 'must be a delivery id whd_…'));

/** `GET /webhooks/endpoints/{id}/deliveries?limit=&next_token=`: limit 1–100 (default 50). */
export const ListDeliveriesQuerySchema = v.object({
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,3}$/, 'must be a whole number 1–100'),
      v.transform(Number),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(100, 'must be at most 100'),
    ),
    '50',
  ),
  next_token: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

/** An endpoint without its secret. */
export function endpointView(e: OutboundEndpoint): View<typeof EndpointViewSchema> {
  return {
    endpoint_id: e.endpoint_id,
    url: e.url,
    events: e.events,
    description: e.description ?? null,
    status: e.status,
    disabled_reason: e.disabled_reason ?? null,
    owner: e.owner.kind === 'ADMIN' ? { kind: 'ADMIN' } : { kind: e.owner.kind, id: e.owner.id },
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

/** The 201 of creation and the 200 of rotation: the endpoint with its (new) secret, shown only here. */
export function endpointWithSecretView(e: RevealedEndpoint): View<typeof EndpointWithSecretViewSchema> {
  return { ...endpointView(e), secret: e.secret, previous_secret_expires_at: e.previous_secret_expires_at ?? null };
}

/** One entry of the delivery log. */
export function deliveryView(d: OutboundDelivery): View<typeof DeliveryViewSchema> {
  return {
    delivery_id: d.delivery_id,
    endpoint_id: d.endpoint_id,
    event_id: d.event.event_id,
    event_type: d.event.type,
    state: d.state,
    attempts: d.attempts,
    last_status_code: d.last_status_code ?? null,
    last_error: d.last_error ?? null,
    last_attempt_at: d.last_attempt_at ?? null,
    next_attempt_at: d.state === 'PENDING' || d.state === 'FAILED' ? (d.next_attempt_at ?? null) : null,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}
