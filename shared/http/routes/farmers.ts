import { defineRoute } from './define';
import { ok, created, accepted } from './success';
import { farmer } from '../openapi-example-records';
import * as V from '../view-schemas';
import { creditScoreFormulaText } from '../../domain/credit-score';
import { PathId } from '../path-params';
import { UpdateFarmerSchema } from '../manual-review-schemas';
import { FarmSchema, RegisterFarmerSchema } from '../schemas';

/**
 * The farmers routes: each one's method, path, function, auth, roles, needs, request and response
 * schemas, error codes and behaviour note, from which the manifest, the OpenAPI document and the
 * handler's checks derive (docs/api-contract.md).
 */

/** /farmers/register */
export const registerFarmerRoute = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/farmers/register',
  fn: 'register-farmer',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'AGENT'],
  needs: ['table:write', 'gfw', 'maaif'],
  summary: 'Register a farmer and forest-check the farm.',
  body: RegisterFarmerSchema,
  notes:
    'Phone: a Ugandan mobile number in E.164 (+2567…), optional, shown masked. The farm: WGS84 GeoJSON positions [lng, lat]; more than 4 ha needs a `polygon` (closed ring, at least 4 positions, not self-intersecting), whose geodesic area is recorded as `computed_area_ha`. The EU Information System geometry rules apply too (400 GEOMETRY_RULE_VIOLATED, `details[].rule` naming the rule): no holes, no repeated consecutive position, still a valid polygon once every coordinate is cut to 6 decimals, every position and the GPS point inside Uganda. The farm is forest-checked at registration (`gfw_status` CLEAR or FLAGGED with the dataset used; PENDING when the forest service does not answer — POST /eudr/verify-gfw checks again). The farmer ID is checked with the national farmer registry (MAAIF): unknown there → 400; registry not answering → 202 `MAAIF_API_UNAVAILABLE` with `job_id` and the farmer recorded as pending (not usable for batches or payouts) until the job completes.',
  responses: { '201': V.FarmerViewSchema, '202': V.FarmerPendingViewSchema },
  errors: ['FARMER_ALREADY_REGISTERED'],
  success: [
    created(farmer),
    accepted(
      {
        error: {
          code: 'MAAIF_API_UNAVAILABLE',
          message: 'National farmer registry not responding; registration completes later.',
          docs: 'http://127.0.0.1:3000/docs/errors#MAAIF_API_UNAVAILABLE',
          request_id: '01M829T1PT35DWEJKNCY8T3VQ9',
        },
        job_id: 'JOB-01M829T1PT35DWEJKNCY8T3VQ9',
        status: 'PENDING',
        farmer: { ...farmer, national_registry_status: 'PENDING' },
      },
      'The national registry did not answer: the farmer is recorded as pending until the job completes.',
    ),
  ],
});

/** /farmers/{id} */
export const getFarmerRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/farmers/{id}',
  fn: 'get-farmer',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'AGENT', 'MFI'],
  needs: ['table:read'],
  summary: 'Read a farmer (phone masked).',
  pathParams: PathId,
  notes: 'The phone is masked (`+256 7•• ••• 123`).',
  responses: { '200': V.FarmerViewSchema },
  notFound: ['FARMER_NOT_REGISTERED'],
  success: [ok(farmer)],
});

/** /farmers/{id} */
export const updateFarmerRoute = /* @__PURE__ */ defineRoute({
  method: 'PATCH',
  path: '/farmers/{id}',
  fn: 'update-farmer',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE'],
  needs: ['table:write', 'manual-review-topic:publish', 'sms:send'],
  summary: "Correct a farmer's mobile-money phone.",
  body: UpdateFarmerSchema,
  pathParams: PathId,
  notes:
    "Roles: ADMIN; COOPERATIVE with the MANAGER duty, of the farmer's cooperative — the payout phone decides where money goes, so it takes the same two keys as a manual payout (an AGENT, another duty, another cooperative or an MFI: 403 INSUFFICIENT_PERMISSIONS, checked before the body). Body `{phone}`: a Ugandan mobile number in E.164 (+2567…), the registration rule (otherwise 400 VALIDATION_ERROR). Unknown farmer: 404 FARMER_NOT_REGISTERED. The same number again changes nothing. One update, conditioned on the phone being still the one read (a concurrent change: 409 DUPLICATE_REQUEST, nothing written), records `phone`, `phone_updated_at`, the token subject and an audit entry in the farmer's `phone_changes` (`{at, actor, actor_role, previous_phone, phone}`, numbers masked); then the cooperative manager is notified (the managers' SNS topic, attribute `cooperative_id`, event `farmer.phone_changed`, both numbers masked) and the old number gets an SMS naming the new number masked (a notice that cannot be sent is logged for an operator; the change stands). The answer is the farmer as GET /farmers/{id} shows it (phone masked). Payouts already made keep the phone they were made to; a payout in MANUAL_REVIEW goes to the new phone only through POST /payments/farmer-payout/{id}/resolve `{resolution: \"RETRY\"}`.",
  responses: { '200': V.FarmerViewSchema },
  notFound: ['FARMER_NOT_REGISTERED'],
  success: [
    ok({
      ...farmer,
      phone: '+256 7•• ••• 888',
      phone_updated_at: '2026-11-23T08:00:00.000Z',
      phone_changes: [
        {
          at: '2026-11-23T08:00:00.000Z',
          actor: 'manager-bugisu',
          actor_role: 'COOPERATIVE',
          previous_phone: '+256 7•• ••• 305',
          phone: '+256 7•• ••• 888',
        },
      ],
    }),
  ],
});

