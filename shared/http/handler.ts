import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import * as v from 'valibot';
import { callerFromContext, type Caller, type Role } from '../auth/claims';
import { ANONYMOUS_CALLER, type AnonymousCaller } from '../domain/caller';
import { DomainError, type ErrorDetail } from '../domain/errors';
import { newUlid } from '../domain/ids';
import { logger } from '../runtime/logger';
import { observability } from '../runtime/instrument';
import { domainErrorResponse, errorResponse, jsonResponse, type HttpResult } from './envelope';
import { ERROR_STATUS } from './error-status';
import { MIB } from '../manifest';
import { IdParams } from './path-params';
import type { AnyRouteDefinition, RouteDefinition } from './routes/define';
import { issuesToDetails, validate, type IssueCodeRule } from './validation';
import { withSecurityHeaders } from './security-headers';

/** What a route handler receives after the standard middleware ran. */
export interface HttpRequest<B, C extends Caller | AnonymousCaller = Caller> {
  body: B;
  /** The body exactly as received (webhooks verify signatures over it). */
  rawBody: string;
  /** The verified caller; on a public route always the anonymous caller (no role). */
  caller: C;
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  requestId: string;
  /** The route as API Gateway names it (`POST /api/webhooks/payout-provider`). */
  route: string;
  /** The path the client called, with any stage prefix (`/prod/api/webhooks/pawapay`): what a sender's request signature covers. */
  path: string;
}

/** What a route handler returns: a status and a JSON body (or a ready HttpResult). */
export type HttpReply = { status: number; body: unknown; headers?: Record<string, string> } | HttpResult;

/** A route's declared success response schemas, by status. */
type Responses = Readonly<Record<string, v.GenericSchema>>;

/**
 * What a route handler may return when its definition declares its success responses: for each
 * JSON answer, a body of the output type of one of the declared schemas (or a ready
 * HttpResult: errors, files, redirects); without declared responses, any HttpReply.
 */
export type ReplyOf<R extends Responses | undefined> = R extends Responses
  ?
      | { status: number; body: { [K in keyof R & string]: v.InferOutput<R[K]> }[keyof R & string]; headers?: Record<string, string> }
      | HttpResult
  : HttpReply;

export interface HttpHandlerOptions<S extends v.GenericSchema | undefined, R extends Responses | undefined = undefined> {
  /** The declared success responses (the route's `responses`): they type what the handler may return. */
  responses?: R;
  /** Roles allowed to call the route at all (checked before the body: docs/api/conventions.md#http-and-errors order). */
  roles?: readonly Role[];
  /** valibot schema of the JSON body; omit for routes without a body. */
  body?: S;
  /**
   * valibot schema of the path parameters (e.g. `IdParams(BatchIdParam)`), checked after the role
   * and before the body: 400 VALIDATION_ERROR with details `path.<name>`. Without it every path
   * parameter must still be a `PathId` (≤ 64 id characters), so none reaches a use case unbounded.
   */
  params?: v.GenericSchema<Record<string, string>, Record<string, string>>;
  /** Issue → code overrides (e.g. WEIGHT_OUT_OF_RANGE). */
  issueCodes?: IssueCodeRule[];
  /** Largest body in bytes; default 1 MiB. */
  maxBodyBytes?: number;
  /** Public routes (no authorizer): no caller required. */
  public?: boolean;
  /** Keep the body as a string (no JSON parsing here), still size-checked. */
  rawBody?: boolean;
  /**
   * The operation's permission when it depends on what the body asks for (e.g. the duty of the
   * requested custody stage): run on the parsed JSON before it is validated, so the order of
   * checks stays token, permission (403), body (400) (docs/api/conventions.md#http-and-errors). Throws a DomainError.
   */
  authorize?: (caller: Caller, body: unknown) => void;
}

/**
 * The handler options a route's definition implies: its roles, its path parameters' schema (one
 * schema: the `{id}` parameter; a record: one per name), its body schema and body size limit.
 * `extra` adds what only the handler knows: issue-code overrides, a permission that depends on the body.
 */
export function routeOptions<B extends v.GenericSchema | undefined, R extends Responses | undefined>(
  // biome-ignore lint/suspicious/noExplicitAny: any path-parameter and event schemas
  route: RouteDefinition<B, any, R, any>,
  extra: Pick<HttpHandlerOptions<B>, 'issueCodes' | 'authorize'> = {},
): HttpHandlerOptions<B, R> & { public?: false } {
  if (route.auth !== 'jwt') throw new Error(`${route.method} ${route.path} is not a JWT route (auth ${route.auth})`);
  const params = paramsSchema(route);
  return {
    ...(route.roles ? { roles: route.roles } : {}),
    ...(route.body ? { body: route.body } : {}),
    ...(params ? { params } : {}),
    ...(route.maxBodyBytes ? { maxBodyBytes: route.maxBodyBytes } : {}),
    ...(route.responses ? { responses: route.responses } : {}),
    ...extra,
  };
}

