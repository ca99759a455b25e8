import { defineRoute } from './define';
import { ok } from './success';
import { job } from '../openapi-example-records';
import * as V from '../view-schemas';
import { JobIdParam } from '../path-params';

/**
 * The jobs routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /jobs/{id} */
export const getJobRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/jobs/{id}',
  fn: 'get-job',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'AGENT'],
  needs: ['table:read'],
  summary: 'Poll an asynchronous operation.',
  pathParams: JobIdParam,
  responses: { '200': V.JobViewSchema },
  notFound: ['JOB_NOT_FOUND'],
  success: [ok(job)],
});
