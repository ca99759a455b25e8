import { defineRoute } from './define';
import { ok, created } from './success';
import { cooperative, farmer } from '../openapi-example-records';
import * as V from '../view-schemas';
import { PathId } from '../path-params';
import { CreateCooperativeSchema, UpdateCooperativeSchema } from '../schemas';

/**
 * The cooperatives routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /cooperatives */
export const createCooperativeRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/cooperatives',
  fn: 'create-cooperative',
  auth: 'jwt',
  roles: ['ADMIN'],
  needs: ['table:write'],
  summary: 'Register a cooperative (ADMIN).',
  body: CreateCooperativeSchema,
  responses: { '201': V.CooperativeViewSchema },
  errors: ['COOPERATIVE_ALREADY_EXISTS'],
  success: [created(cooperative)],
});

/** /cooperatives/{id} */
export const updateCooperativeRoute = /* @__PURE__ */ defineRoute({
  method: 'PATCH',
  path: '/cooperatives/{id}',
  fn: 'update-cooperative',
  auth: 'jwt',
  roles: ['ADMIN'],
  needs: ['table:write'],
  summary: 'Change licence, manager or prices (ADMIN).',
  body: UpdateCooperativeSchema,
  pathParams: PathId,
  responses: { '200': V.CooperativeViewSchema },
  notFound: ['COOPERATIVE_NOT_FOUND'],
  success: [ok(cooperative)],
});

/** /cooperatives/{id} */
export const getCooperativeRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/cooperatives/{id}',
  fn: 'get-cooperative',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'AGENT'],
  needs: ['table:read'],
  summary: 'Read a cooperative.',
  pathParams: PathId,
  responses: { '200': V.CooperativeViewSchema },
  notFound: ['COOPERATIVE_NOT_FOUND'],
  success: [ok(cooperative)],
});

/** /cooperatives/{id}/holding-balance */
export const getHoldingBalanceRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/cooperatives/{id}/holding-balance',
  fn: 'get-holding-balance',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read'],
  summary: 'USDC held for the cooperative from payouts in manual review (ADMIN, the cooperative).',
  pathParams: PathId,
  notes:
    "USDC of the cooperative's payouts that ended in MANUAL_REVIEW, held for the farmers to collect at the cooperative office against their batch receipt.",
  responses: { '200': V.HoldingBalanceViewSchema },
  notFound: ['COOPERATIVE_NOT_FOUND'],
  success: [ok({ cooperative_id: 'BUGISU-CU-01', held_usdc: 126.045538, payouts_held: 1, updated_at: '2026-11-22T19:02:11.804Z' })],
});

/** /cooperatives/{id}/flagged-farms */
export const listFlaggedFarmsRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/cooperatives/{id}/flagged-farms',
  fn: 'list-flagged-farms',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:read'],
  summary: 'Farms the forest check flagged: the manual-review list of a cooperative.',
  pathParams: PathId,
  responses: { '200': V.FlaggedFarmsViewSchema },
  notFound: ['COOPERATIVE_NOT_FOUND'],
  success: [ok({ cooperative_id: 'BUGISU-CU-01', farmers: [{ ...farmer, gfw_status: 'FLAGGED' }], total: 1 })],
});
