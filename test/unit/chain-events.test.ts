import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { Webhook } from 'standardwebhooks';
import { handler as chainEventsWebhook } from '../../functions/chain-events-webhook/handler';
import { WebhookReceipts } from '../../shared/adapters/dynamodb/webhook-receipts';
import { DomainError, ProviderUnavailableError } from '../../shared/domain/errors';
import type { Batch, Cooperative, Payout } from '../../shared/domain/records';
import { toErrorResponse } from '../../shared/http/handler';
import { logger } from '../../shared/runtime/logger';
import { applyChainEvent, type ChainEventDeps } from '../../shared/use-cases/chain-events';
import { apiEvent, expectErrorEnvelope, lambdaContext, parse } from './support/api-event';

/** POST /api/webhooks/chain-events (decisions §4 TOP_UP, §6 webhooks). */

const ddb = mockClient(DynamoDBDocumentClient);
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const hook = new Webhook(SECRET);
const BATCH_ID = 'BATCH-2026-000777';
const TX = `0x${'ab'.repeat(32)}`;

/** The table, as far as webhook receipts go: conditional puts and consistent gets on a Map. */
let table: Map<string, Record<string, unknown>>;

beforeAll(() => {
  logger.setLogLevel('SILENT');
  process.env.TABLE_NAME = 't';
  process.env.DOCS_BASE_URL = 'http://x/docs';
  process.env.AWS_REGION = 'eu-west-1';
  process.env.CHAIN_WEBHOOK_SECRET = SECRET;
});

beforeEach(() => {
  table = new Map();
  ddb.reset();
  ddb.onAnyCommand().rejects(new Error('unexpected DynamoDB command in this test'));
  ddb.on(GetCommand).callsFake((input: { Key: { PK: string; SK: string } }) => ({ Item: table.get(`${input.Key.PK}|${input.Key.SK}`) }));
  ddb.on(PutCommand).callsFake((input: { Item: Record<string, unknown>; ConditionExpression?: string }) => {
    const k = `${input.Item.PK as string}|${input.Item.SK as string}`;
    if (input.ConditionExpression === 'attribute_not_exists(PK)' && table.has(k)) {
      throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
    }
    table.set(k, input.Item);
    return {};
  });
});

const batch = (over: Partial<Batch> = {}): Batch => ({
  batch_id: BATCH_ID, batch_year: 2026, batch_number: 777, token_id: '2026000000000777', farmer_id: 'F-1', cooperative_id: 'COOP-1',
  weight_kg: 240.75, grade: 'screen18', moisture_pct: 11.5, collection_point_gps: { lat: 1.08, lng: 34.17 }, collector_agent_id: 'A-1',
  stage: 'EXPORTED', mint_status: 'CONFIRMED', audit_seq: 6, audit_head_hash: 'h', stage_history: [], payment_status: 'PAYMENT_CONFIRMED',
  payment_amount_ugx: 2_359_350, payout_seq: 1, submitted_by: 'coop-user', created_at: '2026-11-01T08:00:00.000Z', updated_at: '2026-11-20T08:00:00.000Z',
  ...over,
});

const cooperative = (premium: number): Cooperative => ({
  cooperative_id: 'COOP-1', name: 'Bugisu Farmers', district: 'Mbale', licence_status: 'ACTIVE', licence_expires_at: '2099-12-31',
  manager: { name: 'Grace', email: 'grace@example.org', phone: '+256772123456' }, prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
  export_premium_ugx_per_kg: premium, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
});

/**
 * Fake payout ports that behave like the repository where it matters: the (batch, reason) guard
 * makes a second creation DUPLICATE_PAYOUT, and discarding an unsent payout removes its guard.
 */
