import { request } from 'node:http';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import * as v from 'valibot';
import { handler as submitBatchHandler } from '../../functions/submit-batch/handler';
import { decodePathParameters, startGateway, type Gateway, type ProxyHandler } from '../../infra/local/gateway';
import { openApiDocument } from '../../shared/http/openapi';
import { FarmerPayoutSchema } from '../../shared/http/payout-schemas';
import { RegisterFarmerSchema } from '../../shared/http/registry-schemas';
import { decimalPlaces, maxDecimals } from '../../shared/http/schema-parts';
import { CreatePurchaseOrderSchema, MilledEvidenceSchema, SubmitBatchSchema } from '../../shared/http/schemas';
import { routes } from '../../shared/manifest';
import { logger } from '../../shared/runtime/logger';
import { ADMIN, apiEvent, expectErrorEnvelope, lambdaContext, parse, type EventInput } from './support/api-event';

/**
 * Input at the edge (issue 9): path parameters, body numbers and percent-encoding are checked in
 * the transport, so no input, however malformed, reaches DynamoDB unbounded or gets a 5xx
 * (docs/api/conventions.md#http-and-errors).
 */

const ddb = mockClient(DynamoDBDocumentClient);

beforeAll(() => {
  logger.setLogLevel('SILENT');
  process.env.TABLE_NAME = 't';
  process.env.DOCS_BASE_URL = 'http://x/docs';
  process.env.AWS_REGION = 'eu-west-1';
});

beforeEach(() => {
  ddb.reset();
  ddb.onAnyCommand().rejects(new Error('unexpected DynamoDB command in this test'));
});

type Handler = (
  event: ReturnType<typeof apiEvent>,
  context: ReturnType<typeof lambdaContext>,
) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

async function handlerOf(fn: string): Promise<Handler> {
  const mod = (await import(`../../functions/${fn}/handler`)) as { handler: Handler };
  return mod.handler;
}

async function call(h: Handler, input: EventInput) {
  return parse(await h(apiEvent(input), lambdaContext()));
}

const paramRoutes = routes.filter((r) => /\{\w+\}/.test(r.path));
/** A JSON body for routes that take one: the path is checked before the body, so any will do. */
const BODY_ROUTES = new Set([
  'update-cooperative',
  'update-batch-stage',
  'update-farmer',
  'resolve-farmer-payout',
  'create-evidence-upload',
  'settle-purchase-order',
  'refund-buyer-payment',
]);

// ------------------------------------------------------------------ path parameters

