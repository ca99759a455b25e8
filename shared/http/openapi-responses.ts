import { ERROR_CODES } from './error-codes';
import type { ErrorCode } from '../domain/errors';
import { outboundEventBody, type OutboundEvent, type OutboundEventType } from '../domain/outbound-webhooks';
import { PaymentViewSchema } from './view-schemas';
import type { AnyRouteDefinition } from './routes/define';
import type * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';
import { EVENTS } from './openapi-example-events';

/**
 * The responses of the OpenAPI document: for every route its success response(s) with a JSON
 * Schema and a realistic example (recorded from the local stack running `npm run demo`, shaped by
 * the views in shared/http/views.ts and deposit-views.ts; each route's `success` list in its
 * definition, shared/http/routes/, built from the records in openapi-example-records.ts), the error responses it can produce by status with an
 * example per code, the Standard Webhooks headers of the inbound webhook routes, and the outbound
 * webhook events (their examples, made by the real views and event mapper from realistic records,
 * in openapi-example-events.ts).
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

/** The success responses of a route in OpenAPI form: its `success` list, each with its declared schema. */
export function successResponses(route: AnyRouteDefinition): Record<string, unknown> {
  return Object.fromEntries(
    route.success.map((s) => [
      s.status,
      {
        description: s.description,
        ...(s.location || s.headers
          ? {
              headers: {
                ...(s.location ? { Location: { description: 'Path of the created resource or job.', schema: { type: 'string' } } } : {}),
                ...s.headers,
              },
            }
          : {}),
        content: {
          [s.contentType ?? 'application/json']: {
            schema: s.schema ?? declaredOf(route, s.status),
            ...(s.examples ? { examples: s.examples } : { example: s.example }),
          },
          ...s.more,
        },
      },
    ]),
  );
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
