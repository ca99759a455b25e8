import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { DEV_CHAIN_WEBHOOK_SECRET } from '../../infra/local/dev-keys';
import { EvmTraceLogReader } from '../../shared/adapters/ledger/trace-log-reader';
import type { Hex } from 'viem';
import { api, stackUrl, waitFor, localStack } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Issue 9, forged chain events on the local stack: a correctly signed `batch.stage_changed` event
 * is checked against the batch and the trace log on the hardhat node before it moves money. The
 * reported attack (EXPORTED for a batch still at DELIVERED, made-up tx_hash) used to start and
 * complete a TOP_UP payout; now it is acknowledged 200 MISMATCH and nothing happens.
 */

const SECRET = process.env.CHAIN_WEBHOOK_SECRET || DEV_CHAIN_WEBHOOK_SECRET;
const hook = new Webhook(SECRET);

/** Posts `body` to the chain-events webhook signed as the chain-event provider would. */
async function sendChainEvent(body: unknown, id = `evt_forged_${randomBytes(8).toString('hex')}`) {
  const raw = JSON.stringify(body);
  const at = new Date();
  const res = await fetch(`${stackUrl()}/api/webhooks/chain-events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': hook.sign(id, at, raw),
    },
    body: raw,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('forged chain events (issue 9)', () => {
  let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
  let batchId: string;
  let tokenId: string;
  let mintTx: string;
  const stack = () => localStack();

  const stageChanged = (over: Record<string, unknown>) => ({
    type: 'batch.stage_changed',
    data: {
      batch_id: batchId,
      token_id: tokenId,
      stage: 'EXPORTED',
      tx_hash: `0x${randomBytes(32).toString('hex')}`,
      block_number: 7,
      log_index: 0,
      ...over,
    },
  });
  const topUps = async () => {
    const list = await api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop });
    const all = await Promise.all(
      list.body.payments.map((p: { payment_id: string }) => api('GET', `/payments/${p.payment_id}`, { token: ctx.coop })),
    );
    return all.map((r) => r.body).filter((p) => p.reason === 'TOP_UP');
  };

  beforeAll(async () => {
    ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000777');
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg: 240.75 }) });
    batchId = submit.body.data.batch_id;
    const delivered = await waitFor(
      () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
      (r) => r.body.stage === 'DELIVERED' && !!r.body.stage_history?.[0]?.chain_tx_hash,
      15_000,
    );
    expect(delivered.body.stage).toBe('DELIVERED');
    tokenId = String(delivered.body.token_id);
    mintTx = delivered.body.stage_history[0].chain_tx_hash;
  });

  it('the reported attack: a signed EXPORTED event for a DELIVERED batch with a made-up tx_hash → 200 MISMATCH, no TOP_UP payout', async () => {
    const r = await sendChainEvent(stageChanged({}));
    expect(r).toEqual({ status: 200, body: { received: true, outcome: 'MISMATCH' } });
    // a real transaction of the batch (its mint: a BatchToken log, not a TraceLog StageRecorded) does not pass either
    const mint = await sendChainEvent(stageChanged({ tx_hash: mintTx, stage: 'DELIVERED' }));
    expect(mint.body.outcome).toBe('MISMATCH');

    await new Promise((r) => setTimeout(r, 1_000)); // room for a payout that should not come
    expect(await topUps()).toEqual([]);
    const batch = await api('GET', `/batch/${batchId}`, { token: ctx.coop });
    expect(batch.body.stage).toBe('DELIVERED');
  });

  it('a genuine StageRecorded log relabelled: GRADED transaction sent as EXPORTED → MISMATCH; sent as it is → NOTED', async () => {
    const graded = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11.2 } },
    });
    expect(graded.status).toBe(200);
    const tx = graded.body.chain_tx_hash as string;
    expect(tx).toMatch(/^0x[0-9a-f]{64}$/);

    expect((await sendChainEvent(stageChanged({ tx_hash: tx }))).body.outcome).toBe('MISMATCH');
    expect((await sendChainEvent(stageChanged({ tx_hash: tx, stage: 'GRADED', log_index: 1 }))).body.outcome).toBe('MISMATCH');
    expect((await sendChainEvent(stageChanged({ tx_hash: tx, stage: 'GRADED', token_id: '2026000000000001' }))).body.outcome).toBe(
      'TOKEN_MISMATCH',
    );
    // The log index of the genuine log, as the ledger numbers it in its block.
    const reader = new EvmTraceLogReader({
      rpcUrl: stack().endpoints.ledger!,
      chainId: 31337,
      traceLogAddress: stack().endpoints.trace_log! as Hex,
    });
    const receipt = await fetch(stack().endpoints.ledger!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getTransactionReceipt', params: [tx] }),
    }).then((r) => r.json() as Promise<{ result: { logs: Array<{ logIndex: string }> } }>);
    const logIndex = Number(receipt.result.logs[0]!.logIndex);
    expect((await sendChainEvent(stageChanged({ tx_hash: tx, stage: 'GRADED', log_index: logIndex }))).body.outcome).toBe('NOTED');

    // The adapter itself, on the same chain.
    expect(await reader.stageRecordedAt(tx as Hex, logIndex)).toMatchObject({
      tokenId: BigInt(tokenId),
      stage: 1,
      evidenceCid: graded.body.evidence_ipfs_cid,
    });
    expect(await reader.stageRecordedAt(tx as Hex, logIndex + 1)).toBeNull();
    expect(await reader.stageRecordedAt(mintTx as Hex, 0)).toBeNull(); // BatchToken's log, not TraceLog's
    expect(await reader.stageRecordedAt(`0x${'00'.repeat(32)}`, 0)).toBeNull(); // no such transaction
    expect(await topUps()).toEqual([]);
  });

  it('a ledger that cannot be read → 503 LEDGER_UNAVAILABLE from the adapter', async () => {
    const down = new EvmTraceLogReader({
      rpcUrl: 'http://127.0.0.1:9/',
      chainId: 31337,
      traceLogAddress: stack().endpoints.trace_log! as Hex,
      retryCount: 0,
    });
    await expect(down.stageRecordedAt(`0x${'11'.repeat(32)}`, 0)).rejects.toMatchObject({ code: 'LEDGER_UNAVAILABLE' });
  });
});