describe('path parameters', () => {
  it('covers every route with a path parameter', () => {
    expect(paramRoutes.map((r) => r.fn).sort()).toEqual([
      'amend-dds',
      'confirm-purchase-order',
      'create-evidence-upload',
      'delete-webhook-endpoint',
      'get-batch',
      'get-batch-audit',
      'get-batch-loan',
      'get-cooperative',
      'get-credit-score',
      'get-dds',
      'get-dds-evidence',
      'get-dds-xml',
      'get-farmer',
      'get-farmer-payout',
      'get-holding-balance',
      'get-ipfs',
      'get-ipfs',
      'get-job',
      'get-loan',
      'get-payment',
      'get-purchase-order',
      'get-settlement',
      'get-trace',
      'get-trace',
      'list-flagged-farms',
      'list-webhook-deliveries',
      'refund-buyer-payment',
      'replay-webhook-delivery',
      'resolve-farmer-payout',
      'rotate-webhook-secret',
      'settle-purchase-order',
      'update-batch-stage',
      'update-cooperative',
      'update-farmer',
      'withdraw-dds',
    ]);
  });

  const hostile: [string, string][] = [
    ['a 3,000-character id', 'A'.repeat(3000)],
    ["a 3,000-character id of the route's own prefix", `BATCH-2025-${'1'.repeat(2989)}`],
    ['a raw malformed percent-encoding', '%E0%A4%A'],
    ['a decoded control character', 'COOP-1\u0000'],
    ['a path traversal', '../../etc/passwd'],
  ];

  describe.each(paramRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (_name, route) => {
    it.each(hostile)('answers 400 VALIDATION_ERROR naming path.id for %s, without touching DynamoDB', async (_what, id) => {
      // Prepare
      const h = await handlerOf(route.fn);
      const path = route.path.replace('{id}', encodeURIComponent(id));

      // Act
      const res = await call(h, {
        method: route.method,
        path,
        resource: route.path,
        pathParameters: { id },
        caller: ADMIN,
        ...(BODY_ROUTES.has(route.fn) ? { body: {} } : {}),
      });

      // Assess
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.details).toEqual([{ path: 'path.id', message: expect.any(String) }]);
      expect(JSON.stringify(res.body)).not.toContain('AAAAAAAAAA');
      expect(ddb.calls()).toHaveLength(0);
    });
  });

  // A well-formed id that does not exist is still the resource's 404 (docs/api/conventions.md#http-and-errors order).
  it.each([
    ['get-batch', 'BATCH-2025-999999', 'BATCH_NOT_FOUND'],
    ['get-batch-audit', 'BATCH-2025-999999', 'BATCH_NOT_FOUND'],
    ['get-trace', 'BATCH-2025-999999', 'BATCH_NOT_FOUND'],
    ['get-job', 'JOB-01JZ0000000000000000000000', 'JOB_NOT_FOUND'],
    ['get-payment', 'PAY-2025-000999-01', 'PAYMENT_NOT_FOUND'],
    ['get-payment', 'DEP-2025-000001', 'PAYMENT_NOT_FOUND'],
    ['get-farmer-payout', 'PAY-2025-000999-01', 'PAYMENT_NOT_FOUND'],
    ['get-dds', 'DDS-2025-999999', 'DDS_NOT_FOUND'],
    ['get-dds-xml', 'DDS-2025-999999', 'DDS_NOT_FOUND'],
    ['get-dds-evidence', 'DDS-2025-999999', 'DDS_NOT_FOUND'],
    ['get-farmer', 'UG-KAP-0001', 'FARMER_NOT_REGISTERED'],
    ['get-cooperative', 'COOP-NOPE', 'COOPERATIVE_NOT_FOUND'],
    ['confirm-purchase-order', 'PO-NOPE', 'PO_NOT_FOUND'],
  ])('%s answers 404 for the well-formed unknown id %s', async (fn, id, code) => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ddb.on(QueryCommand).resolves({ Items: [] });
    const route = paramRoutes.find((r) => r.fn === fn)!;

    // Act
    const res = await call(await handlerOf(fn), {
      method: route.method,
      path: route.path.replace('{id}', id),
      resource: route.path,
      pathParameters: { id },
      caller: ADMIN,
    });

    // Assess
    expectErrorEnvelope(res, 404, code);
  });

  it("puts each route's id format into the OpenAPI document (bounded), and the document still renders", () => {
    // Act
    const doc = openApiDocument('http://x');
    const json = JSON.stringify(doc);

    // Assess
    expect(JSON.parse(json)).toEqual(doc);
    for (const r of paramRoutes) {
      const op = (
        doc.paths[r.path] as Record<
          string,
          { parameters: { name: string; schema: { type: string; pattern?: string; maxLength?: number } }[] }
        >
      )[r.method.toLowerCase()]!;
      const schema = op.parameters.find((p) => p.name === 'id')!.schema;
      expect(schema.type).toBe('string');
      expect(schema.pattern).toEqual(expect.any(String));
    }
  });
});

// ------------------------------------------------------------------ percent-encoding at the local gateway

describe('local gateway: malformed percent-encoding', () => {
  let gw: Gateway;
  const seen: (Record<string, string> | null)[] = [];
  const echo: ProxyHandler = async (event) => {
    seen.push(event.pathParameters as Record<string, string> | null);
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: event.pathParameters?.id }) };
  };

  beforeAll(async () => {
    gw = await startGateway({
      port: 0,
      routes: [{ method: 'GET', path: '/batch/{id}', fn: 'echo', auth: 'public', needs: [], summary: 'echo' }],
      loadHandler: async () => echo,
      authorizer: async () => {
        throw new Error('no jwt routes here');
      },
    });
  });
  afterAll(async () => gw.stop());

  /** A raw request, so the path reaches the server exactly as written. */
  const get = (path: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: gw.port, path, method: 'GET' }, (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) }));
      });
      req.on('error', reject);
      req.end();
    });

  it.each(['/batch/%E0%A4%A', '/batch/%', '/batch/%ZZ', '/batch/%C0%80'])(
    'answers %s with 400 VALIDATION_ERROR in the envelope, never reaching the handler',
    async (path) => {
      // Prepare
      seen.length = 0;

      // Act
      const res = await get(path);

      // Assess
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ path: 'path.id', message: expect.stringMatching(/percent-encoding/) }],
      });
      expect(res.body.error.request_id).toEqual(expect.any(String));
      expect(seen).toHaveLength(0);
    },
  );

  it('still decodes a well-formed escape', async () => {
    // Act
    const res = await get('/batch/BATCH%2D2025%2D000001');

    // Assess
    expect(res).toEqual({ status: 200, body: { id: 'BATCH-2025-000001' } });
  });

  it('decodePathParameters names the malformed parameter', () => {
    expect(decodePathParameters(['id'], ['%E0%A4%A'])).toEqual({ invalid: 'id' });
    expect(decodePathParameters(['id'], ['a%20b'])).toEqual({ params: { id: 'a b' } });
  });
});

