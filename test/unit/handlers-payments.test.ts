import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { handler as getPayment } from '../../functions/get-payment/handler';
import { handler as listPayments } from '../../functions/list-payments/handler';
import { handler as payoutWebhook } from '../../functions/payout-provider-webhook/handler';
import type { Caller } from '../../shared/auth/claims';
import { ADMIN, agent, coop, expectErrorEnvelope, mfi } from './support/api-event';

import { PAYOUT_ID, call, storedBatch, storedPayout, useHandlerMocks } from './support/handler-fixtures';

const { ddb, sfn, webhookSecret: WEBHOOK_SECRET } = useHandlerMocks();

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
      failure_reason: null,
      provider: null,
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