function fakeDeps(opts: { premium?: number; batch?: Batch | null; phone?: string | null; providerDown?: boolean } = {}) {
  const guards = new Set<string>();
  const created: Payout[] = [];
  const quotes: unknown[] = [];
  const started: string[] = [];
  const b = opts.batch === undefined ? batch() : opts.batch;
  const deps = {
    now: () => new Date('2026-11-22T10:00:00.000Z'),
    registry: {
      getCooperative: async (id: string) => (id === 'COOP-1' ? cooperative(opts.premium ?? 400) : null),
      getFarmer: async (id: string) => ({ farmer_id: id, cooperative_id: 'COOP-1', full_name: 'Joseph Wamala', ...(opts.phone === null ? {} : { phone: opts.phone ?? '+256772000123' }) }),
    },
    batches: { get: async (id: string) => (b && id === b.batch_id ? b : null), setPaymentStatus: async () => undefined },
    payouts: {
      createPending: async (p: Payout) => {
        const k = `${p.batch_id}#${p.reason}`;
        if (guards.has(k)) throw new DomainError('DUPLICATE_PAYOUT', `A ${p.reason} payout for batch ${p.batch_id} already exists.`);
        guards.add(k);
        created.push(p);
      },
      discardUnsent: async (p: Payout) => { guards.delete(`${p.batch_id}#${p.reason}`); created.splice(created.indexOf(p), 1); },
      markProcessing: async (p: Payout, order: { order_id: string }) => ({ ...p, status: 'PROCESSING', provider_order_id: order.order_id }),
    },
    provider: {
      quote: async (q: unknown) => { quotes.push(q); return { quote_id: 'q1', rate: '3700.25', expires_at: '2026-11-22T10:01:00.000Z' }; },
      createOrder: async () => {
        if (opts.providerDown) throw new ProviderUnavailableError();
        return { order_id: 'ord_1', amount_ugx: 96_300, exchange_rate: '3700.25' };
      },
    },
    workflow: { start: async (id: string) => { started.push(id); } },
    receipts: new WebhookReceipts(),
  };
  return { deps: deps as unknown as ChainEventDeps, created, quotes, started };
}

function signed(body: unknown, id = `evt_${TX}_0`, at = new Date()) {
  const rawBody = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    secret: SECRET,
    rawBody,
    headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': hook.sign(id, at, rawBody) },
  };
}

const stageChanged = (over: Record<string, unknown> = {}) => ({
  type: 'batch.stage_changed',
  data: { batch_id: BATCH_ID, token_id: '2026000000000777', stage: 'EXPORTED', tx_hash: TX, block_number: 42, log_index: 0, ...over },
});

const receiptPuts = () => ddb.commandCalls(PutCommand).filter((c) => (c.args[0].input.Item?.PK as string).startsWith('WEBHOOK#chain-events#'));

describe('chain-events webhook handler', () => {
  it('rejects a missing, forged or stale signature with 401 INVALID_SIGNATURE and touches nothing', async () => {
    const body = JSON.stringify(stageChanged());
    const unsigned = parse(await chainEventsWebhook(apiEvent({ path: '/api/webhooks/chain-events', body }), lambdaContext()));
    expectErrorEnvelope(unsigned, 401, 'INVALID_SIGNATURE');
    const good = signed(body);
    const tampered = parse(await chainEventsWebhook(apiEvent({ path: '/api/webhooks/chain-events', body: body.replace('"log_index":0', '"log_index":1'), headers: good.headers }), lambdaContext()));
    expectErrorEnvelope(tampered, 401, 'INVALID_SIGNATURE');
    const stale = signed(body, 'evt_stale', new Date(Date.now() - 10 * 60 * 1000));
    const old = parse(await chainEventsWebhook(apiEvent({ path: '/api/webhooks/chain-events', body, headers: stale.headers }), lambdaContext()));
    expectErrorEnvelope(old, 401, 'INVALID_SIGNATURE');
    expect(ddb.calls()).toHaveLength(0);
  });

  it('rejects a well-signed but malformed body with 400 VALIDATION_ERROR naming the fields', async () => {
    const body = JSON.stringify(stageChanged({ stage: 'SHIPPED', tx_hash: 'nope', block_number: -1 }));
    const res = parse(await chainEventsWebhook(apiEvent({ path: '/api/webhooks/chain-events', body, headers: signed(body).headers }), lambdaContext()));
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['data.block_number', 'data.stage', 'data.tx_hash']);
    const notAnObject = '[1,2]';
    const res2 = parse(await chainEventsWebhook(apiEvent({ path: '/api/webhooks/chain-events', body: notAnObject, headers: signed(notAnObject).headers }), lambdaContext()));
    expectErrorEnvelope(res2, 400, 'VALIDATION_ERROR');
    // (A signed body that is not JSON at all is 401: standardwebhooks' verify() parses the payload.)
    const wrongType = JSON.stringify({ type: 'order.settled', data: stageChanged().data });
    const res3 = parse(await chainEventsWebhook(apiEvent({ path: '/api/webhooks/chain-events', body: wrongType, headers: signed(wrongType).headers }), lambdaContext()));
    expectErrorEnvelope(res3, 400, 'VALIDATION_ERROR');
    expect(ddb.calls()).toHaveLength(0);
  });
});

