import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { ERROR_CODES } from './error-codes';
import {
  errorCodesFor,
  errorExamples,
  errorResponses,
  outboundWebhooks,
  STANDARD_WEBHOOK_HEADERS,
  successResponses,
  namedBranchSchemas,
} from './openapi-responses';
import { ROUTES } from './routes';
import type { AnyRouteDefinition, QueryParam } from './routes/define';
import type { MaxDecimalsAction } from './schema-parts';

/**
 * The OpenAPI 3.1 document, generated from the route definitions (shared/http/routes/) and the
 * same valibot schemas that validate requests and declare responses.
 */

/**
 * valibot → JSON Schema 2020-12. Custom checks are left out (`errorMode: 'ignore'`), except
 * `maxDecimals(n)`, rendered as the `x-max-decimals: n` extension and a sentence in the description
 * (not `multipleOf: 10^-n`, which binary floating point makes standard validators refuse for valid values).
 */
function jsonSchema(schema: v.GenericSchema) {
  return toJsonSchema(schema, {
    target: 'draft-2020-12',
    errorMode: 'ignore',
    overrideAction: ({ valibotAction, jsonSchema: js }) =>
      valibotAction.type === 'max_decimals'
        ? {
            ...js,
            'x-max-decimals': (valibotAction as MaxDecimalsAction).requirement,
            description: `${js.description ? `${js.description} ` : ''}At most ${(valibotAction as MaxDecimalsAction).requirement} decimal places (x-max-decimals); more is 400 VALIDATION_ERROR.`,
          }
        : undefined,
  });
}

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
        docs: {
          type: 'string',
          format: 'uri',
          description: 'Link to the code in the error reference: <docs base>/errors#CODE (GET /docs/errors).',
        },
        request_id: { type: 'string', description: 'ULID; also in the x-request-id header and the logs.' },
        details: { description: 'VALIDATION_ERROR: [{path, message}]; PAYOUT_FAILED: {payout_id, status}.' },
      },
    },
  },
};

function operation(route: AnyRouteDefinition) {
  const schema = route.body;
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: pathSchemaOf(route, m[1]!),
  }));
  const op: Record<string, unknown> = {
    operationId: operationIdOf(route),
    summary: route.summary,
    ...(route.notes ? { description: route.notes } : {}),
    tags: [tagOf(route)],
    security: route.auth === 'jwt' ? [{ bearerAuth: [] }] : route.auth === 'webhook' ? [{ standardWebhooks: [] }] : [],
    parameters: [
      ...pathParams,
      ...(route.query ?? []).map((q: QueryParam) => ({
        ...q,
        schema: 'kind' in q.schema ? jsonSchema(q.schema as v.GenericSchema) : q.schema,
      })),
      ...(route.auth === 'webhook' ? STANDARD_WEBHOOK_HEADERS : []),
      ...(route.idempotent ? [IDEMPOTENCY_KEY] : []),
    ],
    responses: {
      ...successResponses(route),
      ...errorResponses(errorCodesFor(route)),
    },
  };
  if (schema) {
    op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(schema) } } };
  }
  // The trace page answers an unknown batch with an HTML page when HTML was asked for.
  const notFound = (op.responses as Record<string, { content?: Record<string, unknown> }>)['404'];
  if (route.path === '/trace/{id}' && notFound?.content) notFound.content['text/html'] = { schema: { type: 'string' } };
  return op;
}

/** The JSON Schema of path parameter `name` of a route (its `pathParams`; a plain string without them). */
function pathSchemaOf(route: AnyRouteDefinition, name: string): ReturnType<typeof jsonSchema> | { type: 'string' } {
  const entry = route.pathParams as v.GenericSchema | Record<string, v.GenericSchema> | undefined;
  const schema =
    entry && ('kind' in entry && entry.kind === 'schema' ? (entry as v.GenericSchema) : (entry as Record<string, v.GenericSchema>)[name]);
  return schema ? jsonSchema(schema) : { type: 'string' };
}

/**
 * The function folder (`-v1` for the /v1 alias); a second route of the same function adds its last
 * path segment (GET /docs/errors: `get-docs-errors`).
 */
