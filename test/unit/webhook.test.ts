import { randomBytes } from 'node:crypto';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { Webhook } from 'standardwebhooks';
import { handler as chainEventsWebhook } from '../../functions/chain-events-webhook/handler';
import { DomainError } from '../../shared/domain/errors';
import { ChainEventSchema } from '../../shared/http/schemas';
import { MAX_WEBHOOK_ID_LENGTH, verifyStandardWebhook, webhookHandler, type WebhookRequest } from '../../shared/http/webhook';
import { logger } from '../../shared/runtime/logger';
import type { ChainEvent } from '../../shared/use-cases/chain-events';
import { apiEvent, expectErrorEnvelope, lambdaContext, parse } from './support/api-event';
import { onTheWire } from './support/errors';

/**
 * The signed-webhook transport (docs/api/inbound-webhooks.md#signatures-and-replays): Standard Webhooks signature (401 INVALID_SIGNATURE),
 * `webhook-id` length, JSON and body schema (400 VALIDATION_ERROR) before the use case is called.
 * Driven with the chain-events schema; the use case here only records what it was handed.
 */

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const hook = new Webhook(SECRET);
const BATCH_ID = 'BATCH-2026-000777';
const TX = `0x${'ab'.repeat(32)}`;
const PATH = '/api/webhooks/chain-events';

beforeAll(() => {
  logger.setLogLevel('SILENT');
  process.env.DOCS_BASE_URL = 'http://x/docs';
  process.env.AWS_REGION = 'eu-west-1';
  process.env.TABLE_NAME = 't';
  process.env.CHAIN_WEBHOOK_SECRET = SECRET;
});

/** What the route's use-case call received, in order. */
let applied: Array<Omit<WebhookRequest<ChainEvent>, 'requestId'>>;
beforeEach(() => {
  applied = [];
});

const route = webhookHandler({ secret: async () => SECRET, schema: ChainEventSchema }, async ({ webhookId, event }) => {
  applied.push({ webhookId, event });
  return { status: 200, body: { received: true } };
});

/** Standard Webhooks headers signing `rawBody` as `id` at `at`. */
function signedHeaders(rawBody: string, id = `evt_${TX}_0`, at = new Date()): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': hook.sign(id, at, rawBody),
  };
}

const post = async (body: string, headers: Record<string, string> = {}) =>
  parse(await route(apiEvent({ path: PATH, body, headers }), lambdaContext()));

const stageChanged = (over: Record<string, unknown> = {}) => ({
  type: 'batch.stage_changed',
  data: { batch_id: BATCH_ID, token_id: '2026000000000777', stage: 'EXPORTED', tx_hash: TX, block_number: 42, log_index: 0, ...over },
});