/**
 * The handler options of a public route's definition (no authorizer in front, the caller is
 * anonymous): its path parameters' schema. Throws when the route is not `public`.
 */
export function publicRouteOptions(route: AnyRouteDefinition): HttpHandlerOptions<undefined> & { public: true } {
  if (route.auth !== 'public') throw new Error(`${route.method} ${route.path} is not a public route (auth ${route.auth})`);
  const params = paramsSchema(route);
  return { public: true, ...(params ? { params } : {}) };
}

/** A route's path-parameter schema: one schema is the `{id}` parameter's, a record one per name; none without `pathParams`. */
function paramsSchema(route: AnyRouteDefinition): HttpHandlerOptions<undefined>['params'] {
  const p = route.pathParams as v.GenericSchema<string, string> | Record<string, v.GenericSchema<string, string>> | undefined;
  if (!p) return undefined;
  const schema =
    'kind' in p && p.kind === 'schema'
      ? IdParams(p as v.GenericSchema<string, string>)
      : v.object(p as Record<string, v.GenericSchema<string, string>>);
  return schema as HttpHandlerOptions<undefined>['params'];
}

/** The default format of a path parameter: `PathId` in shared/http/path-params.ts. */
const PATH_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

type Event = APIGatewayProxyEvent & { _requestId?: string; _rawBody?: string };

/** The Lambda handler `httpHandler` builds. */
export type HttpLambda = (event: Event, context: Context) => Promise<HttpResult>;

/**
 * Wraps a route's use-case call in the standard middy stack: request id (ULID, also in
 * `x-request-id` and every log line), role check, body size (413), JSON body parsing (415 for a
 * non-JSON content type, 400 for malformed JSON), valibot validation (400 with details), and one
 * error middleware that turns every failure into the specification's envelope. Every answer
 * carries the security headers (nosniff, no-referrer, HSTS in AWS, a CSP on HTML: ./security-headers.ts). Unknown errors
 * become 500 INTERNAL_ERROR without leaking internals. The Powertools middlewares run outermost
 * (shared/runtime/instrument.ts `observability`): the request is traced, every log line carries the
 * Lambda request id and cold-start flag, its business metrics are flushed when it ends, answered
 * or failed, and the keys added here (`request_id`, `route`) are removed then.
 */
export function httpHandler<S extends v.GenericSchema | undefined = undefined>(
  opts: HttpHandlerOptions<S> & { public: true },
  fn: (req: HttpRequest<S extends v.GenericSchema ? v.InferOutput<S> : undefined, AnonymousCaller>) => Promise<HttpReply>,
): HttpLambda;
export function httpHandler<S extends v.GenericSchema | undefined = undefined, R extends Responses | undefined = undefined>(
  opts: HttpHandlerOptions<S, R> & { public?: false },
  fn: (req: HttpRequest<S extends v.GenericSchema ? v.InferOutput<S> : undefined, Caller>) => Promise<ReplyOf<R>>,
): HttpLambda;
export function httpHandler<S extends v.GenericSchema | undefined = undefined>(
  // biome-ignore lint/suspicious/noExplicitAny: the implementation of both overloads
  opts: HttpHandlerOptions<S, any>,
  fn: (req: HttpRequest<S extends v.GenericSchema ? v.InferOutput<S> : undefined, never>) => Promise<HttpReply>,
): HttpLambda {
  const maxBody = opts.maxBodyBytes ?? MIB;
  const base = middy<Event, HttpResult>()
    .use(observability())
    .before(async (request) => {
      const requestId = newUlid();
      request.event._requestId = requestId;
      const raw = request.event.body ?? '';
      request.event._rawBody = request.event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      logger.appendKeys({ request_id: requestId, route: `${request.event.httpMethod} ${request.event.resource ?? request.event.path}` });
      if (!opts.public) {
        const caller = callerFromContext(request.event.requestContext?.authorizer as Record<string, unknown> | undefined);
        if (!caller) throw new DomainError('UNAUTHORIZED', 'Missing or invalid Bearer token.');
        if (opts.roles && !opts.roles.includes(caller.role)) {
          throw new DomainError(
            'INSUFFICIENT_PERMISSIONS',
            `This operation needs one of the roles ${opts.roles.join(', ')}; the token has role ${caller.role}.`,
          );
        }
      }
      if (opts.body || opts.rawBody) {
        const raw = request.event.body ?? '';
        const size = request.event.isBase64Encoded ? Math.floor((raw.length * 3) / 4) : Buffer.byteLength(raw, 'utf8');
        if (size > maxBody)
          throw new DomainError('PAYLOAD_TOO_LARGE', `The request body is ${size} bytes; the limit for this route is ${maxBody} bytes.`);
        if (raw.trim() === '') throw new DomainError('VALIDATION_ERROR', 'A JSON request body is required.');
      }
    });
  const withBody = opts.body ? base.use(httpJsonBodyParser({ disableContentTypeError: false })) : base;
  const handler = withBody
    .handler(async (event) => {
      const requestId = event._requestId ?? newUlid();
      const headers = lowerCaseHeaders(event.headers);
      // A public route has no authorizer: its caller is anonymous whatever the request carries.
      const caller = opts.public ? null : callerFromContext(event.requestContext?.authorizer as Record<string, unknown> | undefined);
      if (!caller && !opts.public) throw new DomainError('UNAUTHORIZED', 'Missing or invalid Bearer token.');
      if (opts.authorize && caller) opts.authorize(caller, event.body);
      const params = validatePathParameters(opts.params, event.pathParameters);
      const body = (opts.body ? validate(opts.body, event.body, opts.issueCodes ?? []) : undefined) as S extends v.GenericSchema
        ? v.InferOutput<S>
        : undefined;
      const rawBody = event._rawBody ?? '';
      const reply = await fn({
        body,
        rawBody,
        caller: (caller ?? ANONYMOUS_CALLER) as never,
        params,
        query: (event.queryStringParameters ?? {}) as Record<string, string>,
        headers,
        requestId,
        route: `${event.httpMethod} ${event.resource ?? event.path}`,
        path: (event.requestContext as { path?: string } | undefined)?.path ?? event.path,
      });
      if ('statusCode' in reply) return { ...reply, headers: withSecurityHeaders(reply.headers, reply.body) };
      return jsonResponse(reply.status, reply.body, requestId, reply.headers);
    })
    .onError(async (request) => {
      const requestId = request.event._requestId ?? newUlid();
      request.response = toErrorResponse(request.error, requestId);
    });
  return (event: Event, context: Context) => handler(event, context);
}

