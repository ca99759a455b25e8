import {
  ConditionalCheckFailedException,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { handler as createCooperative } from '../../functions/create-cooperative/handler';
import { handler as getBatchHandler } from '../../functions/get-batch/handler';
import { handler as registerFarmer } from '../../functions/register-farmer/handler';
import { handler as submitBatchHandler } from '../../functions/submit-batch/handler';
import { handler as updateCooperative } from '../../functions/update-cooperative/handler';
import { BatchRepository } from '../../shared/adapters/dynamodb/batch-repo';
import { RegistryRepository } from '../../shared/adapters/dynamodb/registry-repo';
import type { Caller } from '../../shared/auth/claims';
import { DomainError } from '../../shared/domain/errors';
import type { WorkQueue } from '../../shared/domain/ports/messaging';
import type { Cooperative, Farmer } from '../../shared/domain/records';
import { submitBatch } from '../../shared/use-cases/batches';
import { ADMIN, agent, coop, expectErrorEnvelope, mfi } from './support/api-event';

import {
  batchBody,
  call,
  cooperativeRecord,
  farmerBody,
  farmerRecord,
  newCooperativeBody,
  stored,
  storedBatch,
  useHandlerMocks,
} from './support/handler-fixtures';

const { ddb } = useHandlerMocks();

describe('POST /cooperatives', () => {
  it('creates the cooperative for ADMIN: 201, unique put, manager phone normalised and masked in the response', async () => {
    // Prepare
    ddb.on(PutCommand).resolves({});

    // Act
    const res = await call(createCooperative, { path: '/cooperatives', caller: ADMIN, body: newCooperativeBody() });

    // Assess
    expect(res.status).toBe(201);
    const puts = ddb.commandCalls(PutCommand);
    expect(puts).toHaveLength(1);
    const input = puts[0]!.args[0].input;
    expect(input.TableName).toBe('t');
    expect(input.ConditionExpression).toBe('attribute_not_exists(PK)');
    expect(input.Item).toEqual(expect.objectContaining({ PK: 'COOP#COOP-7', SK: 'META', cooperative_id: 'COOP-7' }));
    expect((input.Item as Cooperative).manager.phone).toBe('+256772123456');
    expect(res.body.manager.phone).toBe('+256 7•• ••• 456');
    expect(res.body).not.toHaveProperty('PK');
    expect(res.headers.location).toBe('/cooperatives/COOP-7');
  });

  it('answers 409 COOPERATIVE_ALREADY_EXISTS when the conditional put fails', async () => {
    // Prepare
    ddb.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));

    // Act
    const res = await call(createCooperative, { path: '/cooperatives', caller: ADMIN, body: newCooperativeBody() });

    // Assess
    expectErrorEnvelope(res, 409, 'COOPERATIVE_ALREADY_EXISTS');
  });

  it('answers 400 naming manager.phone for a landline manager phone, without writing', async () => {
    // Prepare
    const body = { ...newCooperativeBody(), manager: { name: 'Okello', email: 'okello@example.org', phone: '+256414123456' } };

    // Act
    const res = await call(createCooperative, { path: '/cooperatives', caller: ADMIN, body });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'manager.phone' })]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 403 to a COOPERATIVE token without touching the table', async () => {
    // Act
    const res = await call(createCooperative, { path: '/cooperatives', caller: coop('COOP-7'), body: newCooperativeBody() });

    // Assess
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
    expect(ddb.calls()).toHaveLength(0);
  });
});

// ------------------------------------------------------------------ PATCH /cooperatives/{id}

describe('PATCH /cooperatives/{id}', () => {
  it('answers 400 VALIDATION_ERROR for an empty change set, without updating', async () => {
    // Act
    const res = await call(updateCooperative, {
      method: 'PATCH',
      path: '/cooperatives/COOP-1',
      pathParameters: { id: 'COOP-1' },
      caller: ADMIN,
      body: {},
    });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(/at least one field/);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('answers 404 COOPERATIVE_NOT_FOUND when the conditional update fails', async () => {
    // Prepare
    ddb.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'x', $metadata: {} }));

    // Act
    const res = await call(updateCooperative, {
      method: 'PATCH',
      path: '/cooperatives/NOPE',
      pathParameters: { id: 'NOPE' },
      caller: ADMIN,
      body: { licence_status: 'SUSPENDED' },
    });

    // Assess
    expectErrorEnvelope(res, 404, 'COOPERATIVE_NOT_FOUND');
    expect(ddb.commandCalls(UpdateCommand)[0]!.args[0].input.ConditionExpression).toBe('attribute_exists(PK)');
  });
});

// ------------------------------------------------------------------ GET /payments/{id}