describe('webhookHandler', () => {
  it('hands the use case the webhook-id and the validated event, and answers its reply', async () => {
    const body = JSON.stringify(stageChanged());
    const res = await post(body, signedHeaders(body, 'evt_ok'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true });
    expect(applied).toEqual([{ webhookId: 'evt_ok', event: stageChanged() }]);
  });

  it('rejects a missing, forged or stale signature with 401 INVALID_SIGNATURE and touches nothing', async () => {
    const body = JSON.stringify(stageChanged());
    const unsigned = await post(body);
    expectErrorEnvelope(unsigned, 401, 'INVALID_SIGNATURE');
    const good = signedHeaders(body);
    const tampered = await post(body.replace('"log_index":0', '"log_index":1'), good);
    expectErrorEnvelope(tampered, 401, 'INVALID_SIGNATURE');
    const stale = signedHeaders(body, 'evt_stale', new Date(Date.now() - 10 * 60 * 1000));
    const old = await post(body, stale);
    expectErrorEnvelope(old, 401, 'INVALID_SIGNATURE');
    expect(applied).toHaveLength(0);
  });

  it('rejects a well-signed but malformed body with 400 VALIDATION_ERROR naming the fields', async () => {
    const body = JSON.stringify(stageChanged({ stage: 'SHIPPED', tx_hash: 'nope', block_number: -1 }));
    const res = await post(body, signedHeaders(body));
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['data.block_number', 'data.stage', 'data.tx_hash']);
    const notAnObject = '[1,2]';
    const res2 = await post(notAnObject, signedHeaders(notAnObject));
    expectErrorEnvelope(res2, 400, 'VALIDATION_ERROR');
    const wrongType = JSON.stringify({ type: 'order.settled', data: stageChanged().data });
    const res3 = await post(wrongType, signedHeaders(wrongType));
    expectErrorEnvelope(res3, 400, 'VALIDATION_ERROR');
    expect(applied).toHaveLength(0);
  });

  it('answers a correctly signed body that is not JSON with 400 VALIDATION_ERROR, not 401', async () => {
    const notJson = '{"type":"batch.stage_changed", this is not JSON';
    const res = await post(notJson, signedHeaders(notJson));
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    // The same bytes with a forged signature are still 401: the signature is checked first.
    const forged = await post(notJson, { ...signedHeaders(notJson), 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` });
    expectErrorEnvelope(forged, 401, 'INVALID_SIGNATURE');
    expect(applied).toHaveLength(0);
  });

  it(`rejects a correctly signed webhook-id of 3,000 characters with 400 VALIDATION_ERROR (limit ${MAX_WEBHOOK_ID_LENGTH})`, async () => {
    const body = JSON.stringify(stageChanged());
    const res = await post(body, signedHeaders(body, 'x'.repeat(3000)));
    expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([{ path: 'webhook-id', message: 'too long' }]);
    expect(applied).toHaveLength(0);
    // At the limit it is accepted.
    const atLimit = 'y'.repeat(MAX_WEBHOOK_ID_LENGTH);
    expect((await post(body, signedHeaders(body, atLimit))).status).toBe(200);
    expect(applied.map((a) => a.webhookId)).toEqual([atLimit]);
  });
});

describe('verifyStandardWebhook', () => {
  it('accepts a correctly signed body whatever it contains, JSON or not', () => {
    for (const body of [JSON.stringify(stageChanged()), 'not json at all', '']) {
      expect(() => verifyStandardWebhook(SECRET, body, signedHeaders(body))).not.toThrow();
    }
  });

  it('throws INVALID_SIGNATURE for missing headers, another secret, a changed body or a stale timestamp', () => {
    const body = JSON.stringify(stageChanged());
    const other = new Webhook(`whsec_${randomBytes(32).toString('base64')}`);
    const at = new Date();
    const cases: Array<[string, Record<string, string>]> = [
      [body, {}],
      [body, { ...signedHeaders(body), 'webhook-signature': other.sign('evt_1', at, body) }],
      [`${body} `, signedHeaders(body)],
      [body, signedHeaders(body, 'evt_old', new Date(Date.now() - 10 * 60 * 1000))],
    ];
    for (const [raw, headers] of cases) {
      let thrown: unknown;
      try {
        verifyStandardWebhook(SECRET, raw, headers);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect(onTheWire(thrown)).toMatchObject({ code: 'INVALID_SIGNATURE', status: 401 });
    }
  });
});

describe('POST /api/webhooks/chain-events uses this transport', () => {
  const ddb = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    ddb.reset();
    ddb.onAnyCommand().rejects(new Error('unexpected DynamoDB command in this test'));
  });

  it('401 for an unsigned request, 400 for a signed non-JSON body, and neither touches the table', async () => {
    const body = JSON.stringify(stageChanged());
    const unsigned = parse(await chainEventsWebhook(apiEvent({ path: PATH, body }), lambdaContext()));
    expectErrorEnvelope(unsigned, 401, 'INVALID_SIGNATURE');
    const notJson = 'not json';
    const bad = parse(await chainEventsWebhook(apiEvent({ path: PATH, body: notJson, headers: signedHeaders(notJson) }), lambdaContext()));
    expectErrorEnvelope(bad, 400, 'VALIDATION_ERROR');
    expect(ddb.calls()).toHaveLength(0);
  });
});
