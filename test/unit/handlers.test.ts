import { randomBytes } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { Webhook } from 'standardwebhooks';
import { handler as createCooperative } from '../../functions/create-cooperative/handler';
import { handler as getBatchHandler } from '../../functions/get-batch/handler';
import { handler as getPayment } from '../../functions/get-payment/handler';
import { handler as listPayments } from '../../functions/list-payments/handler';
import { handler as payoutWebhook } from '../../functions/payout-provider-webhook/handler';
import { handler as registerFarmer } from '../../functions/register-farmer/handler';
import { handler as submitBatchHandler } from '../../functions/submit-batch/handler';
import { handler as updateCooperative } from '../../functions/update-cooperative/handler';
import { BatchRepository } from '../../shared/adapters/dynamodb/batch-repo';
import { RegistryRepository } from '../../shared/adapters/dynamodb/registry-repo';
import type { Caller } from '../../shared/auth/claims';
import { DomainError } from '../../shared/domain/errors';
import type { WorkQueue } from '../../shared/domain/ports/messaging';
import type { Cooperative, Farmer, Payout } from '../../shared/domain/records';
import { logger } from '../../shared/runtime/logger';
import { submitBatch } from '../../shared/use-cases/batches';
import { ADMIN, agent, apiEvent, coop, expectErrorEnvelope, lambdaContext, mfi, parse, type EventInput } from './support/api-event';

const ddb = mockClient(DynamoDBDocumentClient);
const sfn = mockClient(SFNClient);

const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

beforeAll(() => {
  logger.setLogLevel('SILENT');
  process.env.TABLE_NAME = 't';
  process.env.DOCS_BASE_URL = 'http://x/docs';
  process.env.AWS_REGION = 'eu-west-1';
  process.env.PAYOUT_WEBHOOK_SECRET = WEBHOOK_SECRET;
  for (const name of ['LEDGER_SIGNER_KEY', 'LEDGER_SIGNER_KEY_SECRET_ARN', 'LEDGER_RPC_URL', 'BATCH_TOKEN_ADDRESS', 'TRACE_LOG_ADDRESS'])
    delete process.env[name];
});

beforeEach(() => {
  ddb.reset();
  sfn.reset();
  ddb.onAnyCommand().rejects(new Error('unexpected DynamoDB command in this test'));
  sfn.onAnyCommand().rejects(new Error('unexpected Step Functions command in this test'));
});

type Handler = (
  event: ReturnType<typeof apiEvent>,
  context: ReturnType<typeof lambdaContext>,
) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

async function call(h: Handler, input: EventInput) {
  const raw = await h(apiEvent(input), lambdaContext());
  return { ...parse(raw), raw: raw.body };
}

// ------------------------------------------------------------------ fixtures

const cooperativeRecord = (over: Partial<Cooperative> = {}): Cooperative => ({
  cooperative_id: 'COOP-1',
  name: 'Bugisu Farmers',
  district: 'Mbale',
  licence_status: 'ACTIVE',
  licence_expires_at: '2099-12-31',
  manager: { name: 'Grace', email: 'grace@example.org', phone: '+256772123456' },
  prices_ugx_per_kg: { screen18: 7000, screen15: 6500, FAQ: 6000, PB: 6800 },
  export_premium_ugx_per_kg: 500,
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-01T00:00:00.000Z',
  ...over,
});

const farmerRecord = (over: Partial<Farmer> = {}): Farmer => ({
  farmer_id: 'F-1',
  full_name: 'Jane Nabwire',
  cooperative_id: 'COOP-1',
  phone: '+256772000111',
  district: 'Mbale',
  farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1.5 },
  gfw_status: 'CLEAR',
  registered_at: '2025-01-01T00:00:00.000Z',
  registered_by: 'admin-1',
  ...over,
});

const stored = <T extends object>(pk: string, entity: string, record: T) => ({ PK: pk, SK: 'META', entity, ...record });

const PAYOUT_ID = 'PAY-2025-000042-01';
const payoutRecord: Payout = {
  payment_id: PAYOUT_ID,
  payment_type: 'FARMER_PAYOUT',
  batch_id: 'BATCH-2025-000042',
  farmer_id: 'F-1',
  cooperative_id: 'COOP-1',
  reason: 'NET_COFFEE_PAYMENT',
  status: 'COMPLETED',
  amount_usd_micro: 12_345_678,
  amount_ugx: 45_678,
  estimated_ugx: 45_600,
  exchange_rate: '3700.25',
  quote_id: 'q-1',
  phone: '+256772000111',
  recipient_name: 'Jane Nabwire',
  attempt: 1,
  retry_count: 0,
  provider_order_id: 'ord-1',
  task_token: 'secret-task-token',
  task_token_attempt: 1,
  mobile_money_transaction_id: 'MM-1',
  created_at: '2025-03-01T10:00:00.000Z',
  updated_at: '2025-03-01T10:00:40.000Z',
  completed_at: '2025-03-01T10:00:40.000Z',
  elapsed_seconds: 40,
  created_by: 'coop-user-COOP-1',
};
const storedPayout = {
  ...stored(`PAYMENT#${PAYOUT_ID}`, 'PAYOUT', payoutRecord),
  GSI1PK: 'PAYMENTS#BATCH-2025-000042',
  GSI1SK: `${payoutRecord.created_at}#${PAYOUT_ID}`,
};