describe('POST /farmers/register', () => {
  it('answers 400 naming phone for a Ugandan landline (+256414123456), without storing the farmer', async () => {
    // Prepare
    ddb
      .on(GetCommand, { Key: { PK: 'COOP#COOP-1', SK: 'META' } })
      .resolves({ Item: stored('COOP#COOP-1', 'COOPERATIVE', cooperativeRecord()) });

    // Act
    const res = await call(registerFarmer, {
      path: '/farmers/register',
      caller: coop('COOP-1'),
      body: farmerBody({ phone: '+256414123456' }),
    });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'phone' })]);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('answers 403 to a COOPERATIVE token registering into another cooperative, without touching the table', async () => {
    // Act
    const res = await call(registerFarmer, { path: '/farmers/register', caller: coop('COOP-2'), body: farmerBody() });

    // Assess
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 403 to an MFI token', async () => {
    // Act
    const res = await call(registerFarmer, { path: '/farmers/register', caller: mfi('MFI-1'), body: farmerBody() });

    // Assess
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
  });
});

// ------------------------------------------------------------------ POST /batch/submit

describe('POST /batch/submit (handler: checks that precede the ledger)', () => {
  const submit = (caller: Caller, body: unknown) => call(submitBatchHandler, { path: '/batch/submit', caller, body });

  it.each([[0], [0.5], [5000.5], [-1]])('answers 400 WEIGHT_OUT_OF_RANGE for weight_kg %p', async (weight) => {
    // Act
    const res = await submit(coop('COOP-1'), batchBody({ weight_kg: weight }));

    // Assess
    expectErrorEnvelope(res, 400, 'WEIGHT_OUT_OF_RANGE');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 INVALID_GRADE for grade "AA"', async () => {
    // Act
    const res = await submit(coop('COOP-1'), batchBody({ grade: 'AA' }));

    // Assess
    expectErrorEnvelope(res, 400, 'INVALID_GRADE');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 403 to an MFI token', async () => {
    // Act
    const res = await submit(mfi('MFI-1'), batchBody());

    // Assess
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
  });
});

