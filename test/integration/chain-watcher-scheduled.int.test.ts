import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { runBuyerPay } from '../../infra/local/buyer-pay';
import { DynamoChainCursorStore } from '../../shared/adapters/dynamodb/chain-cursor';
import { api, landed, waitFor } from '../support/api';
import { useOwnStack } from '../support/stack-process';
import { batchBody, registerFarmer, setUpCooperative, purchaseOrderBody } from './fixtures';
import { LOCAL_TABLE_NAME, localTableClient, localTableEnv } from '../../infra/local/dynamodb-local';

/**
 * Issue 12 "Done when": an EXPORTED batch gets its top-up through the scheduled watcher with no
 * webhook sent. This file runs its own local stack with LOCAL_CHAIN_EVENTS=scheduled (the
 * chain-event-watcher function on its schedule, every minute × LOCAL_TIME_SCALE, reading the chain from
 * the cursor in the table, as in AWS; the webhook-posting watcher off) and metering on, so the
 * gateway counts every request that reached a route: the chain-events webhook must get none.
 */

const meteringDir = mkdtempSync(join(tmpdir(), 'coffee-trace-metering-'));
// The fixtures and api() talk to the stack named here: this file's own.
// The suite's chain (each transaction mined at once unless LEDGER_BLOCK_TIME_S is set, as for the int project's stack).
const stack = useOwnStack({
  LOCAL_CHAIN_EVENTS: 'scheduled',
  LOCAL_METERING_FILE: join(meteringDir, 'metering.json'),
  LEDGER_BLOCK_TIME_S: process.env.LEDGER_BLOCK_TIME_S ?? '0',
});
afterAll(() => rmSync(meteringDir, { recursive: true, force: true }));

const metering = async () =>
  (await (await fetch(`${stack().info.url}/__local/metering`)).json()) as {
    api_requests_by_fn: Record<string, number>;
    functions: Record<string, { invocations: number }>;
  };

const table = () => localTableClient(stack().info.endpoints.dynamodb!);