const storedBatch = (cooperativeId = 'COOP-1') => ({
  ...stored('BATCH#BATCH-2025-000042', 'BATCH', {
    batch_id: 'BATCH-2025-000042',
    cooperative_id: cooperativeId,
    farmer_id: 'F-1',
    mint_status: 'CONFIRMED',
    stage: 'DELIVERED',
  }),
  GSI1PK: `COOP#${cooperativeId}`,
  GSI1SK: 'BATCH#BATCH-2025-000042',
});

const newCooperativeBody = () => ({
  cooperative_id: 'COOP-7',
  name: 'Sipi Falls Growers',
  district: 'Kapchorwa',
  licence_status: 'ACTIVE',
  licence_expires_at: '2030-06-30',
  manager: { name: 'Okello', email: 'okello@example.org', phone: '  +256772123456 ' },
  prices_ugx_per_kg: { screen18: 7000, screen15: 6500, FAQ: 6000, PB: 6800 },
  export_premium_ugx_per_kg: 300,
});

const farmerBody = (over: Record<string, unknown> = {}) => ({
  farmer_id: 'F-9',
  full_name: 'Peter Wandera',
  cooperative_id: 'COOP-1',
  phone: '+256772000999',
  district: 'Mbale',
  farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1.2 },
  ...over,
});

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

// ------------------------------------------------------------------ POST /cooperatives

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

