import fc from 'fast-check';
import { routes, type RouteDef } from '../../shared/manifest';
import { api, stackUrl, token } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Hostile input against every route of the local stack (issue 9 "input at the edge"): generated
 * path ids (long, unicode, percent-encoded, path-like), query values and bodies (arbitrary JSON,
 * and the route's own body with one field replaced by a generated value) are sent with an ADMIN
 * token and with a cooperative's token. No answer may be a 5xx; every 4xx carries the error
 * envelope `{error: {code, message, request_id}}`. Seeds are printed by fast-check on failure.
 */

const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS_PER_ROUTE ?? 40);

/** An id the way a careless or hostile client sends one, already in URL form. */
const pathId = fc.oneof(
  fc.string({ maxLength: 80 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map(encodeURIComponent),
  fc.integer({ min: 100, max: 4_000 }).map((n) => 'A'.repeat(n)),
  fc.constantFrom(
    '%E0%A4%A',
    '%',
    '%zz',
    '..%2F..%2Fetc',
    'BATCH-2026-000001%00',
    '%20',
    'null',
    'BATCH-9999-999999999999',
    'PAY-2026-000001-01',
    'JOB-01',
    'DDS-2026-000001',
    '%F0%9F%92%A9',
  ),
);

/** A JSON value in any place a field goes, numbers at the edges included. */
const edgeValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    1.5e-300,
    -0,
    1e308,
    -1e308,
    5e-324,
    0.1234567891234,
    2 ** 53 + 1 /* no double holds it: the value is 2 ** 53 */,
    '',
    ' ',
    '\u0000',
    'x'.repeat(5_000),
  ),
  fc.double(),
);

function withOneFieldReplaced(base: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(base);
  return fc.tuple(fc.constantFrom(...keys), edgeValue).map(([k, v]) => ({ ...base, [k]: v }));
}

/** A sample valid body per route with a body (so mutations reach the deeper checks). */
function sampleBody(r: RouteDef, ctx: { coopId: string; farmerId: string; batchId: string }): Record<string, unknown> | undefined {
  switch (r.fn) {
    case 'create-cooperative':
    case 'update-cooperative':
      return {
        cooperative_id: `${ctx.coopId}-F`,
        name: 'Fuzz',
        district: 'Mbale',
        licence_status: 'ACTIVE',
        licence_expires_at: '2030-12-31',
        manager: { name: 'M', email: 'm@x.example', phone: '+256772123456' },
        prices_ugx_per_kg: { screen18: 1, screen15: 1, FAQ: 1, PB: 1 },
        export_premium_ugx_per_kg: 0,
      };
    case 'register-farmer':
      return {
        farmer_id: 'UG-FUZZ-1',
        full_name: 'F',
        cooperative_id: ctx.coopId,
        district: 'Mbale',
        farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
      };
    case 'submit-batch':
      return batchBody(ctx.farmerId, ctx.coopId);
    case 'update-batch-stage':
      return { new_stage: 'GRADED', cooperative_id: ctx.coopId, evidence: { grade: 'screen18', moisture_pct: 11 } };
    case 'create-purchase-order':
      return { batch_ids: [ctx.batchId], buyer: 'Roaster', price_usd_per_kg: 5 };
    case 'create-farmer-payout':
      return { farmer_id: ctx.farmerId, batch_id: ctx.batchId, amount_usdc: 1, reason: 'MANUAL', cooperative_id: ctx.coopId };
    case 'verify-gfw':
      return { farmer_id: ctx.farmerId };
    case 'generate-dds':
      return { batch_id: ctx.batchId };
    case 'create-mfi-deposit':
      return { source_currency: 'UGX', source_amount: 370_000, mfi_id: 'MFI-FUZZ' };
    default:
      return undefined;
  }
}

function isEnvelope(body: unknown): boolean {
  const e = (body as { error?: { code?: unknown; message?: unknown; request_id?: unknown } } | null)?.error;
  return typeof e?.code === 'string' && typeof e.message === 'string' && typeof e.request_id === 'string';
}

describe('fuzzing every route of the local stack', () => {
  let ctx: { coopId: string; farmerId: string; batchId: string; admin: string; coop: string };

  beforeAll(async () => {
    const c = await setUpCooperative();
    const farmerId = await registerFarmer(c.id, c.agent, '+256772000777');
    const batch = await api('POST', '/batch/submit', { token: c.agent, body: batchBody(farmerId, c.id) });
    if (batch.status !== 201) throw new Error(`batch setup failed: ${batch.status} ${JSON.stringify(batch.body)}`);
    ctx = { coopId: c.id, farmerId, batchId: batch.body.data.batch_id, admin: c.admin, coop: c.coop };
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s answers no 5xx and the envelope on every 4xx',
    async (_name, route) => {
      // One token subject per route: the per-token rate limit (50/s, bursts of 100) then never hides a route.
      const tokens = [
        await token({ role: 'ADMIN', sub: `fuzz-admin-${route.fn}` }),
        await token({ role: 'COOPERATIVE', cooperative_id: ctx.coopId, sub: `fuzz-coop-${route.fn}` }),
      ];
      const base = sampleBody(route, ctx);
      const body: fc.Arbitrary<unknown> =
        route.method === 'GET'
          ? fc.constant(undefined)
          : base
            ? fc.oneof(fc.jsonValue({ maxDepth: 3 }), withOneFieldReplaced(base))
            : fc.jsonValue({ maxDepth: 3 });
      const failures: string[] = [];
      await fc.assert(
        fc.asyncProperty(pathId, fc.string({ maxLength: 60 }).map(encodeURIComponent), body, fc.nat(1), async (id, query, b, who) => {
          // Routes without a token share the caller's address's rate-limit bucket (50/s) with every other
          // test of the stack: stay well under it so no parallel suite is throttled by this one.
          if (route.auth !== 'jwt') await new Promise((r) => setTimeout(r, 50));
          const path =
            route.path.replace(/\{[^}]+\}/g, id) + (route.method === 'GET' ? `?batch_id=${query}&limit=${query}&next_token=${query}` : '');
          const res = await fetch(`${stackUrl()}${path}`, {
            method: route.method,
            headers: { authorization: `Bearer ${tokens[who]}`, 'content-type': 'application/json', 'idempotency-key': query || 'k' },
            ...(route.method === 'GET' ? {} : { body: JSON.stringify(b ?? {}) }),
          });
          const text = await res.text();
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          const ok = res.status < 500 && (res.status < 400 || isEnvelope(parsed));
          if (!ok) failures.push(`${route.method} ${path.slice(0, 120)} → ${res.status} ${text.slice(0, 200)}`);
          return ok;
        }),
        { numRuns: RUNS_PER_ROUTE },
      );
      expect(failures).toEqual([]);
    },
  );
});