function operationIdOf(route: AnyRouteDefinition): string {
  const base = `${route.fn}${route.path.startsWith('/v1/') ? '-v1' : ''}`;
  const first = ROUTES.find((r) => r.fn === route.fn && r.path.startsWith('/v1/') === route.path.startsWith('/v1/'));
  return first === route
    ? base
    : `${base}-${route.path
        .split('/')
        .pop()!
        .replace(/[^A-Za-z0-9]+/g, '-')}`;
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    '1–255 visible ASCII characters, kept 24 hours per token subject: a retry with the same body returns the first answer (`idempotent-replayed: true`).',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** The reference's sections: by the first path segment. */
function tagOf(route: AnyRouteDefinition): string {
  if (route.auth === 'webhook') return 'Inbound webhooks';
  if (route.auth === 'public') return 'Reference';
  const seg = route.path.replace(/^\/v1/, '').split('/')[1] ?? '';
  return (
    (
      {
        cooperatives: 'Cooperatives',
        farmers: 'Farmers',
        batch: 'Batches',
        'purchase-orders': 'Purchase orders',
        jobs: 'Jobs',
        payments: 'Payments',
        loans: 'Lending',
        mfi: 'Lending',
        eudr: 'EUDR',
        webhooks: 'Outbound webhooks',
      } as Record<string, string>
    )[seg] ?? 'Other'
  );
}

/** The reference's sections, in order. */
const TAGS = [
  { name: 'Cooperatives', description: 'Cooperatives, their prices and the USDC held for manual reviews.' },
  { name: 'Farmers', description: 'Farmer registration (forest check, national registry), phone corrections, credit score.' },
  { name: 'Batches', description: 'Delivered batches (BatchTokens), custody stages with evidence, the audit log.' },
  { name: 'Purchase orders', description: 'Purchase orders over batches and their settlement.' },
  { name: 'Payments', description: 'Farmer payouts to mobile money, payment records, manual-review resolution.' },
  { name: 'Lending', description: 'Loans against BatchTokens, MFI deposits, the lending vault.' },
  { name: 'EUDR', description: 'Deforestation checks and due diligence statements.' },
  { name: 'Jobs', description: 'Asynchronous operations.' },
  {
    name: 'Outbound webhooks',
    description:
      "Endpoints that receive the service's signed events: registration, rotation, delivery log, replay. The events themselves are under Webhooks.",
  },
  {
    name: 'Inbound webhooks',
    description: 'Signed events from the payout provider, the on-ramp and the chain watcher (Standard Webhooks).',
  },
  { name: 'Reference', description: 'This document, the rendered reference and the error codes.' },
];

/** Builds the document; `serverUrl` is the base URL the caller reached. */
export function openApiDocument(serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) {
    paths[r.path] ??= {};
    paths[r.path]![r.method.toLowerCase()] = operation(r);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Coffee batch traceability and farmer payout API',
      version: '1.0.0',
      description: `Batches become BatchTokens on the ledger; farmers are paid to mobile money in UGX. Errors use one envelope \`{error: {code, message, docs, request_id}}\`. Unknown body fields are rejected (VALIDATION_ERROR). Order of checks: token 401, role 403, body 400, cooperative binding 403, existence 404, business rules 409/422. Timestamps are ISO 8601 UTC with Z; USDC amounts are JSON numbers with at most 6 decimals; UGX amounts are integers. Rate limit: 50 requests/s per token subject, bursts of 100 (429 RATE_LIMITED with Retry-After). Bodies up to 1 MiB (413 PAYLOAD_TOO_LARGE).\n\nThe error codes with their HTTP status: ${serverUrl}/docs/errors. Outbound webhooks are listed under Webhooks: body \`{type, timestamp, data}\`, signed per Standard Webhooks.`,
      contact: { name: 'Coffee trace operations', url: `${serverUrl}/docs` },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl }],
    tags: TAGS,
    paths,
    webhooks: outboundWebhooks(),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT (RS256, ES256 or EdDSA; claims sub, role, cooperative_id, mfi_id, duties; at most 1 hour)',
          description:
            'A JWT from the identity provider: `Authorization: Bearer <token>`. Roles ADMIN, COOPERATIVE (with `cooperative_id` and `duties`), AGENT, MFI (with `mfi_id`).',
        },
        standardWebhooks: {
          type: 'apiKey',
          in: 'header',
          name: 'webhook-signature',
          description:
            'Standard Webhooks (standardwebhooks.com): `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` under the sender\'s `whsec_` secret); 5 minutes tolerance; 401 INVALID_SIGNATURE otherwise.',
        },
      },
      schemas: { Error: ErrorEnvelope, ...namedBranchSchemas() },
      examples: errorExamples(serverUrl),
    },
    'x-error-codes': Object.fromEntries(Object.entries(ERROR_CODES).map(([code, e]) => [code, { status: e.status, meaning: e.title }])),
  };
}