/** /farmers/{id}/farm */
export const replaceFarmerFarmRoute = /* @__PURE__ */ defineRoute({
  method: 'PUT',
  path: '/farmers/{id}/farm',
  fn: 'replace-farmer-farm',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'AGENT'],
  needs: ['table:write', 'gfw'],
  summary: "Correct a farmer's plot: replace its GPS point, polygon and declared area.",
  body: FarmSchema,
  pathParams: PathId,
  notes:
    "Roles as POST /farmers/register: ADMIN; COOPERATIVE or AGENT of the farmer's cooperative (another cooperative or an MFI: 403 INSUFFICIENT_PERMISSIONS). Body: the farm as at registration, `{gps: {lat, lng}, polygon?, area_ha}` (WGS84, GeoJSON positions [lng, lat]), replacing the whole plot — leave `polygon` out to map the farm as a point (at most 4 ha). The registration rules apply (400 VALIDATION_ERROR, or 400 GEOMETRY_RULE_VIOLATED with `details[].rule`: no holes, no repeated consecutive position, still a valid polygon cut to 6 decimals, inside Uganda); a polygon's geodesic area is recorded as `computed_area_ha`. Unknown farmer: 404 FARMER_NOT_REGISTERED. The same plot again changes nothing (200, the farmer as it is): the request can be repeated safely. A new plot is forest-checked as at registration (`gfw_status` CLEAR or FLAGGED with the dataset; PENDING when the forest service does not answer — POST /eudr/verify-gfw checks again). One transaction, conditioned on the plot not having been replaced since it was read (a concurrent correction: 409 DUPLICATE_REQUEST, nothing written), records the plot, the forest check, `farm_updated_at` and an entry in the farmer's `farm_changes` (`{at, actor, actor_role, previous_farm_sha256, farm_sha256}`: the SHA-256 of each plot's JSON `{gps, polygon, area_ha}`), and keeps both plots in the change's own record. A due diligence statement already generated keeps the plot it was built with (GET /eudr/dds/{id} and its XML do not change); a new statement, or POST /eudr/dds/{id}/amend, uses the corrected one. The answer is the farmer as GET /farmers/{id} shows it.",
  responses: { '200': V.FarmerViewSchema },
  notFound: ['FARMER_NOT_REGISTERED'],
  success: [
    ok({
      ...farmer,
      farm: {
        gps: { lat: 1.011812, lng: 34.331245 },
        polygon: {
          type: 'Polygon',
          coordinates: [
            [
              [34.33098, 1.01158],
              [34.33152, 1.01158],
              [34.33152, 1.01204],
              [34.33098, 1.01204],
              [34.33098, 1.01158],
            ],
          ],
        },
        area_ha: 0.31,
        computed_area_ha: 0.3072,
      },
      gfw_checked_at: '2026-11-23T08:00:00.412Z',
      farm_updated_at: '2026-11-23T08:00:00.000Z',
      farm_changes: [
        {
          at: '2026-11-23T08:00:00.000Z',
          actor: 'agent-mbl-07',
          actor_role: 'AGENT',
          previous_farm_sha256: '3f7a1c9e5b2d8f4a6c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a',
          farm_sha256: '8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d',
        },
      ],
    }),
  ],
});

/** /farmers/{id}/credit-score */
export const getCreditScoreRoute = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/farmers/{id}/credit-score',
  fn: 'get-credit-score',
  auth: 'jwt',
  roles: ['ADMIN', 'COOPERATIVE', 'MFI'],
  needs: ['table:read'],
  summary: "The farmer's credit score (300–850, band A–E) with every factor (ADMIN, MFI, the farmer's cooperative).",
  pathParams: PathId,
  notes: `Roles: ADMIN; MFI; COOPERATIVE of the farmer (another cooperative: 403 INSUFFICIENT_PERMISSIONS; unknown farmer: 404 FARMER_NOT_REGISTERED). Answer \`{farmer_id, score, band, computed_at, formula_version, factors: [{name, value, effect}]}\`, computed from this service's records (the farmer's confirmed batches — at most 1,000, read from a bounded query of the cooperative's batches —, their loans — at most 200 —, the registration date). ${creditScoreFormulaText()}`,
  responses: { '200': V.CreditScoreViewSchema },
  notFound: ['FARMER_NOT_REGISTERED'],
  success: [
    ok({
      farmer_id: 'UG-BUD-004512',
      score: 575,
      band: 'D',
      computed_at: '2026-11-22T18:55:29.460Z',
      formula_version: '1',
      factors: [
        { name: 'deliveries', value: 1, effect: 4 },
        { name: 'volume_kg', value: 182.4, effect: 1 },
        { name: 'quality', value: 100, effect: 30 },
        { name: 'loans_repaid_on_time', value: 1, effect: 40 },
      ],
    }),
  ],
});
