import * as v from 'valibot';
import { DomainError } from '../../shared/domain/errors';
import { httpHandler } from '../../shared/http/handler';
import { logger } from '../../shared/runtime/logger';
import {
  ADMIN,
  agent,
  apiEvent,
  coop,
  expectErrorEnvelope,
  lambdaContext,
  mfi,
  parse,
  ULID_RE,
  type EventInput,
} from './support/api-event';

const DOCS = 'https://api.example.test/docs';
const MAX_BODY = 256;

const BodySchema = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1)),
  weight_kg: v.pipe(v.number(), v.minValue(1, 'must be at least 1 kg'), v.maxValue(5000, 'must be at most 5000 kg')),
  note: v.optional(v.string()),
});

const seen: Array<{ body: unknown; caller: string; requestId: string }> = [];

/** A tiny route: COOPERATIVE or ADMIN, JSON body, weight rule mapped to WEIGHT_OUT_OF_RANGE. */
const echo = httpHandler(
  {
    roles: ['COOPERATIVE', 'ADMIN'],
    body: BodySchema,
    issueCodes: [{ path: 'weight_kg', types: ['min_value', 'max_value'], code: 'WEIGHT_OUT_OF_RANGE' }],
    maxBodyBytes: MAX_BODY,
  },
  async ({ body, caller, requestId }) => {
    seen.push({ body, caller: caller.sub, requestId });
    return { status: 201, body: { ok: true, name: body.name }, headers: { location: '/things/1' } };
  },
);

const SECRET_TEXT = 'password=hunter2 host=10.0.0.5';
const crashing = httpHandler({ roles: ['ADMIN'] }, async () => {
  throw new Error(`connection failed: ${SECRET_TEXT}`);
});

const rateLimited = httpHandler({ roles: ['ADMIN'] }, async () => {
  throw new DomainError('RATE_LIMITED', 'Slow down.', { retryAfterSeconds: 1 });
});

const publicRoute = httpHandler({ public: true }, async ({ caller }) => ({ status: 200, body: { role: caller.role, sub: caller.sub } }));

async function call(h: typeof echo | typeof crashing, input: EventInput) {
  return parse(await h(apiEvent(input), lambdaContext()));
}

const valid = { name: 'lot A', weight_kg: 60 };

beforeAll(() => {
  logger.setLogLevel('SILENT');
  process.env.DOCS_BASE_URL = DOCS;
});

beforeEach(() => {
  seen.length = 0;
});

describe('httpHandler: success', () => {
  it('runs the route with the parsed body and caller and answers with a ULID x-request-id', async () => {
    // Act
    const res = await call(echo, { caller: coop('COOP-1'), body: valid });

    // Assess
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ ok: true, name: 'lot A' });
    expect(res.headers['x-request-id']).toMatch(ULID_RE);
    expect(res.headers.location).toBe('/things/1');
    expect(res.headers['content-type']).toBe('application/json');
    expect(seen).toEqual([{ body: valid, caller: 'coop-user-COOP-1', requestId: res.headers['x-request-id'] }]);
  });

  it('accepts a JSON content type with a charset parameter', async () => {
    // Act
    const res = await call(echo, { caller: ADMIN, body: valid, headers: { 'content-type': 'application/json; charset=utf-8' } });

    // Assess
    expect(res.status).toBe(201);
  });

  it('gives every request its own request id', async () => {
    // Act
    const a = await call(echo, { caller: ADMIN, body: valid });
    const b = await call(echo, { caller: ADMIN, body: valid });

    // Assess
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('lets a public route run without an authorizer context', async () => {
    // Act
    const res = await call(publicRoute, { method: 'GET', caller: null });

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.sub).toBe('anonymous');
  });

  it('gives a public route an anonymous caller with no role, even when a token context is present', async () => {
    // Act
    const res = await call(publicRoute, { method: 'GET', caller: ADMIN });

    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ role: null, sub: 'anonymous' });
  });
});

describe('httpHandler: authentication and roles', () => {
  it('answers 401 UNAUTHORIZED without an authorizer context', async () => {
    // Act
    const res = await call(echo, { caller: null, body: valid });

    // Assess
    expectErrorEnvelope(res, 401, 'UNAUTHORIZED');
    expect(seen).toEqual([]);
  });

  it('answers 401 UNAUTHORIZED for an authorizer context with an unknown role', async () => {
    // Prepare
    const event = apiEvent({ body: valid });
    event.requestContext.authorizer = { sub: 'x', role: 'ROOT' };

    // Act
    const res = parse(await echo(event, lambdaContext()));

    // Assess
    expectErrorEnvelope(res, 401, 'UNAUTHORIZED');
  });

  it.each([
    ['AGENT', agent('COOP-1')],
    ['MFI', mfi('MFI-1')],
  ])(
    'answers 403 INSUFFICIENT_PERMISSIONS to %s before looking at a malformed body (docs/api/conventions.md#http-and-errors order)',
    async (_role, caller) => {
      // Act
      const res = await call(echo, { caller, body: '{"name": ' });

      // Assess
      expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
      expect(seen).toEqual([]);
    },
  );

  it('answers 403 to a wrong role before checking the content type or size', async () => {
    // Act
    const wrongType = await call(echo, { caller: agent('COOP-1'), body: 'x', headers: { 'content-type': 'text/plain' } });
    const tooBig = await call(echo, { caller: agent('COOP-1'), body: { ...valid, note: 'x'.repeat(MAX_BODY) } });

    // Assess
    expectErrorEnvelope(wrongType, 403, 'INSUFFICIENT_PERMISSIONS');
    expectErrorEnvelope(tooBig, 403, 'INSUFFICIENT_PERMISSIONS');
  });
});