it('an EXPORTED batch gets its TOP_UP payout, and its buyer payment settles the order, through the scheduled watcher with no webhook sent', async () => {
  const ctx = await setUpCooperative();
  const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000777');
  const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg: 240.75 }) });
  // 201/200 when the receipt comes within the request's wait, else 202 and the job (on 2-second blocks): landed either way.
  const { batchId } = await landed(submit, ctx.coop);
  const patch = (body: Record<string, unknown>) =>
    api('PATCH', `/batch/${batchId}/stage`, { token: ctx.coop, body: { cooperative_id: ctx.id, ...body } });
  await landed(await patch({ new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11.2 } }), ctx.coop);
  await landed(await patch({ new_stage: 'MILLED', evidence: { mill_id: 'MILL-MBALE-2', outturn_kg: 192.6 } }), ctx.coop);
  await landed(await patch({ new_stage: 'WAREHOUSED', evidence: { warehouse_id: 'WH-MBALE-1', lot_number: 'LOT-1' } }), ctx.coop);
  const po = await api('POST', '/purchase-orders', {
    token: ctx.coop,
    body: purchaseOrderBody([batchId]),
  });
  expect(po.status).toBe(201);
  const poId: string = po.body.purchase_order_id;
  expect((await api('POST', `/purchase-orders/${poId}/confirm`, { token: ctx.coop })).status).toBe(200);
  await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.body.stage === 'COMMITTED' && r.body.stage_history.every((h: { chain_tx_hash: string | null }) => h.chain_tx_hash),
    15_000,
  );
  const exported = await patch({ new_stage: 'EXPORTED', evidence: { export_permit: 'UCDA-EXP-2026-0091', destination_country: 'DE' } });
  const { txHash: exportTx } = await landed(exported, ctx.coop);
  expect(exportTx).toMatch(/^0x[0-9a-f]{64}$/);
  expect(
    (await api('GET', `/batch/${batchId}`, { token: ctx.coop })).body.stage_history.map((h: { stage: string }) => h.stage).slice(-2),
  ).toEqual(['COMMITTED', 'EXPORTED']);

  // The scheduled watcher reads the StageRecorded log and starts the TOP_UP: round(240.75 × 400) UGX
  const topUp = await waitFor(
    async () => {
      const list = await api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop });
      const all = await Promise.all(
        list.body.payments.map((p: { payment_id: string }) => api('GET', `/payments/${p.payment_id}`, { token: ctx.coop })),
      );
      return all.map((r) => r.body).find((p) => p.reason === 'TOP_UP');
    },
    (p) => p?.status === 'COMPLETED',
    30_000,
    250,
  );
  expect(topUp).toMatchObject({ reason: 'TOP_UP', status: 'COMPLETED', batch_id: batchId });

  // The buyer pays the purchase order into the vault; the watcher reads PurchaseOrderPaid and the order settles
  const out: string[] = [];
  expect(
    await runBuyerPay(
      [poId],
      (l) => out.push(l),
      () => undefined,
      stack().info.dataDir,
    ),
  ).toBe(0);
  const settlement = await waitFor(
    () => api('GET', `/purchase-orders/${poId}/settlement`, { token: ctx.coop }),
    (r) => r.body.status === 'COMPLETED',
    30_000,
    250,
  );
  expect(settlement.body).toMatchObject({ status: 'COMPLETED', payment_tx_hash: out[0], settled_batch_ids: [batchId] });
  const settled = await waitFor(
    () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
    (r) => r.body.stage === 'SETTLED',
    15_000,
  );
  expect(settled.body.stage).toBe('SETTLED');

  // The receipts the use case keeps are the webhook's own (source chain-events, id evt_<tx>_<logIndex>)
  const receipt = await table().send(
    new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: { PK: `WEBHOOK#chain-events#evt_${exportTx}_0`, SK: 'META' } }),
  );
  expect(receipt.Item).toMatchObject({ entity: 'WEBHOOK', source: 'chain-events' });
  // The cursor has moved past the payment's block
  const paidBlock = Number(
    (
      (await (
        await fetch(stack().info.endpoints.ledger!, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getTransactionReceipt', params: [out[0]] }),
        })
      ).json()) as { result: { blockNumber: string } }
    ).result.blockNumber,
  );
  const cursor = await table().send(new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: { PK: 'CHAIN_CURSOR#31337', SK: 'META' } }));
  expect(cursor.Item!.next_block).toBeGreaterThan(paidBlock);

  // No webhook: the chain-events route was never called; the watcher function ran
  const usage = await metering();
  expect(usage.api_requests_by_fn['chain-events-webhook'] ?? 0).toBe(0);
  expect(usage.functions['chain-events-webhook']).toBeUndefined();
  expect(usage.functions['chain-event-watcher']!.invocations).toBeGreaterThan(0);
}, 150_000);

it('the cursor in DynamoDB: of two runs claiming at once exactly one gets the lease; only its holder moves the cursor, and only from where it is', async () => {
  Object.assign(process.env, localTableEnv(stack().info.endpoints.dynamodb!));
  const store = new DynamoChainCursorStore(424242); // its own chain id: not the stack's cursor
  const now = new Date();
  const until = new Date(now.getTime() + 60_000);
  const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => store.claim(`run-${i}`, now, until, 100n)));
  const winners = claims.flatMap((c, i) => (c ? [i] : []));
  expect(winners).toHaveLength(1);
  expect(claims[winners[0]!]).toEqual({ nextBlock: 100n });
  const holder = `run-${winners[0]}`;
  const other = `run-${(winners[0]! + 1) % 8}`;

  expect(await store.advance(other, 100n, 200n)).toBe(false); // not the holder
  expect(await store.advance(holder, 150n, 200n)).toBe(false); // not where the cursor is
  const advances = await Promise.all([store.advance(holder, 100n, 200n), store.advance(holder, 100n, 200n)]);
  expect(advances.sort()).toEqual([false, true]); // one range moves the cursor once
  await store.release(other); // a no-op: not the holder
  expect(await store.claim('late', new Date(), until, 0n)).toBeNull();
  await store.release(holder);
  expect(await store.claim('late', new Date(), until, 0n)).toEqual({ nextBlock: 200n }); // the start block counts only for a new cursor
  // An expired lease can be taken over
  expect(await store.claim('after-expiry', new Date(until.getTime() + 1), new Date(until.getTime() + 60_000), 0n)).toEqual({
    nextBlock: 200n,
  });
  expect(await store.advance('late', 200n, 300n)).toBe(false);
}, 30_000);
