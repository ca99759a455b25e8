import { createPublicClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount, type DeployedContracts } from '../../infra/ledger/deploy';
import { startHardhatNode, type HardhatNode } from '../../infra/local/hardhat-node';
import { buildEvidencePackage } from '../../shared/domain/evidence-package';
import { EvmLedger, ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { readChainTrail } from '../../shared/adapters/ledger/trail-reader';
import { buildAuditEntry, GENESIS_HASH } from '../../shared/domain/audit';
import { verifyAuditTrail } from '../../shared/domain/audit-verify';
import { tokenIdForBatch } from '../../shared/domain/ids';
import type { AuditEntry } from '../../shared/domain/records';

const CHAIN_ID = 31337;
const BATCH = 'BATCH-2026-000042';
const OTHER_BATCH = 'BATCH-2026-000043';
const TOKEN = tokenIdForBatch(2026, 42);
const OTHER_TOKEN = tokenIdForBatch(2026, 43);

describe('readChainTrail on a local hardhat node', () => {
  let node: HardhatNode;
  let addresses: DeployedContracts;
  let ledger: EvmLedger;
  let entries: AuditEntry[];
  let cids: string[];
  const txs: Record<string, Hex> = {};

  beforeAll(async () => {
    node = await startHardhatNode();
    try {
      const artifacts = await compileContracts();
      const signerKey = generatePrivateKey();
      await fundAccount(node.rpcUrl, privateKeyToAccount(signerKey).address, 10n ** 21n);
      addresses = await deployContracts({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, deployerKey: signerKey, artifacts });
      ledger = new EvmLedger({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, signerPrivateKey: signerKey, ...addresses });

      // The trail of BATCH: submitted (minted), GRADED, MILLED; plus another token's mint and stage.
      const graded = await buildEvidencePackage({ evidence: { grade: 'screen18', moisture_pct: 11.2 } });
      const milled = await buildEvidencePackage({
        evidence: { mill_id: 'MILL-1', outturn_kg: 200, milled_at: '2026-03-03T10:00:00.000Z' },
      });
      cids = [graded.cid, milled.cid];
      const specs = [
        { type: 'BATCH_SUBMITTED', payload: { token_id: TOKEN.toString(), weight_kg: 250 } },
        {
          type: 'STAGE_CHANGED',
          payload: {
            stage: 'GRADED',
            previous_stage: 'DELIVERED',
            evidence_ipfs_cid: graded.cid,
            evidence: { grade: 'screen18', moisture_pct: 11.2 },
            token_id: TOKEN.toString(),
          },
        },
        {
          type: 'STAGE_CHANGED',
          payload: {
            stage: 'MILLED',
            previous_stage: 'GRADED',
            evidence_ipfs_cid: milled.cid,
            evidence: { mill_id: 'MILL-1', outturn_kg: 200, milled_at: '2026-03-03T10:00:00.000Z' },
            token_id: TOKEN.toString(),
          },
        },
      ];
      entries = [];
      let prevHash = GENESIS_HASH;
      for (const [i, s] of specs.entries()) {
        const e = buildAuditEntry({
          batchId: BATCH,
          seq: i + 1,
          at: `2026-03-0${i + 1}T09:00:00.000Z`,
          actor: 'agent-COOP-1',
          prevHash,
          ...s,
        });
        entries.push(e);
        prevHash = e.hash;
      }
      const wait = async (p: Promise<{ txHash: Hex }>) => {
        const { txHash } = await p;
        expect((await ledger.waitForReceipt(txHash, 15_000))?.status).toBe('success');
        return txHash;
      };
      txs.mint = await wait(ledger.mintBatchToken({ tokenId: TOKEN, batchId: BATCH, auditHash: `0x${entries[0]!.hash}` }));
      txs.otherMint = await wait(ledger.mintBatchToken({ tokenId: OTHER_TOKEN, batchId: OTHER_BATCH, auditHash: `0x${'11'.repeat(32)}` }));
      txs.graded = await wait(
        ledger.recordStage({ tokenId: TOKEN, stage: 'GRADED', evidenceCid: graded.cid, auditHash: `0x${entries[1]!.hash}` }),
      );
      txs.otherStage = await wait(
        ledger.recordStage({ tokenId: OTHER_TOKEN, stage: 'GRADED', evidenceCid: graded.cid, auditHash: `0x${'22'.repeat(32)}` }),
      );
      txs.milled = await wait(
        ledger.recordStage({ tokenId: TOKEN, stage: 'MILLED', evidenceCid: milled.cid, auditHash: `0x${entries[2]!.hash}` }),
      );
    } catch (err) {
      await node.stop();
      throw err;
    }
  }, 90_000);

  afterAll(async () => {
    await node?.stop();
  });

  const read = (over: Partial<Parameters<typeof readChainTrail>[0]> = {}) =>
    readChainTrail({
      rpcUrl: node.rpcUrl,
      chainId: CHAIN_ID,
      batchTokenAddress: addresses.batchTokenAddress,
      traceLogAddress: addresses.traceLogAddress,
      tokenId: TOKEN,
      ...over,
    });

  it('returns the mint and both stages of the token, in chain order, and nothing of another token', async () => {
    const trail = await read();
    expect(trail.mints).toEqual([
      {
        tokenId: TOKEN,
        batchId: BATCH,
        auditHash: `0x${entries[0]!.hash}`,
        txHash: txs.mint,
        blockNumber: expect.any(BigInt),
        logIndex: expect.any(Number),
      },
    ]);
    expect(trail.stages).toEqual([
      {
        tokenId: TOKEN,
        stage: 1,
        evidenceCid: cids[0],
        auditHash: `0x${entries[1]!.hash}`,
        txHash: txs.graded,
        recorder: ledger.signerAddress,
        blockNumber: expect.any(BigInt),
        logIndex: expect.any(Number),
      },
      {
        tokenId: TOKEN,
        stage: 2,
        evidenceCid: cids[1],
        auditHash: `0x${entries[2]!.hash}`,
        txHash: txs.milled,
        recorder: ledger.signerAddress,
        blockNumber: expect.any(BigInt),
        logIndex: expect.any(Number),
      },
    ]);
    expect(trail.stages[0]!.blockNumber).toBeLessThan(trail.stages[1]!.blockNumber);

    const other = await read({ tokenId: OTHER_TOKEN });
    expect(other.mints.map((m) => m.txHash)).toEqual([txs.otherMint]);
    expect(other.stages.map((s) => s.txHash)).toEqual([txs.otherStage]);
    expect((await read({ tokenId: 777n })).mints).toEqual([]);
  });

  it('gives the same events through a given public client, in 1-block chunks, and honours fromBlock', async () => {
    const publicClient = createPublicClient({ chain: ledgerChain(CHAIN_ID, node.rpcUrl), transport: http(node.rpcUrl) });
    const whole = await read();
    expect(
      await readChainTrail({
        publicClient,
        chainId: CHAIN_ID,
        batchTokenAddress: addresses.batchTokenAddress,
        traceLogAddress: addresses.traceLogAddress,
        tokenId: TOKEN,
      }),
    ).toEqual(whole);
    expect(await read({ maxBlockRange: 1n })).toEqual(whole);
    const late = await read({ fromBlock: whole.stages[1]!.blockNumber });
    expect(late.mints).toEqual([]);
    expect(late.stages.map((s) => s.txHash)).toEqual([txs.milled]);
  });

  it('refuses an endpoint of another chain id', async () => {
    await expect(read({ chainId: 1 })).rejects.toThrow(/chain 31337, expected 1/);
  });

  it('verifies the trail against what it reads', async () => {
    const chain = await read();
    // Only mint and stage entries here: their own transactions anchor them (no periodic anchor needed).
    const result = await verifyAuditTrail({ batchId: BATCH, entries, chain, anchoring: { claimed: [], rootBlock: async () => null } });
    expect(result.checks.filter((c) => !c.ok)).toEqual([]);
    expect(result.verified).toBe(true);
  });
});