describe('applyChainEvent', () => {
  it('EXPORTED starts the TOP_UP payout once: round(240.75 kg × 400) = 96,300 UGX, then claims the receipt', async () => {
    const f = fakeDeps();
    const r = await applyChainEvent(f.deps, signed(stageChanged()));
    expect(r).toEqual({ received: true, outcome: 'STARTED', payout_id: 'PAY-2026-000777-02' });
    expect(f.quotes).toEqual([{ amount_ugx: 96_300 }]);
    expect(f.created).toHaveLength(1);
    expect(f.created[0]).toMatchObject({ reason: 'TOP_UP', batch_id: BATCH_ID, farmer_id: 'F-1', cooperative_id: 'COOP-1', created_by: 'system', estimated_ugx: 96_300 });
    expect(f.started).toEqual(['PAY-2026-000777-02']);
    expect(receiptPuts()).toHaveLength(1);
    expect(table.get(`WEBHOOK#chain-events#evt_${TX}_0|META`)).toMatchObject({ entity: 'WEBHOOK', received_at: '2026-11-22T10:00:00.000Z', expires_at_epoch: expect.any(Number) });
  });

  it('answers a replayed webhook-id 200 DUPLICATE_WEBHOOK without applying it again', async () => {
    const f = fakeDeps();
    const w = signed(stageChanged(), 'evt_same');
    expect((await applyChainEvent(f.deps, w)).outcome).toBe('STARTED');
    expect(await applyChainEvent(f.deps, signed(stageChanged(), 'evt_same'))).toEqual({ received: true, outcome: 'DUPLICATE_WEBHOOK' });
    expect(f.quotes).toHaveLength(1);
    expect(f.created).toHaveLength(1);
    expect(receiptPuts()).toHaveLength(1);
  });

  it('pays once when the same EXPORTED event comes under two webhook-ids: the second is DUPLICATE_PAYOUT → ALREADY_STARTED', async () => {
    const f = fakeDeps();
    expect((await applyChainEvent(f.deps, signed(stageChanged(), 'evt_a'))).outcome).toBe('STARTED');
    expect(await applyChainEvent(f.deps, signed(stageChanged(), 'evt_b'))).toEqual({ received: true, outcome: 'ALREADY_STARTED' });
    expect(f.created).toHaveLength(1);
    expect(f.started).toHaveLength(1);
    expect(receiptPuts()).toHaveLength(2); // both ids are now known replays
  });

  it('creates no payout when the cooperative has no export premium (NO_PREMIUM)', async () => {
    const f = fakeDeps({ premium: 0 });
    expect(await applyChainEvent(f.deps, signed(stageChanged()))).toEqual({ received: true, outcome: 'NO_PREMIUM' });
    expect(f.quotes).toHaveLength(0);
    expect(f.created).toHaveLength(0);
    expect(receiptPuts()).toHaveLength(1);
  });

  it('notes other stages without paying (GRADED → NOTED)', async () => {
    const f = fakeDeps({ batch: batch({ stage: 'GRADED' }) });
    expect(await applyChainEvent(f.deps, signed(stageChanged({ stage: 'GRADED' })))).toEqual({ received: true, outcome: 'NOTED' });
    expect(f.quotes).toHaveLength(0);
    expect(f.created).toHaveLength(0);
  });

  it('refuses to act on a token id that is not the batch\'s (TOKEN_MISMATCH) or an unknown batch (UNKNOWN_BATCH)', async () => {
    const f = fakeDeps();
    expect((await applyChainEvent(f.deps, signed(stageChanged({ token_id: '999' }), 'evt_m'))).outcome).toBe('TOKEN_MISMATCH');
    expect((await applyChainEvent(f.deps, signed(stageChanged({ batch_id: 'BATCH-2026-000001' }), 'evt_u'))).outcome).toBe('UNKNOWN_BATCH');
    expect(f.created).toHaveLength(0);
  });

  it('farmer without a phone: NOT_PAYABLE, acknowledged', async () => {
    const f = fakeDeps({ phone: null });
    expect((await applyChainEvent(f.deps, signed(stageChanged()))).outcome).toBe('NOT_PAYABLE');
    expect(f.created).toHaveLength(0);
  });

  it('provider unreachable: 503 PROVIDER_UNAVAILABLE, no payout left and no receipt, so the retry with the same id pays', async () => {
    const down = fakeDeps({ providerDown: true });
    const err = await applyChainEvent(down.deps, signed(stageChanged(), 'evt_retry')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('PROVIDER_UNAVAILABLE');
    expect(toErrorResponse(err, '01J00000000000000000000000').statusCode).toBe(503);
    expect(down.created).toHaveLength(0);
    expect(receiptPuts()).toHaveLength(0);
    expect(table.size).toBe(0);

    // The sender retries with the same webhook-id once the provider is back.
    const up = fakeDeps();
    expect((await applyChainEvent(up.deps, signed(stageChanged(), 'evt_retry'))).outcome).toBe('STARTED');
    expect(up.created).toHaveLength(1);
    expect(receiptPuts()).toHaveLength(1);
  });
});

describe('WebhookReceipts', () => {
  it('claims a webhook id once (conditional put with TTL), then reports it as seen', async () => {
    const r = new WebhookReceipts();
    expect(await r.hasWebhook('chain-events', 'evt_1')).toBe(false);
    expect(await r.claimWebhook('chain-events', 'evt_1', '2026-11-22T10:00:00.000Z')).toBe(true);
    expect(await r.claimWebhook('chain-events', 'evt_1', '2026-11-22T10:00:01.000Z')).toBe(false);
    expect(await r.hasWebhook('chain-events', 'evt_1')).toBe(true);
    const put = ddb.commandCalls(PutCommand)[0]!.args[0].input;
    expect(put).toMatchObject({
      TableName: 't', ConditionExpression: 'attribute_not_exists(PK)',
      Item: { PK: 'WEBHOOK#chain-events#evt_1', SK: 'META', entity: 'WEBHOOK', received_at: '2026-11-22T10:00:00.000Z', expires_at_epoch: Date.parse('2026-11-22T10:00:00.000Z') / 1000 + 30 * 24 * 3600 },
    });
    expect(ddb.commandCalls(GetCommand)[0]!.args[0].input).toMatchObject({ Key: { PK: 'WEBHOOK#chain-events#evt_1', SK: 'META' }, ConsistentRead: true });
  });

  it('throws DynamoDB errors other than a failed condition', async () => {
    ddb.on(PutCommand).rejects(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }));
    await expect(new WebhookReceipts().claimWebhook('chain-events', 'evt_2', '2026-11-22T10:00:00.000Z')).rejects.toThrow('throttled');
  });
});
