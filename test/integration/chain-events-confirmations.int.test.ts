import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { DEV_CHAIN_WEBHOOK_SECRET } from '../../infra/local/dev-keys';
import { localTableClient, localTableEnv, LOCAL_TABLE_NAME } from '../../infra/local/dynamodb-local';
import { handler } from '../../functions/chain-events-webhook/handler';
import { CHAIN_EVENT_RETRY_AFTER_SECONDS } from '../../shared/domain/chain-confirmations';
import { apiEvent, lambdaContext, parse } from '../unit/support/api-event';
import { api, localStack } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * The chain-events webhook applies an event only at the watcher's confirmation depth
 * (CHAIN_WATCH_CONFIRMATIONS). The local stack runs at depth 0 (hardhat mines on demand), so the
 * webhook's handler is run here, in this process, against the local stack's chain and table with a
 * depth just beyond the event's block: a genuine, correctly signed event is refused 409
 * CHAIN_EVENT_NOT_CONFIRMED with Retry-After and nothing is recorded (no webhook receipt); once
 * the chain has grown that deep the same event (same webhook-id) is applied.
 */

const SECRET = process.env.CHAIN_WEBHOOK_SECRET || DEV_CHAIN_WEBHOOK_SECRET;
const stack = () => localStack();

async function rpc<T>(method: string, params: unknown[]): Promise<T> {
  const r = await fetch(stack().endpoints.ledger!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await r.json()) as { result: T; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
}

/** The webhook's handler, in this process, with a Standard Webhooks signature. */
async function post(body: unknown, id: string) {
  const raw = JSON.stringify(body);
  const at = new Date();
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(SECRET).sign(id, at, raw),
  };
  return parse(await handler(apiEvent({ path: '/api/webhooks/chain-events', body: raw, headers }), lambdaContext()));
}

describe('chain-events webhook: confirmation depth', () => {
  const saved = { ...process.env };
  afterAll(() => {
    process.env = saved;
  });

  it('refuses a not yet deep enough event (409, Retry-After, nothing recorded) and applies it once deep enough', async () => {
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000919');
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg: 120 }) });
    const batchId = submit.body.data.batch_id as string;
    await new Promise((r) => setTimeout(r, 1500));
    const graded = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11.2 } },
    });
    expect(graded.status).toBe(200);
    const tx = graded.body.chain_tx_hash as string;
    const receipt = await rpc<{ blockNumber: string; logs: Array<{ logIndex: string }> }>('eth_getTransactionReceipt', [tx]);
    const block = BigInt(receipt.blockNumber);
    const batch = await api('GET', `/batch/${batchId}`, { token: ctx.coop });

    // This process plays the deployed function: the local stack's chain and table, a depth 3 blocks beyond the event's.
    const e = stack().endpoints;
    const depth = Number(BigInt(await rpc<string>('eth_blockNumber', [])) - block) + 3;
    Object.assign(process.env, localTableEnv(e.dynamodb!), {
      LEDGER_RPC_URL: e.ledger,
      LEDGER_CHAIN_ID: '31337',
      TRACE_LOG_ADDRESS: e.trace_log,
      BATCH_TOKEN_ADDRESS: e.batch_token,
      LEDGER_RPC_RETRY_COUNT: '0',
      CHAIN_WEBHOOK_SECRET: SECRET,
      CHAIN_WATCH_CONFIRMATIONS: String(depth),
      CHAIN_WATCH_START_BLOCK: '0',
      DOCS_BASE_URL: 'http://127.0.0.1/docs',
    });
    const event = {
      type: 'batch.stage_changed',
      data: {
        batch_id: batchId,
        token_id: String(batch.body.token_id),
        stage: 'GRADED',
        tx_hash: tx,
        block_number: Number(block),
        log_index: Number(receipt.logs[0]!.logIndex),
      },
    };
    const id = `evt_${tx}_${receipt.logs[0]!.logIndex}_${randomBytes(4).toString('hex')}`;

    const early = await post(event, id);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('CHAIN_EVENT_NOT_CONFIRMED');
    expect(early.headers['Retry-After'] ?? early.headers['retry-after']).toBe(String(CHAIN_EVENT_RETRY_AFTER_SECONDS));
    expect(early.body.error.details[0]).toMatchObject({ tx_hash: tx, block_number: Number(block), confirmations: depth });
    expect(early.body.error.details[0].missing).toBeGreaterThan(0);
    // Nothing recorded: no receipt of the webhook-id, so the retry is processed afresh.
    const doc = localTableClient(e.dynamodb!);
    const receiptItem = await doc.send(
      new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: { PK: `WEBHOOK#chain-events#${id}`, SK: 'META' } }),
    );
    expect(receiptItem.Item).toBeUndefined();

    // The chain grows deep enough (hardhat mines empty blocks on request); the same event is applied.
    await rpc('hardhat_mine', [`0x${(early.body.error.details[0].missing as number).toString(16)}`]);
    const later = await post(event, id);
    expect([later.status, later.body]).toEqual([200, { received: true, outcome: 'NOTED' }]);
    expect((await post(event, id)).body.outcome).toBe('DUPLICATE_WEBHOOK');
  });
});