describe('GET /payments/{id}', () => {
  const get = (caller: Caller, id = PAYOUT_ID) =>
    call(getPayment, { method: 'GET', path: `/payments/${id}`, pathParameters: { id }, caller });

  it('shows ADMIN the payout record without keys, with amount_usdc from micro-USDC and no phone', async () => {
    // Prepare
    ddb.on(GetCommand, { Key: { PK: `PAYMENT#${PAYOUT_ID}`, SK: 'META' } }).resolves({ Item: storedPayout });

    // Act
    const res = await get(ADMIN);

    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      payment_id: PAYOUT_ID,
      payment_type: 'FARMER_PAYOUT',
      status: 'COMPLETED',
      updated_at: expect.any(String),
      settled_at: null,
      amount_usdc: 12.345678,
      created_at: '2025-03-01T10:00:00.000Z',
      completed_at: '2025-03-01T10:00:40.000Z',
      farmer_id: 'F-1',
      batch_id: 'BATCH-2025-000042',
      cooperative_id: 'COOP-1',
      amount_ugx: 45_678,
      exchange_rate: 3700.25,
      provider_order_id: 'ord-1',
      mobile_money_transaction_id: 'MM-1',
      reason: 'NET_COFFEE_PAYMENT',
      elapsed_seconds: 40,
      retry_count: 0,
      settlement_channel: 'MOBILE_MONEY',
      cash_receipt: null,
    });
    for (const leaked of ['PK', 'SK', 'GSI1PK', 'GSI1SK', 'entity', 'phone', 'task_token', 'recipient_name'])
      expect(res.body).not.toHaveProperty(leaked);
    expect(res.raw).not.toContain('772000111');
    expect(res.raw).not.toContain('secret-task-token');
  });

  it("shows a COOPERATIVE token its own cooperative's payout", async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: storedPayout });

    // Act
    const res = await get(coop('COOP-1'));

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.payment_id).toBe(PAYOUT_ID);
  });

  it('answers 403 to a COOPERATIVE token of another cooperative', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: storedPayout });

    // Act
    const res = await get(coop('COOP-2'));

    // Assess
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
    expect(res.raw).not.toContain('45678');
  });

  it('answers 403 to an MFI token (an MFI sees only its own deposits)', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: storedPayout });

    // Act
    const res = await get(mfi('MFI-1'));

    // Assess
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
  });

  it('answers 403 to an AGENT token without reading the payment', async () => {
    // Act
    const res = await get(agent('COOP-1'));

    // Assess
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 404 PAYMENT_NOT_FOUND for an unknown payout id', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});

    // Act
    const res = await get(ADMIN, 'PAY-2025-000999-01');

    // Assess
    expectErrorEnvelope(res, 404, 'PAYMENT_NOT_FOUND');
  });

  it('answers 404 PAYMENT_NOT_FOUND for a DEP-… id that is not a deposit id, without reading the table', async () => {
    // Act
    const res = await get(ADMIN, 'DEP-abc');

    // Assess
    expectErrorEnvelope(res, 404, 'PAYMENT_NOT_FOUND');
    expect(ddb.calls()).toHaveLength(0);
  });

  describe('a deposit (DEP-…)', () => {
    const storedDeposit = {
      PK: 'PAYMENT#DEP-2026-000001',
      SK: 'META',
      entity: 'DEPOSIT',
      payment_id: 'DEP-2026-000001',
      payment_type: 'MFI_DEPOSIT',
      mfi_id: 'MFI-1',
      status: 'COMPLETED',
      source_currency: 'UGX',
      source_amount: 3_700_000,
      amount_usd_micro: 1_000_000_000,
      ramp_payment_id: 'ramp_1',
      chain_tx_hash: '0xabc',
      vault_shares_issued: '1000000000000000', // 1,000 shares of 12 decimals on chain
      created_at: '2026-11-22T10:00:00.000Z',
      created_by: 'mfi-user',
      completed_at: '2026-11-22T10:00:05.000Z',
      updated_at: '2026-11-22T10:00:05.000Z',
    };

    it('answers the MFI_DEPOSIT record to its MFI and to ADMIN', async () => {
      ddb.on(GetCommand).resolves({ Item: storedDeposit });
      for (const caller of [mfi('MFI-1'), ADMIN]) {
        const res = await get(caller, 'DEP-2026-000001');
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          payment_id: 'DEP-2026-000001',
          payment_type: 'MFI_DEPOSIT',
          status: 'COMPLETED',
          amount_usdc: 1000,
          mfi_id: 'MFI-1',
          source_currency: 'UGX',
          source_amount: 3_700_000,
          ramp_payment_id: 'ramp_1',
          chain_tx_hash: '0xabc',
          vault_shares_issued: 1_000_000_000,
          completed_at: '2026-11-22T10:00:05.000Z',
        });
      }
    });

    it('answers 403 to another MFI and to a COOPERATIVE; 404 when unknown', async () => {
      ddb.on(GetCommand).resolves({ Item: storedDeposit });
      expectErrorEnvelope(await get(mfi('MFI-2'), 'DEP-2026-000001'), 403, 'INSUFFICIENT_PERMISSIONS');
      expectErrorEnvelope(await get(coop('COOP-1'), 'DEP-2026-000001'), 403, 'INSUFFICIENT_PERMISSIONS');
      ddb.on(GetCommand).resolves({});
      expectErrorEnvelope(await get(ADMIN, 'DEP-2026-000002'), 404, 'PAYMENT_NOT_FOUND');
    });
  });
});

// ------------------------------------------------------------------ GET /payments?batch_id=

describe('GET /payments?batch_id=', () => {
  const list = (query: Record<string, string>, caller: Caller = ADMIN) =>
    call(listPayments, { method: 'GET', path: '/payments', query, caller });

  it.each([['0'], ['101'], ['-1'], ['ten'], ['1.5']])('answers 400 for limit=%s without reading the table', async (limit) => {
    // Act
    const res = await list({ batch_id: 'BATCH-2025-000042', limit });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'limit' })]);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 for a malformed batch_id and for an unknown query parameter', async () => {
    // Act
    const badId = await list({ batch_id: 'B42' });
    const unknown = await list({ batch_id: 'BATCH-2025-000042', page: '2' });

    // Assess
    expectErrorEnvelope(badId, 400, 'VALIDATION_ERROR');
    expectErrorEnvelope(unknown, 400, 'VALIDATION_ERROR');
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ path: 'page' })]);
  });

  it.each([
    ['garbage', 'not-a-token'],
    [
      'a key of another batch',
      Buffer.from(
        JSON.stringify({ PK: 'PAYMENT#PAY-2025-000999-01', SK: 'META', GSI1PK: 'PAYMENTS#BATCH-2025-000999', GSI1SK: 'x' }),
      ).toString('base64url'),
    ],
    [
      'a key with extra attributes',
      Buffer.from(JSON.stringify({ PK: 'PAYMENT#X', SK: 'META', GSI1PK: 'PAYMENTS#BATCH-2025-000042', GSI1SK: 'x', evil: 1 })).toString(
        'base64url',
      ),
    ],
  ])('answers 400 naming next_token for a forged token (%s) without querying', async (_what, token) => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: storedBatch() });

    // Act
    const res = await list({ batch_id: 'BATCH-2025-000042', next_token: token });

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'next_token' })]);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('pages with an opaque next_token that the next call accepts', async () => {
    // Prepare
    const lastKey = { PK: `PAYMENT#${PAYOUT_ID}`, SK: 'META', GSI1PK: 'PAYMENTS#BATCH-2025-000042', GSI1SK: storedPayout.GSI1SK };
    ddb.on(GetCommand).resolves({ Item: storedBatch() });
    ddb.on(QueryCommand).resolves({ Items: [storedPayout], LastEvaluatedKey: lastKey });
    ddb.on(QueryCommand, { Select: 'COUNT' }).resolves({ Count: 3 });

    // Act
    const first = await list({ batch_id: 'BATCH-2025-000042', limit: '1' });
    const second = await list({ batch_id: 'BATCH-2025-000042', limit: '1', next_token: first.body.next_token });

    // Assess
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      payments: [
        {
          payment_id: PAYOUT_ID,
          payment_type: 'FARMER_PAYOUT',
          status: 'COMPLETED',
          amount_usdc: 12.345678,
          completed_at: '2025-03-01T10:00:40.000Z',
        },
      ],
      total: 3,
      limit: 1,
      next_token: expect.any(String),
    });
    expect(second.status).toBe(200);
    const pageQueries = ddb.commandCalls(QueryCommand).filter((c) => c.args[0].input.Select !== 'COUNT');
    expect(pageQueries.map((c) => c.args[0].input.ExclusiveStartKey)).toEqual([undefined, lastKey]);
  });

  it("answers 403 to a COOPERATIVE token asking for another cooperative's batch", async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: storedBatch('COOP-2') });

    // Act
    const res = await list({ batch_id: 'BATCH-2025-000042' }, coop('COOP-1'));

    // Assess
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
  });
});