/**
 * Validates the path parameters against the route's schema (default: each an id of 1–64 letters,
 * digits and `_ . : -`, as `PathId` in shared/http/path-params.ts). Errors: DomainError
 * VALIDATION_ERROR (400) with details `[{path: "path.<name>", message}]`.
 */
function validatePathParameters(
  schema: v.GenericSchema<Record<string, string>, Record<string, string>> | undefined,
  raw: Record<string, string | undefined> | null | undefined,
): Record<string, string> {
  const input: Record<string, string> = {};
  for (const [k, val] of Object.entries(raw ?? {})) if (val !== undefined) input[k] = val;
  let details: ErrorDetail[] = [];
  if (schema) {
    const result = v.safeParse(schema, input, { abortEarly: false });
    if (result.success) return result.output;
    details = issuesToDetails(result.issues);
  } else {
    details = Object.keys(input)
      .filter((k) => !PATH_ID.test(input[k]!))
      .map((k) => ({ path: k, message: 'must be an id of 1 to 64 letters, digits, and _ . : -' }));
    if (!details.length) return input;
  }
  details = details.map((d) => ({ path: `path.${d.path}`, message: d.message }));
  throw new DomainError('VALIDATION_ERROR', `Invalid path parameter ${details[0]!.path}: ${details[0]!.message}`, { details });
}

/** Maps any thrown value to the error envelope. Never exposes internals of an unknown error. */
export function toErrorResponse(err: unknown, requestId: string): HttpResult {
  if (err instanceof DomainError) {
    if (ERROR_STATUS[err.code] >= 500) logger.error('request failed', { code: err.code, error: err as Error });
    else logger.info('request rejected', { code: err.code, reason: err.message });
    return domainErrorResponse(err, requestId);
  }
  const e = err as { statusCode?: number; message?: string; cause?: { package?: string; data?: unknown } } | undefined;
  if (e?.cause?.package === '@middy/http-json-body-parser') {
    if (/Unsupported Media Type/.test(e.message ?? '')) {
      return errorResponse('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json.', requestId);
    }
    return errorResponse('VALIDATION_ERROR', 'The request body is not valid JSON.', requestId);
  }
  logger.error('unexpected error', { error: err as Error });
  return errorResponse('INTERNAL_ERROR', 'Unexpected server error; contact support with the request_id.', requestId);
}

/** Header names in lower case (API Gateway passes them as sent). */
function lowerCaseHeaders(h: Record<string, string | undefined> | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(h ?? {})) if (val !== undefined) out[k.toLowerCase()] = val;
  return out;
}
