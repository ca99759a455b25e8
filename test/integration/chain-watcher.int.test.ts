import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, http, keccak256, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount, type DeployedContracts } from '../../infra/ledger/deploy';
import { runBuyerPay } from '../../infra/local/buyer-pay';
import { startChainWatcher, type ChainWatcher } from '../../infra/local/chain-watcher';
import { devBuyerKey } from '../../infra/local/dev-keys';
import { startHardhatNode, type HardhatNode } from '../../infra/local/hardhat-node';
import { EvmLedger, ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { lendingVaultAbi, testUsdcAbi, type LedgerStageName } from '../../shared/adapters/ledger/abi';
import { vaultRef } from '../../shared/adapters/ledger/vault-ledger';
import { tokenIdForBatch } from '../../shared/domain/ids';
import { stackDataDir } from '../support/api';

/**
 * The local chain watcher against a real hardhat node: TraceLog StageRecorded logs become signed
 * `batch.stage_changed` webhooks and the LendingVault's PurchaseOrderPaid logs signed
 * `purchase_order.paid` webhooks, in chain order, with a stable webhook-id that a retry repeats;
 * and on the local stack's chain, a payment made with `npm run buyer-pay`'s function.
 */

const CHAIN_ID = 31337;
const BATCH_ID = 'BATCH-2026-000777';
const TOKEN_ID = tokenIdForBatch(2026, 777);
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';

interface Received {
  id: string;
  status: number;
  verified: boolean;
  body: any;
}

async function waitUntil(what: string, ok: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A loopback chain-events receiver that verifies each delivery's signature with `secret`. */
async function startReceiver(secret: string, statusFor: () => number = () => 200) {
  const received: Received[] = [];
  const verifier = new Webhook(secret);
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const h = (n: string) => String(req.headers[n] ?? '');
      let verified = false;
      try {
        verifier.verify(raw, {
          'webhook-id': h('webhook-id'),
          'webhook-timestamp': h('webhook-timestamp'),
          'webhook-signature': h('webhook-signature'),
        });
        verified = true;
      } catch {
        /* recorded as unverified */
      }
      const status = verified ? statusFor() : 401;
      received.push({ id: h('webhook-id'), status, verified, body: JSON.parse(raw) });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: status === 200 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/chain-events`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('chain watcher (hardhat node → signed chain-events webhooks)', () => {
  let node: HardhatNode | undefined;
  let server: Server | undefined;
  let watcher: ChainWatcher | undefined;
  let addresses: DeployedContracts;
  let ledger: EvmLedger;
  let deployerKey: Hex;
  const received: Received[] = [];
  let failNext = 0;
  /** When above 0, the receiver answers each stage event this many ms late. */
  let slowStages = 0;

  beforeAll(async () => {
    node = await startHardhatNode();
    const artifacts = await compileContracts();
    const key = generatePrivateKey();
    deployerKey = key;
    await fundAccount(node.rpcUrl, privateKeyToAccount(key).address, 10n ** 21n);
    addresses = await deployContracts({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, deployerKey: key, artifacts });
    ledger = new EvmLedger({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, signerPrivateKey: key, ...addresses });

    const verifier = new Webhook(SECRET);
    server = createServer((req, res) => {
      void readBody(req).then((raw) => {
        const h = (n: string) => String(req.headers[n] ?? '');
        let verified = false;
        try {
          verifier.verify(raw, {
            'webhook-id': h('webhook-id'),
            'webhook-timestamp': h('webhook-timestamp'),
            'webhook-signature': h('webhook-signature'),
          });
          verified = true;
        } catch {
          /* recorded as unverified */
        }
        let status = verified ? 200 : 401;
        if (verified && failNext > 0) {
          failNext--;
          status = 500;
        }
        const body = JSON.parse(raw);
        received.push({ id: h('webhook-id'), status, verified, body });
        const answer = () => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ received: status === 200 }));
        };
        if (slowStages > 0 && body.type === 'batch.stage_changed') setTimeout(answer, slowStages);
        else answer();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/chain-events`;

    watcher = startChainWatcher({
      rpcUrl: node.rpcUrl,
      chainId: CHAIN_ID,
      traceLogAddress: addresses.traceLogAddress,
      batchTokenAddress: addresses.batchTokenAddress,
      lendingVaultAddress: addresses.lendingVaultAddress,
      webhookUrl: () => url,
      secret: SECRET,
      pollMs: 100,
    });
  }, 90_000);

  afterAll(async () => {
    await watcher?.stop();
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    await node?.stop();
  });

  const record = async (stage: LedgerStageName) => {
    const { txHash } = await ledger.recordStage({ tokenId: TOKEN_ID, stage, evidenceCid: CID, auditHash: keccak256(toHex(stage)) });
    const receipt = await ledger.waitForReceipt(txHash, 10_000);
    expect(receipt?.status).toBe('success');
    return { txHash, blockNumber: Number(receipt!.blockNumber) };
  };

  const expectedBody = (stage: LedgerStageName, tx: { txHash: Hex; blockNumber: number }) => ({
    type: 'batch.stage_changed',
    data: { batch_id: BATCH_ID, token_id: TOKEN_ID.toString(), stage, tx_hash: tx.txHash, block_number: tx.blockNumber, log_index: 0 },
  });

  // The watcher counts a delivery once it has read the answer, just after the receiver saw the body:
  // each test waits for the count before checking the stats.
  it('delivers each StageRecorded event as a signed batch.stage_changed webhook, in chain order', async () => {
    const mint = await ledger.mintBatchToken({ tokenId: TOKEN_ID, batchId: BATCH_ID, auditHash: keccak256(toHex('mint')) });
    expect((await ledger.waitForReceipt(mint.txHash, 10_000))?.status).toBe('success');
    const graded = await record('GRADED');
    const milled = await record('MILLED');

    await waitUntil('two deliveries', () => received.filter((r) => r.status === 200).length >= 2);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(received.map((r) => r.id)).toEqual([`evt_${graded.txHash}_0`, `evt_${milled.txHash}_0`]);
    expect(received.map((r) => r.body)).toEqual([expectedBody('GRADED', graded), expectedBody('MILLED', milled)]);
    await waitUntil('the second delivery counted', () => watcher!.stats().delivered >= 2);
    expect(watcher!.stats()).toEqual({ events: 2, delivered: 2, failed: 0 });
  });

  it('retries a delivery the receiver answered 500 with the same webhook-id and body', async () => {
    const before = received.length;
    failNext = 1;
    const warehoused = await record('WAREHOUSED');

    await waitUntil('the retried delivery', () => received.slice(before).some((r) => r.status === 200));
    const tries = received.slice(before);
    expect(tries.map((r) => [r.id, r.status])).toEqual([
      [`evt_${warehoused.txHash}_0`, 500],
      [`evt_${warehoused.txHash}_0`, 200],
    ]);
    expect(tries.every((r) => r.verified)).toBe(true);
    expect(tries[1]!.body).toEqual(tries[0]!.body);
    expect(tries[1]!.body).toEqual(expectedBody('WAREHOUSED', warehoused));
    await waitUntil('the third delivery counted', () => watcher!.stats().delivered >= 3);
    expect(watcher!.stats()).toEqual({ events: 3, delivered: 3, failed: 0 });
  });

  it('delivers a PurchaseOrderPaid log as a signed purchase_order.paid webhook, in chain order with stage events', async () => {
    const before = received.length;
    const account = privateKeyToAccount(deployerKey);
    const chain = ledgerChain(CHAIN_ID, node!.rpcUrl);
    const wallet = createWalletClient({ account, chain, transport: http(node!.rpcUrl) });
    const reader = createPublicClient({ chain, transport: http(node!.rpcUrl) });
    const mined = async (hash: Hex) => {
      const receipt = await reader.waitForTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
      return Number(receipt.blockNumber);
    };
    const amount = 1_234_567_890n; // micro-USDC
    await mined(
      await wallet.writeContract({
        address: addresses.vaultAssetAddress,
        abi: testUsdcAbi,
        functionName: 'mint',
        args: [account.address, amount],
      }),
    );
    await mined(
      await wallet.writeContract({
        address: addresses.vaultAssetAddress,
        abi: testUsdcAbi,
        functionName: 'approve',
        args: [addresses.lendingVaultAddress, amount],
      }),
    );

    const exported = await record('EXPORTED');
    const payTx = await wallet.writeContract({
      address: addresses.lendingVaultAddress,
      abi: lendingVaultAbi,
      functionName: 'payPurchaseOrder',
      args: [vaultRef('PO-2026-000042'), amount],
    });
    const payBlock = await mined(payTx);
    const payLog = (await reader.getTransactionReceipt({ hash: payTx })).logs.find(
      (l) => l.address.toLowerCase() === addresses.lendingVaultAddress.toLowerCase(),
    )!;
    const settled = await record('SETTLED');

    await waitUntil('three deliveries', () => received.slice(before).filter((r) => r.status === 200).length >= 3);
    const got = received.slice(before);
    expect(got.every((r) => r.verified && r.status === 200)).toBe(true);
    // The batch's events in chain order; the payment, of another key, is not held behind them (it may come first).
    const byId = new Map(got.map((r) => [r.id, r.body]));
    expect([...byId.keys()].sort()).toEqual(
      [`evt_${exported.txHash}_0`, `evt_${payTx}_${payLog.logIndex}`, `evt_${settled.txHash}_0`].sort(),
    );
    const stageIds = got.map((r) => r.id).filter((id) => id !== `evt_${payTx}_${payLog.logIndex}`);
    expect(stageIds).toEqual([`evt_${exported.txHash}_0`, `evt_${settled.txHash}_0`]);
    expect(byId.get(`evt_${exported.txHash}_0`)).toEqual(expectedBody('EXPORTED', exported));
    expect(byId.get(`evt_${payTx}_${payLog.logIndex}`)).toEqual({
      type: 'purchase_order.paid',
      data: {
        purchase_order_id: 'PO-2026-000042',
        payer: account.address,
        amount_usd_micro: '1234567890',
        tx_hash: payTx,
        block_number: payBlock,
        log_index: payLog.logIndex,
      },
    });
    expect(byId.get(`evt_${settled.txHash}_0`)).toEqual(expectedBody('SETTLED', settled));
    await waitUntil('the sixth delivery counted', () => watcher!.stats().delivered >= 6);
    expect(watcher!.stats()).toEqual({ events: 6, delivered: 6, failed: 0 });
  });

  it('a backlog of slow stage events never holds back a payment: it is read and delivered while they are still going, each batch in chain order', async () => {
    const before = received.length;
    const settledBefore = watcher!.stats().delivered;
    // The receiver takes 400 ms over each stage event from now on (a busy service); 10 stage events of one batch wait.
    slowStages = 400;
    const stages: Array<{ txHash: Hex; blockNumber: number }> = [];
    for (let i = 0; i < 10; i++) stages.push(await record(i % 2 === 0 ? 'EXPORTED' : 'SETTLED'));
    const account = privateKeyToAccount(deployerKey);
    const chain = ledgerChain(CHAIN_ID, node!.rpcUrl);
    const wallet = createWalletClient({ account, chain, transport: http(node!.rpcUrl) });
    const reader = createPublicClient({ chain, transport: http(node!.rpcUrl) });
    const amount = 1_000_000n;
    for (const [functionName, args] of [
      ['mint', [account.address, amount]],
      ['approve', [addresses.lendingVaultAddress, amount]],
    ] as const)
      await reader.waitForTransactionReceipt({
        hash: await wallet.writeContract({ address: addresses.vaultAssetAddress, abi: testUsdcAbi, functionName, args } as never),
      });
    const payTx = await wallet.writeContract({
      address: addresses.lendingVaultAddress,
      abi: lendingVaultAbi,
      functionName: 'payPurchaseOrder',
      args: [vaultRef('PO-2026-000043'), amount],
    });
    await reader.waitForTransactionReceipt({ hash: payTx });
    try {
      await waitUntil('the payment delivered', () => received.slice(before).some((r) => r.body.type === 'purchase_order.paid'));
      // Serial delivery would have posted the payment after all 10 stage events (4 s and more of them).
      const stagesFirst = received.slice(before).findIndex((r) => r.body.type === 'purchase_order.paid');
      expect(stagesFirst).toBeLessThan(stages.length);
      await waitUntil('every event delivered', () => watcher!.stats().delivered >= settledBefore + stages.length + 1, 30_000);
    } finally {
      slowStages = 0;
    }
    // The batch's stage events went one at a time, in chain order.
    expect(
      received
        .slice(before)
        .filter((r) => r.body.type === 'batch.stage_changed')
        .map((r) => r.id),
    ).toEqual(stages.map((s) => `evt_${s.txHash}_0`));
    expect(watcher!.stats().failed).toBe(0);
  });
});