// ------------------------------------------------------------------ POST /farmers/register

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

describe('POST /api/webhooks/payout-provider', () => {
  const body = JSON.stringify({
    type: 'order.settled',
    data: {
      order_id: 'ord-1',
      reference: `${PAYOUT_ID}-A1`,
      amount_ugx: 45_678,
      exchange_rate: '3700.25',
      mobile_money_transaction_id: 'MM-1',
      settled_at: '2025-03-01T10:00:40Z',
    },
  });

  function signed(payload: string, at = new Date(), id = 'msg_1'): Record<string, string> {
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(WEBHOOK_SECRET).sign(id, at, payload),
    };
  }

  const post = (payload: string, headers: Record<string, string>) =>
    call(payoutWebhook, { path: '/api/webhooks/payout-provider', caller: null, body: payload, headers });

  it.each([
    ['a wrong signature', () => ({ ...signed(body), 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` })],
    [
      'a signature made with another secret',
      () => ({
        ...signed(body),
        'webhook-signature': new Webhook(`whsec_${randomBytes(32).toString('base64')}`).sign('msg_1', new Date(), body),
      }),
    ],
    ['a signature over another body', () => signed(body.replace('45678', '99999'))],
    ['no signature headers', () => ({})],
    ['a stale (10-minute-old) timestamp', () => signed(body, new Date(Date.now() - 600_000))],
  ])('answers 401 INVALID_SIGNATURE for %s without reading the table', async (_what, headers) => {
    // Act
    const res = await post(body, headers());

    // Assess
    expectErrorEnvelope(res, 401, 'INVALID_SIGNATURE');
    expect(ddb.calls()).toHaveLength(0);
    expect(sfn.calls()).toHaveLength(0);
  });

  it('acknowledges a correctly signed settlement for an unknown payout with 200 UNKNOWN_REFERENCE and changes nothing', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});

    // Act
    const res = await post(body, signed(body));

    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, outcome: 'UNKNOWN_REFERENCE' });
    const gets = ddb.commandCalls(GetCommand);
    expect(gets.map((c) => c.args[0].input.Key)).toEqual([{ PK: `PAYMENT#${PAYOUT_ID}`, SK: 'META' }]);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(0);
    expect(sfn.calls()).toHaveLength(0);
  });

  it('acknowledges a correctly signed event whose reference is not ours without reading the table', async () => {
    // Prepare
    const foreign = JSON.stringify({
      type: 'order.failed',
      data: { order_id: 'ord-x', reference: 'someone-else-123', failure_reason: 'x' },
    });

    // Act
    const res = await post(foreign, signed(foreign));

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('UNKNOWN_REFERENCE');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('answers 400 for a correctly signed body that is not a payout event', async () => {
    // Prepare
    const bogus = JSON.stringify({ type: 'order.exploded', data: {} });

    // Act
    const res = await post(bogus, signed(bogus));

    // Assess
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(ddb.calls()).toHaveLength(0);
  });
});

// ------------------------------------------------------------------ DynamoDB unavailable (issue 9: 503, not 500)

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