describe('httpHandler: body checks', () => {
  it('answers 415 UNSUPPORTED_MEDIA_TYPE for text/plain', async () => {
    // Act
    const res = await call(echo, { caller: ADMIN, body: JSON.stringify(valid), headers: { 'content-type': 'text/plain' } });

    // Assess
    expectErrorEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(seen).toEqual([]);
  });

  it('answers 400 VALIDATION_ERROR for malformed JSON', async () => {
    // Act
    const res = await call(echo, { caller: ADMIN, body: '{"name": "lot A", "weight_kg": 60' });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(/not valid JSON/);
  });

  it.each([
    ['no body', undefined],
    ['an empty body', ''],
    ['a whitespace body', '   \n'],
  ])('answers 400 VALIDATION_ERROR for %s', async (_what, body) => {
    // Act
    const res = await call(echo, { caller: ADMIN, body });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(seen).toEqual([]);
  });

  it.each([['null'], ['42'], ['"text"'], ['[1,2]'], ['true']])('answers 400 (never 500) for the JSON value %s', async (body) => {
    // Act
    const res = await call(echo, { caller: ADMIN, body });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
  });

  it('answers 400 naming an unknown field', async () => {
    // Act
    const res = await call(echo, { caller: ADMIN, body: { ...valid, wieght: 61 } });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([{ path: 'wieght', message: expect.stringMatching(/unknown field/) }]);
  });

  it('lists every invalid field in details', async () => {
    // Act
    const res = await call(echo, { caller: ADMIN, body: { name: '', weight_kg: 'heavy' } });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect((res.body.error.details as Array<{ path: string }>).map((d) => d.path).sort()).toEqual(['name', 'weight_kg']);
  });

  it.each([[0], [0.99], [5000.01], [-5]])('maps weight_kg %p to 400 WEIGHT_OUT_OF_RANGE via issueCodes', async (weight) => {
    // Act
    const res = await call(echo, { caller: ADMIN, body: { ...valid, weight_kg: weight } });

    // Assess
    expectErrorEnvelope(res, 400, 'WEIGHT_OUT_OF_RANGE');
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'weight_kg' })]);
  });

  it('keeps VALIDATION_ERROR for a weight of the wrong type (issueCodes only maps range issues)', async () => {
    // Act
    const res = await call(echo, { caller: ADMIN, body: { ...valid, weight_kg: '60' } });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over maxBodyBytes', async () => {
    // Prepare
    const body = JSON.stringify({ ...valid, note: 'x'.repeat(MAX_BODY) });

    // Act
    const res = await call(echo, { caller: ADMIN, body });

    // Assess
    expectErrorEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(seen).toEqual([]);
  });

  it('accepts a body of exactly maxBodyBytes', async () => {
    // Prepare
    const base = JSON.stringify({ ...valid, note: '' });
    const body = JSON.stringify({ ...valid, note: 'x'.repeat(MAX_BODY - Buffer.byteLength(base)) });

    // Act
    const res = await call(echo, { caller: ADMIN, body });

    // Assess
    expect(Buffer.byteLength(body)).toBe(MAX_BODY);
    expect(res.status).toBe(201);
  });

  it('counts the limit in bytes, not characters', async () => {
    // Prepare: 100 characters, 300 bytes in UTF-8
    const body = JSON.stringify({ ...valid, note: 'ü'.repeat(50) + '€'.repeat(50) });

    // Act
    const res = await call(echo, { caller: ADMIN, body });

    // Assess
    expect(body.length).toBeLessThan(MAX_BODY);
    expectErrorEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('httpHandler: errors from the route', () => {
  it('turns a plain Error into 500 INTERNAL_ERROR without leaking its text', async () => {
    // Act
    const raw = await crashing(apiEvent({ method: 'GET', caller: ADMIN }), lambdaContext());
    const res = parse(raw);

    // Assess
    expectErrorEnvelope(res, 500, 'INTERNAL_ERROR');
    expect(raw.body).not.toContain('hunter2');
    expect(raw.body).not.toContain('10.0.0.5');
    expect(raw.body).not.toContain('connection failed');
    expect(res.body.error.details).toBeUndefined();
  });

  it('sends Retry-After for a DomainError that says how long to wait (e.g. 429)', async () => {
    // Act
    const res = parse(await rateLimited(apiEvent({ method: 'GET', caller: ADMIN }), lambdaContext()));

    // Assess
    expectErrorEnvelope(res, 429, 'RATE_LIMITED');
    expect(res.headers['Retry-After'] ?? res.headers['retry-after']).toBe('1');
  });
});