describe('submitBatch use case: 403/404/422 before any ledger write, counter or queue use', () => {
  const untouchable = (what: string) => () => Promise.reject(new Error(`${what} must not be reached`));
  const queue: WorkQueue<never> = { send: untouchable('queue') };
  const deps = () => ({
    registry: new RegistryRepository(),
    batches: new BatchRepository(),
    custody: { getLedgerTx: untouchable('ledger write'), attachJob: untouchable('ledger write') } as never,
    ledgerQueue: queue,
    payoutQueue: queue,
    now: () => new Date('2025-06-15T12:00:00.000Z'),
  });

  function given(farmer: Farmer | null, cooperative: Cooperative | null): void {
    ddb.on(GetCommand, { Key: { PK: 'FARMER#F-1', SK: 'META' } }).resolves(farmer ? { Item: stored('FARMER#F-1', 'FARMER', farmer) } : {});
    ddb
      .on(GetCommand, { Key: { PK: 'COOP#COOP-1', SK: 'META' } })
      .resolves(cooperative ? { Item: stored('COOP#COOP-1', 'COOPERATIVE', cooperative) } : {});
  }

  async function codeOf(caller: Caller, body = batchBody()): Promise<string> {
    const err = await submitBatch(deps(), caller, body as Parameters<typeof submitBatch>[2], {
      respondAsync: false,
      receiptWaitMs: 0,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    return (err as DomainError).code;
  }

  const noWrites = () => {
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0); // the batch counter
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
  };

  it('refuses a cooperative_id of another cooperative (403) without reading anything', async () => {
    // Act
    const code = await codeOf(coop('COOP-2'));

    // Assess
    expect(code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('refuses an AGENT of another cooperative (403)', async () => {
    // Act + Assess
    expect(await codeOf(agent('COOP-9'))).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('refuses a farmer missing from the registry (404 FARMER_NOT_REGISTERED)', async () => {
    // Prepare
    given(null, cooperativeRecord());

    // Act
    const code = await codeOf(coop('COOP-1'));

    // Assess
    expect(code).toBe('FARMER_NOT_REGISTERED');
    noWrites();
  });

  it('refuses a farmer registered with another cooperative (404 FARMER_NOT_REGISTERED)', async () => {
    // Prepare
    given(farmerRecord({ cooperative_id: 'COOP-2' }), cooperativeRecord());

    // Act + Assess
    expect(await codeOf(ADMIN)).toBe('FARMER_NOT_REGISTERED');
    noWrites();
  });

  it.each<[string, Partial<Cooperative>]>([
    ['EXPIRED', { licence_status: 'EXPIRED' }],
    ['SUSPENDED', { licence_status: 'SUSPENDED' }],
    ['ACTIVE but past its expiry date', { licence_status: 'ACTIVE', licence_expires_at: '2025-06-14' }],
  ])('refuses a cooperative whose licence is %s (422 COOPERATIVE_NOT_ACTIVE)', async (_what, licence) => {
    // Prepare
    given(farmerRecord(), cooperativeRecord(licence));

    // Act
    const code = await codeOf(coop('COOP-1'));

    // Assess
    expect(code).toBe('COOPERATIVE_NOT_ACTIVE');
    noWrites();
  });

  it('refuses a farm flagged by the forest check (422 GFW_CHECK_FAILED)', async () => {
    // Prepare
    given(farmerRecord({ gfw_status: 'FLAGGED' }), cooperativeRecord());

    // Act
    const code = await codeOf(agent('COOP-1'));

    // Assess
    expect(code).toBe('GFW_CHECK_FAILED');
    noWrites();
  });
});

// ------------------------------------------------------------------ POST /api/webhooks/payout-provider

describe('DynamoDB unavailable or throttled: 503 AUDIT_LOG_UNAVAILABLE with Retry-After', () => {
  const getBatch = (id = 'BATCH-2025-000042') =>
    call(getBatchHandler, { method: 'GET', path: `/batch/${id}`, pathParameters: { id }, caller: coop('COOP-1') });
  const sdkMeta = { $metadata: { httpStatusCode: 400, attempts: 3 } };

  it.each([
    [
      'a throttled GetItem (ProvisionedThroughputExceededException)',
      () =>
        new ProvisionedThroughputExceededException({
          message: 'The level of configured provisioned throughput for the table was exceeded.',
          ...sdkMeta,
        }),
    ],
    ['ThrottlingException', () => new ThrottlingException({ message: 'Rate of requests exceeds the allowed throughput.', ...sdkMeta })],
    [
      'RequestLimitExceeded',
      () => new RequestLimitExceeded({ message: 'Throughput exceeds the current throughput limit for your account.', ...sdkMeta }),
    ],
    ['InternalServerError', () => new InternalServerError({ message: 'Internal server error', $metadata: { httpStatusCode: 500 } })],
    ['a client timeout (TimeoutError)', () => Object.assign(new Error('Connection timed out after 3000 ms'), { name: 'TimeoutError' })],
    [
      'a refused connection (ECONNREFUSED)',
      () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' }),
    ],
  ])('GET /batch/{id} answers 503 with Retry-After and the envelope for %s', async (_what, error) => {
    // Prepare
    ddb.on(GetCommand).rejects(error());

    // Act
    const res = await getBatch();

    // Assess
    expectErrorEnvelope(res, 503, 'AUDIT_LOG_UNAVAILABLE');
    expect(res.headers['Retry-After'] ?? res.headers['retry-after']).toBe('5');
    expect(res.raw).not.toMatch(/provisioned|127\.0\.0\.1|Internal server error/i);
  });

  it('POST /cooperatives answers 503 AUDIT_LOG_UNAVAILABLE when the put is throttled', async () => {
    // Prepare
    ddb.on(PutCommand).rejects(new ProvisionedThroughputExceededException({ message: 'throttled', ...sdkMeta }));

    // Act
    const res = await call(createCooperative, { path: '/cooperatives', caller: ADMIN, body: newCooperativeBody() });

    // Assess
    expectErrorEnvelope(res, 503, 'AUDIT_LOG_UNAVAILABLE');
    expect(res.headers['Retry-After'] ?? res.headers['retry-after']).toBe('5');
  });

  it('leaves business outcomes alone: a failed condition is still 409, an unknown error still 500', async () => {
    // Prepare
    ddb
      .on(PutCommand)
      .rejectsOnce(new ConditionalCheckFailedException({ message: 'The conditional request failed', ...sdkMeta }))
      .rejectsOnce(new Error('something unexpected'));

    // Act
    const duplicate = await call(createCooperative, { path: '/cooperatives', caller: ADMIN, body: newCooperativeBody() });
    const unknown = await call(createCooperative, { path: '/cooperatives', caller: ADMIN, body: newCooperativeBody() });

    // Assess
    expectErrorEnvelope(duplicate, 409, 'COOPERATIVE_ALREADY_EXISTS');
    expectErrorEnvelope(unknown, 500, 'INTERNAL_ERROR');
    expect(duplicate.headers).not.toHaveProperty('Retry-After');
  });

  it('still answers 200 for GET /batch/{id} when DynamoDB answers', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: storedBatch() });

    // Act
    const res = await getBatch();

    // Assess
    expect(res.status).toBe(200);
  });
});
