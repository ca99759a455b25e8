import { docsBaseUrl } from '../config';
import type { DomainError, ErrorCode } from '../domain/errors';
import { ERROR_STATUS, errorHeaders } from './error-status';
import { withSecurityHeaders } from './security-headers';

/** The service's error envelope (docs/api/conventions.md#http-and-errors). */
interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; docs: string; request_id: string; details?: unknown };
  [extra: string]: unknown;
}

/** API Gateway proxy result, the shape every HTTP handler returns. */
export interface HttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** `error.docs`: the error's entry in the reference served at GET /docs. */
function docsUrl(code: string): string {
  return `${docsBaseUrl()}/errors#${code}`;
}

/**
 * Builds the HTTP response for an error code: status from ERROR_STATUS, envelope body, the
 * `x-request-id` header and the security headers (./security-headers.ts). `extra` adds top-level fields beside `error` (e.g. DDS_TRACES_PENDING's
 * `dds_id`).
 */
export function errorResponse(
  code: ErrorCode,
  message: string,
  requestId: string,
  opts: { details?: unknown; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
): HttpResult {
  const body: ErrorEnvelope = {
    ...(opts.extra ?? {}),
    error: { code, message, docs: docsUrl(code), request_id: requestId, ...(opts.details !== undefined ? { details: opts.details } : {}) },
  };
  return {
    statusCode: ERROR_STATUS[code],
    headers: withSecurityHeaders({ 'content-type': 'application/json', 'x-request-id': requestId, ...(opts.headers ?? {}) }),
    body: JSON.stringify(body),
  };
}

/** Maps a DomainError to its response: its code's status, its details, `Retry-After` when it says how long to wait. */
export function domainErrorResponse(err: DomainError, requestId: string): HttpResult {
  return errorResponse(err.code, err.message, requestId, { details: err.details, headers: errorHeaders(err) });
}

/** A JSON success response with the request id header and the security headers. */
export function jsonResponse(statusCode: number, body: unknown, requestId: string, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: withSecurityHeaders({ 'content-type': 'application/json', 'x-request-id': requestId, ...headers }),
    body: JSON.stringify(body),
  };
}
