import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { keccak256, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount, type DeployedContracts } from '../../infra/ledger/deploy';
import { startChainWatcher, type ChainWatcher } from '../../infra/local/chain-watcher';
import { startHardhatNode, type HardhatNode } from '../../infra/local/hardhat-node';
import { EvmLedger } from '../../shared/adapters/ledger/evm-ledger';
import type { LedgerStageName } from '../../shared/adapters/ledger/abi';
import { tokenIdForBatch } from '../../shared/domain/ids';

/**
 * The local chain watcher against a real hardhat node: TraceLog StageRecorded logs become signed
 * `batch.stage_changed` webhooks, in chain order, with a stable webhook-id that a retry repeats.
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

describe('chain watcher (hardhat node → signed chain-events webhooks)', () => {
  let node: HardhatNode | undefined;
  let server: Server | undefined;
  let watcher: ChainWatcher | undefined;
  let addresses: DeployedContracts;
  let ledger: EvmLedger;
  const received: Received[] = [];
  let failNext = 0;

  beforeAll(async () => {
    node = await startHardhatNode();
    const artifacts = await compileContracts();
    const key = generatePrivateKey();
    await fundAccount(node.rpcUrl, privateKeyToAccount(key).address, 10n ** 21n);
    addresses = await deployContracts({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, deployerKey: key, artifacts });
    ledger = new EvmLedger({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, signerPrivateKey: key, ...addresses });

    const verifier = new Webhook(SECRET);
    server = createServer((req, res) => {
      void readBody(req).then((raw) => {
        const h = (n: string) => String(req.headers[n] ?? '');
        let verified = false;
        try {
          verifier.verify(raw, { 'webhook-id': h('webhook-id'), 'webhook-timestamp': h('webhook-timestamp'), 'webhook-signature': h('webhook-signature') });
          verified = true;
        } catch { /* recorded as unverified */ }
        const status = !verified ? 401 : failNext > 0 ? (failNext--, 500) : 200;
        received.push({ id: h('webhook-id'), status, verified, body: JSON.parse(raw) });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ received: status === 200 }));
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/chain-events`;

    watcher = startChainWatcher({
      rpcUrl: node.rpcUrl, chainId: CHAIN_ID, traceLogAddress: addresses.traceLogAddress, batchTokenAddress: addresses.batchTokenAddress,
      webhookUrl: () => url, secret: SECRET, pollMs: 100,
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

  it('delivers each StageRecorded event as a signed batch.stage_changed webhook, in chain order', async () => {
    const mint = await ledger.mintBatchToken({ tokenId: TOKEN_ID, batchId: BATCH_ID, auditHash: keccak256(toHex('mint')) });
    expect((await ledger.waitForReceipt(mint.txHash, 10_000))?.status).toBe('success');
    const graded = await record('GRADED');
    const milled = await record('MILLED');

    await waitUntil('two deliveries', () => received.filter((r) => r.status === 200).length >= 2);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(received.map((r) => r.id)).toEqual([`evt_${graded.txHash}_0`, `evt_${milled.txHash}_0`]);
    expect(received.map((r) => r.body)).toEqual([expectedBody('GRADED', graded), expectedBody('MILLED', milled)]);
    expect(watcher!.stats()).toEqual({ events: 2, delivered: 2, failed: 0 });
  });

  it('retries a delivery the receiver answered 500 with the same webhook-id and body', async () => {
    const before = received.length;
    failNext = 1;
    const warehoused = await record('WAREHOUSED');

    await waitUntil('the retried delivery', () => received.slice(before).some((r) => r.status === 200));
    const tries = received.slice(before);
    expect(tries.map((r) => [r.id, r.status])).toEqual([[`evt_${warehoused.txHash}_0`, 500], [`evt_${warehoused.txHash}_0`, 200]]);
    expect(tries.every((r) => r.verified)).toBe(true);
    expect(tries[1]!.body).toEqual(tries[0]!.body);
    expect(tries[1]!.body).toEqual(expectedBody('WAREHOUSED', warehoused));
    expect(watcher!.stats()).toEqual({ events: 3, delivered: 3, failed: 0 });
  });
});
