import type { Json } from '../openapi-example-records';

/**
 * The success responses a route definition declares (`success` in shared/http/routes/define.ts):
 * status, what it means, a realistic example (from the records in openapi-example-records.ts) and
 * media types. The OpenAPI document shows them with the route's declared response schema.
 */

type Schema = Record<string, unknown>;

/** A success response: status, what it means, its example and headers; `schema` only for non-JSON bodies without a declared schema. */
export interface Success {
  status: string;
  description: string;
  example: Json;
  /** Named examples shown instead of `example` (a body of several kinds). */
  examples?: Record<string, { summary: string; value: Json }>;
  location?: boolean;
  /** Response headers to document (a redirect's `Location`), beside or instead of `location`. */
  headers?: Record<string, { description: string; schema: Schema }>;
  contentType?: string;
  schema?: Schema;
  /** Further media types of the same status (content negotiation, files served as they are). */
  more?: Record<string, { schema: Schema; example?: Json }>;
}

/** 200 with `example`. */
export const ok = (example: Json, description = 'OK'): Success => ({ status: '200', description, example });
/** 201 with `example` and a `Location` header. */
export const created = (example: Json, description = 'Created; `Location` names the new resource.'): Success => ({
  status: '201',
  description,
  example,
  location: true,
});
/** 202 with `example` and a `Location` header. */
export const accepted = (example: Json, description: string): Success => ({ status: '202', description, example, location: true });
/** 202: a job was started (`Location` names it); `extra` are the fields beside `job_id` and `status`. */
export const jobAccepted = (extra: Record<string, Json>) =>
  accepted(
    { job_id: 'JOB-01M829T1PT35DWEJKNCY8T3VQ9', status: 'PENDING', ...extra },
    'Accepted: completes asynchronously; poll GET /jobs/{job_id} (`Location`).',
  );
/**
 * 303 See Other: the resource is served at another URL (`Location`, described by `where`); the
 * JSON `example` body names it too, for clients that do not follow redirects.
 */
export const seeOther = (example: Json, description: string, where: string): Success => ({
  status: '303',
  description,
  example,
  headers: { Location: { description: where, schema: { type: 'string', format: 'uri' } } },
});
