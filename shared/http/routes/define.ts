import type * as v from 'valibot';
import type { Role } from '../../domain/caller';
import type { ErrorCode } from '../../domain/errors';
import type { Need } from '../../need';
import type { Success } from './success';

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** `jwt`: behind the shared REQUEST authorizer; `webhook`: checks a Standard Webhooks signature itself; `public`: nothing. */
type RouteAuth = 'jwt' | 'webhook' | 'public';

/** A query parameter as the OpenAPI document lists it; `schema` is a valibot schema or a plain JSON Schema. */
export interface QueryParam {
  readonly name: string;
  readonly in: 'query';
  readonly required: boolean;
  readonly description?: string;
  readonly schema: v.GenericSchema | Readonly<Record<string, unknown>>;
}

/** The schema(s) of a route's path parameters: one schema for `{id}`, or one per parameter name. */
type PathParamsSchema = v.GenericSchema<string, string> | Readonly<Record<string, v.GenericSchema<string, string>>>;

/**
 * One HTTP route, defined once: what API Gateway serves (method, path, function folder, auth), what
 * the function needs, what the handler checks (roles, path parameters, body, size) and what the
 * OpenAPI document says (summary, behaviour note, query, idempotency, declared responses by status,
 * error codes). B, P, R and E keep the schemas' types so the handler gets a typed body and params.
 */
export interface RouteDefinition<
  B extends v.GenericSchema | undefined = v.GenericSchema | undefined,
  P extends PathParamsSchema | undefined = PathParamsSchema | undefined,
  R extends Readonly<Record<string, v.GenericSchema>> | undefined = Readonly<Record<string, v.GenericSchema>> | undefined,
  E extends v.GenericSchema | undefined = v.GenericSchema | undefined,
> {
  readonly method: HttpMethod;
  /** API Gateway path syntax: `/batch/{id}`. */
  readonly path: string;
  /** The function folder: `functions/<fn>/handler.ts` exporting `handler`. */
  readonly fn: string;
  readonly auth: RouteAuth;
  /** Roles allowed to call the route at all (checked first, before the body); none on public and webhook routes. */
  readonly roles?: readonly Role[];
  /** What the function uses (shared/manifest.ts NEEDS); a function's needs are the union over its routes. */
  readonly needs: readonly Need[];
  /** Largest accepted request body in bytes; default 1 MiB (docs/api/conventions.md#http-and-errors). */
  readonly maxBodyBytes?: number;
  readonly summary: string;
  /** valibot schema of the JSON body (validated by the handler, documented as the request body). */
  readonly body?: B;
  /**
   * A webhook route's event: the valibot schema its body is validated against after the signature
   * check (shared/http/webhook.ts); the behaviour note describes it in the OpenAPI document.
   */
  readonly event?: E;
  /** Formats of the path parameters; without it each must be a `PathId`. */
  readonly pathParams?: P;
  readonly query?: readonly QueryParam[];
  /** Honours an `Idempotency-Key` header. */
  readonly idempotent?: boolean;
  /** The behaviour note: the operation's description; every error code it names is one of its error responses. */
  readonly notes?: string;
  /** The declared body of each JSON success response, by status. */
  readonly responses?: R;
  /** Its success responses as the OpenAPI document shows them: status, meaning, a realistic example (ok/created/accepted in ./success). */
  readonly success: readonly Success[];
  /** Its 404 codes. */
  readonly notFound?: readonly ErrorCode[];
  /** Other codes it answers that neither the transport nor the note names. */
  readonly errors?: readonly ErrorCode[];
}

/** Any route definition, whatever its schemas. */
// biome-ignore lint/suspicious/noExplicitAny: a list of definitions of different schema types
export type AnyRouteDefinition = RouteDefinition<any, any, any, any>;

/** A route definition with its schema types kept (identity at run time). */
export function defineRoute<
  const B extends v.GenericSchema | undefined = undefined,
  const P extends PathParamsSchema | undefined = undefined,
  const R extends Readonly<Record<string, v.GenericSchema>> | undefined = undefined,
  const E extends v.GenericSchema | undefined = undefined,
>(definition: RouteDefinition<B, P, R, E>): RouteDefinition<B, P, R, E> {
  return definition;
}