describe('chain watcher on the local stack chain: a buyer payment made with npm run buyer-pay', () => {
  it('posts the payment as a signed purchase_order.paid webhook', async () => {
    const stack = JSON.parse(readFileSync(join(stackDataDir(), 'stack.json'), 'utf8')) as {
      chain_id: number;
      endpoints: Record<string, Hex>;
    };
    const rpcUrl = stack.endpoints.ledger!;
    const chain = ledgerChain(stack.chain_id, rpcUrl);
    const reader = createPublicClient({ chain, transport: http(rpcUrl) });
    const receiver = await startReceiver(SECRET);
    const head = await reader.getBlockNumber();
    const watcher = startChainWatcher({
      rpcUrl,
      chainId: stack.chain_id,
      traceLogAddress: stack.endpoints.trace_log!,
      batchTokenAddress: stack.endpoints.batch_token!,
      lendingVaultAddress: stack.endpoints.lending_vault!,
      webhookUrl: () => receiver.url,
      secret: SECRET,
      pollMs: 100,
      fromBlock: head + 1n,
    });
    try {
      const purchaseOrderId = `PO-WATCH-${randomBytes(4).toString('hex').toUpperCase()}`;
      const out: string[] = [];
      const errors: string[] = [];
      expect(
        await runBuyerPay(
          [purchaseOrderId, '--amount', '2.5'],
          (l) => out.push(l),
          (l) => errors.push(l),
          stackDataDir(),
        ),
      ).toBe(0);
      const payTx = out[0] as Hex;
      expect(payTx).toMatch(/^0x[0-9a-f]{64}$/);
      const receipt = await reader.getTransactionReceipt({ hash: payTx });
      const payLog = receipt.logs.find((l) => l.address.toLowerCase() === stack.endpoints.lending_vault!.toLowerCase())!;

      await waitUntil('the payment delivery', () => receiver.received.some((r) => r.body?.type === 'purchase_order.paid'));
      const [delivery, ...more] = receiver.received.filter((r) => r.body?.type === 'purchase_order.paid');
      expect(more).toEqual([]);
      expect(delivery!.verified).toBe(true);
      expect(delivery!.id).toBe(`evt_${payTx}_${payLog.logIndex}`);
      expect(delivery!.body).toEqual({
        type: 'purchase_order.paid',
        data: {
          purchase_order_id: purchaseOrderId,
          payer: privateKeyToAccount(devBuyerKey(stackDataDir())).address,
          amount_usd_micro: '2500000',
          tx_hash: payTx,
          block_number: Number(receipt.blockNumber),
          log_index: payLog.logIndex,
        },
      });
    } finally {
      await watcher.stop();
      await receiver.close();
    }
  });
});