// ------------------------------------------------------------------ body numbers

describe('body numbers', () => {
  const batchBody = (over: Record<string, unknown> = {}) => ({
    farmer_id: 'F-1',
    cooperative_id: 'COOP-1',
    weight_kg: 60,
    grade: 'screen18',
    moisture_pct: 12.5,
    collection_point_gps: { lat: 1.08, lng: 34.17 },
    collector_agent_id: 'AG-1',
    ...over,
  });
  const submit = (body: unknown) => call(submitBatchHandler as Handler, { path: '/batch/submit', caller: ADMIN, body });

  it.each([
    ['moisture_pct 1.5e-300 (DynamoDB: Number underflow)', batchBody({ moisture_pct: 1.5e-300 }), 'moisture_pct', 'VALIDATION_ERROR'],
    [
      'collection_point_gps.lat 1.5e-300',
      batchBody({ collection_point_gps: { lat: 1.5e-300, lng: 34.17 } }),
      'collection_point_gps.lat',
      'VALIDATION_ERROR',
    ],
    ['weight_kg with 4 decimals', batchBody({ weight_kg: 60.1234 }), 'weight_kg', 'VALIDATION_ERROR'],
    ['moisture_pct with 3 decimals', batchBody({ moisture_pct: 12.345 }), 'moisture_pct', 'VALIDATION_ERROR'],
    [
      'a GPS longitude with 8 decimals',
      batchBody({ collection_point_gps: { lat: 1.08, lng: 34.12345678 } }),
      'collection_point_gps.lng',
      'VALIDATION_ERROR',
    ],
  ])('answers 400 for %s, without touching DynamoDB', async (_what, body, path, code) => {
    // Act
    const res = await submit(body);

    // Assess
    expectErrorEnvelope(res, 400, code);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path })]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it.each([
    ['weight_kg', '1e400', 'WEIGHT_OUT_OF_RANGE'],
    ['moisture_pct', '1e400', 'VALIDATION_ERROR'],
    ['moisture_pct', '-1e400', 'VALIDATION_ERROR'],
    ['moisture_pct', '1e-400', 'VALIDATION_ERROR'],
  ])('answers 400 for %s written as %s in the JSON text', async (field, literal, code) => {
    // Prepare: JSON.parse turns 1e400 into Infinity and 1e-400 into 0; -0 and 0 are fine values.
    const raw = JSON.stringify(batchBody({ [field]: 424242 })).replace('424242', literal);

    // Act
    const res = await submit(raw);

    // Assess
    if (literal === '1e-400') {
      // 0 % moisture is a legal value: it is stored as 0, not as an underflowing number.
      expect(JSON.parse(raw)[field]).toBe(0);
      expect(v.safeParse(SubmitBatchSchema, JSON.parse(raw)).success).toBe(true);
      return;
    }
    expectErrorEnvelope(res, 400, code);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: field })]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('accepts the most precise values each field allows', () => {
    expect(
      v.safeParse(
        SubmitBatchSchema,
        batchBody({ weight_kg: 60.125, moisture_pct: 12.25, collection_point_gps: { lat: -0.1234567, lng: 34.1234567 } }),
      ).success,
    ).toBe(true);
    expect(
      v.safeParse(FarmerPayoutSchema, {
        farmer_id: 'F-1',
        batch_id: 'BATCH-2025-000001',
        amount_usdc: 12.345678,
        reason: 'NET_COFFEE_PAYMENT',
        cooperative_id: 'COOP-1',
      }).success,
    ).toBe(true);
  });

  it.each([
    [
      'amount_usdc with 7 decimals',
      FarmerPayoutSchema,
      { farmer_id: 'F-1', batch_id: 'BATCH-2025-000001', amount_usdc: 1.0000001, reason: 'NET_COFFEE_PAYMENT', cooperative_id: 'COOP-1' },
      'amount_usdc',
    ],
    [
      'amount_usdc 1e-300',
      FarmerPayoutSchema,
      { farmer_id: 'F-1', batch_id: 'BATCH-2025-000001', amount_usdc: 1e-300, reason: 'NET_COFFEE_PAYMENT', cooperative_id: 'COOP-1' },
      'amount_usdc',
    ],
    ['outturn_kg 1e300', MilledEvidenceSchema, { mill_id: 'M-1', outturn_kg: 1e300 }, 'outturn_kg'],
    [
      'price_usd_per_kg 1e-300',
      CreatePurchaseOrderSchema,
      { batch_ids: ['BATCH-2025-000001'], buyer: 'B', price_usd_per_kg: 1e-300 },
      'price_usd_per_kg',
    ],
    [
      'area_ha 1e-300',
      RegisterFarmerSchema,
      { farmer_id: 'F-1', full_name: 'A', cooperative_id: 'C', district: 'D', farm: { gps: { lat: 1, lng: 34 }, area_ha: 1e-300 } },
      'farm.area_ha',
    ],
    [
      'a polygon coordinate with 8 decimals',
      RegisterFarmerSchema,
      {
        farmer_id: 'F-1',
        full_name: 'A',
        cooperative_id: 'C',
        district: 'D',
        farm: {
          gps: { lat: 1, lng: 34 },
          area_ha: 5,
          polygon: {
            type: 'Polygon',
            coordinates: [
              [
                [34.1, 1.1],
                [34.2, 1.1],
                [34.2, 1.12345678],
                [34.1, 1.1],
              ],
            ],
          },
        },
      },
      'farm.polygon.coordinates.0.2',
    ],
    [
      'a polygon latitude over 90',
      RegisterFarmerSchema,
      {
        farmer_id: 'F-1',
        full_name: 'A',
        cooperative_id: 'C',
        district: 'D',
        farm: {
          gps: { lat: 1, lng: 34 },
          area_ha: 5,
          polygon: {
            type: 'Polygon',
            coordinates: [
              [
                [34.1, 1.1],
                [34.2, 1.1],
                [34.2, 95],
                [34.1, 1.1],
              ],
            ],
          },
        },
      },
      'farm.polygon.coordinates.0.2',
    ],
    [
      'a batch id of 3,000 digits',
      CreatePurchaseOrderSchema,
      { batch_ids: [`BATCH-2025-${'1'.repeat(3000)}`], buyer: 'B', price_usd_per_kg: 4.5 },
      'batch_ids.0',
    ],
  ])('rejects %s', (_what, schema: v.GenericSchema, input, path) => {
    // Act
    const r = v.safeParse(schema, input, { abortEarly: false });

    // Assess
    expect(r.success).toBe(false);
    expect(r.issues?.map((i) => v.getDotPath(i))).toContain(path);
  });

  it('decimalPlaces counts what JSON wrote, exponent forms included', () => {
    expect([12.5, 1200, 0, -3.25, 1e-7, 1.5e-300, 1e21, 0.1 + 0.2].map(decimalPlaces)).toEqual([1, 0, 0, 2, 7, 301, 0, 17]);
    expect(decimalPlaces(Infinity)).toBe(Infinity);
    expect(decimalPlaces(NaN)).toBe(Infinity);
    const two = v.pipe(v.number(), maxDecimals(2));
    expect(v.safeParse(two, 1.25).success).toBe(true);
    expect(v.safeParse(two, 1.255).issues?.[0]).toMatchObject({ type: 'max_decimals', message: 'must have at most 2 decimal places' });
  });

  it('renders maxDecimals as the x-max-decimals extension (not multipleOf) in the OpenAPI request bodies', () => {
    // Act
    const doc = openApiDocument('http://x') as unknown as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: { 'application/json': { schema: { properties: Record<string, unknown> } } } } }>
      >;
    };

    // Assess
    const submitSchema = doc.paths['/batch/submit']!.post!.requestBody!.content['application/json'].schema;
    expect(submitSchema.properties.weight_kg).toMatchObject({ type: 'number', minimum: 1, maximum: 5000, 'x-max-decimals': 3 });
    expect(submitSchema.properties.weight_kg).not.toHaveProperty('multipleOf');
    expect(submitSchema.properties.moisture_pct).toMatchObject({ 'x-max-decimals': 2 });
  });
});
