import {
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  encodeFunctionData,
  http,
  keccak256,
  parseEventLogs,
  toFunctionSelector,
  toHex,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount, type DeployedContracts } from '../../infra/ledger/deploy';
import { startHardhatNode, type HardhatNode } from '../../infra/local/hardhat-node';
import { batchTokenAbi, traceLogAbi } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { EvmTraceLogReader } from '../../shared/adapters/ledger/trace-log-reader';
import { readChainTrail } from '../../shared/adapters/ledger/trail-reader';
import { formatBatchId, tokenIdForBatch } from '../../shared/domain/ids';
import { maxRecordsPerTx } from '../../shared/domain/ledger-batching';

/**
 * The batched contract calls (docs/ledger.md#batched-contract-calls) on a hardhat node of their
 * own: `BatchToken.mintBatch` and `TraceLog.recordStages` write many records in one transaction,
 * each with its own event exactly as the single call emits it (so the readers find each batch's
 * record by token, and by transaction and log index), skip a record the single call would refuse
 * with an event naming the error, never reverting the others, and cost less gas per record.
 */

const CHAIN_ID = 31337;
const hash = (s: string): Hex => keccak256(toHex(s));
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const errorsAbi = [...batchTokenAbi, ...traceLogAbi];
/** Token and batch id of batch `n` of 2001 (a year no other test here mints in). */
const token = (n: number) => tokenIdForBatch(2001, n);
const batchId = (n: number) => formatBatchId(2001, n);
/** The selector of AccessControl's `AccessControlUnauthorizedAccount(address, bytes32)`. */
const UNAUTHORIZED = toFunctionSelector('error AccessControlUnauthorizedAccount(address account, bytes32 neededRole)').slice(2);

let node: HardhatNode;
let signerKey: Hex;
let contracts: DeployedContracts;

beforeAll(async () => {
  node = await startHardhatNode();
  try {
    const artifacts = await compileContracts();
    signerKey = generatePrivateKey();
    await fundAccount(node.rpcUrl, privateKeyToAccount(signerKey).address, 10n ** 21n);
    contracts = await deployContracts({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, deployerKey: signerKey, artifacts });
  } catch (err) {
    await node.stop();
    throw err;
  }
}, 90_000);

afterAll(async () => {
  await node?.stop();
});

const chain = () => ledgerChain(CHAIN_ID, node.rpcUrl);
const reader = () => createPublicClient({ chain: chain(), transport: http(node.rpcUrl), pollingInterval: 50 });
const wallet = (key: Hex = signerKey) =>
  createWalletClient({ account: privateKeyToAccount(key), chain: chain(), transport: http(node.rpcUrl) });
const signer = () => privateKeyToAccount(signerKey).address;

async function send(to: Hex, data: Hex, key: Hex = signerKey, gas = 5_000_000n): Promise<TransactionReceipt> {
  const tx = await wallet(key).sendTransaction({ to, data, gas });
  return reader().waitForTransactionReceipt({ hash: tx });
}
const mintBatchData = (records: Array<{ tokenId: bigint; batchId: string; auditHash: Hex }>) =>
  encodeFunctionData({ abi: batchTokenAbi, functionName: 'mintBatch', args: [signer(), records] });
const recordStagesData = (records: Array<{ tokenId: bigint; stage: number; evidenceCid: string; auditHash: Hex }>) =>
  encodeFunctionData({ abi: traceLogAbi, functionName: 'recordStages', args: [records] });

describe('BatchToken.mintBatch', () => {
  it("mints every record with its own BatchMinted event, skipping an existing id, a repeat within the call, an empty batch id and a batch id not the token's", async () => {
    const single = await send(
      contracts.batchTokenAddress,
      encodeFunctionData({ abi: batchTokenAbi, functionName: 'mint', args: [signer(), token(5002), batchId(5002), hash('5002')] }),
    );
    expect(single.status).toBe('success');

    const receipt = await send(
      contracts.batchTokenAddress,
      mintBatchData([
        { tokenId: token(5001), batchId: batchId(5001), auditHash: hash('5001') },
        { tokenId: token(5002), batchId: 'BATCH-5002-AGAIN', auditHash: hash('x') }, // exists
        { tokenId: token(5003), batchId: '', auditHash: hash('empty') }, // empty batch id
        { tokenId: token(5004), batchId: batchId(5004), auditHash: hash('5004') },
        { tokenId: token(5004), batchId: batchId(5004), auditHash: hash('y') }, // repeated in the call
        { tokenId: token(5005), batchId: batchId(5006), auditHash: hash('5005') }, // another token's batch id
      ]),
    );
    expect(receipt.status).toBe('success');
    const minted = parseEventLogs({ abi: batchTokenAbi, eventName: 'BatchMinted', logs: receipt.logs });
    expect(minted.map((l) => l.args)).toEqual([
      { tokenId: token(5001), batchId: batchId(5001), auditHash: hash('5001') },
      { tokenId: token(5004), batchId: batchId(5004), auditHash: hash('5004') },
    ]);
    const skipped = parseEventLogs({ abi: batchTokenAbi, eventName: 'MintSkipped', logs: receipt.logs });
    expect(skipped.map((l) => [l.args.tokenId, decodeErrorResult({ abi: errorsAbi, data: l.args.reason }).errorName])).toEqual([
      [token(5002), 'ERC721InvalidSender'],
      [token(5003), 'EmptyBatchId'],
      [token(5004), 'ERC721InvalidSender'],
      [token(5005), 'BatchIdMismatch'],
    ]);
    expect(decodeErrorResult({ abi: errorsAbi, data: skipped[3]!.args.reason }).args).toEqual([token(5005), batchId(5005)]);
    const read = (tokenId: bigint) =>
      reader().readContract({ address: contracts.batchTokenAddress, abi: batchTokenAbi, functionName: 'batchIdOf', args: [tokenId] });
    expect(await Promise.all([5001, 5002, 5003, 5004, 5005].map((n) => read(token(n))))).toEqual([
      batchId(5001),
      batchId(5002),
      '',
      batchId(5004),
      '',
    ]);
    expect(
      await reader().readContract({
        address: contracts.batchTokenAddress,
        abi: batchTokenAbi,
        functionName: 'ownerOf',
        args: [token(5004)],
      }),
    ).toBe(signer());
    // Per batch, the trail reader finds its own mint in the shared transaction.
    const trail = await readChainTrail({ publicClient: reader() as never, chainId: CHAIN_ID, ...contracts, tokenId: token(5004) });
    expect(trail.mints).toEqual([
      expect.objectContaining({ tokenId: token(5004), batchId: batchId(5004), txHash: receipt.transactionHash }),
    ]);
  });

  it('refuses a caller without MINTER_ROLE as a whole (nothing minted)', async () => {
    const stranger = generatePrivateKey();
    await fundAccount(node.rpcUrl, privateKeyToAccount(stranger).address, 10n ** 20n);
    // The automining node refuses a reverting transaction at once, naming the error.
    await expect(
      send(contracts.batchTokenAddress, mintBatchData([{ tokenId: token(5100), batchId: batchId(5100), auditHash: hash('s') }]), stranger),
    ).rejects.toThrow(new RegExp(UNAUTHORIZED));
    expect(
      await reader().readContract({
        address: contracts.batchTokenAddress,
        abi: batchTokenAbi,
        functionName: 'batchIdOf',
        args: [token(5100)],
      }),
    ).toBe('');
  });
});

describe('TraceLog.recordStages', () => {
  it('records every record with its own StageRecorded event, skipping a stage code out of range; readers find each by token and by log index', async () => {
    const records = [
      { tokenId: 6001n, stage: 1, evidenceCid: CID, auditHash: hash('6001-1') },
      { tokenId: 6002n, stage: 9, evidenceCid: CID, auditHash: hash('6002-9') }, // no such stage
      { tokenId: 6002n, stage: 2, evidenceCid: CID, auditHash: hash('6002-2') },
      { tokenId: 6003n, stage: 6, evidenceCid: '', auditHash: hash('6003-6') },
    ];
    const receipt = await send(contracts.traceLogAddress, recordStagesData(records));
    expect(receipt.status).toBe('success');
    const recorded = parseEventLogs({ abi: traceLogAbi, eventName: 'StageRecorded', logs: receipt.logs });
    expect(recorded.map((l) => l.args)).toEqual([records[0]!, records[2]!, records[3]!].map((r) => ({ ...r, recorder: signer() })));
    const skipped = parseEventLogs({ abi: traceLogAbi, eventName: 'StageSkipped', logs: receipt.logs });
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.args).toMatchObject({ tokenId: 6002n, stage: 9 });
    expect(decodeErrorResult({ abi: errorsAbi, data: skipped[0]!.args.reason })).toMatchObject({ errorName: 'InvalidStage', args: [9] });

    // By transaction and log index (the chain-event path and /audit's check), each record on its own.
    const logReader = new EvmTraceLogReader({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, traceLogAddress: contracts.traceLogAddress });
    for (const log of recorded) {
      expect(await logReader.stageRecordedAt(receipt.transactionHash, log.logIndex)).toMatchObject({
        tokenId: log.args.tokenId,
        stage: log.args.stage,
        auditHash: log.args.auditHash,
      });
    }
    expect(await logReader.stageRecordedAt(receipt.transactionHash, skipped[0]!.logIndex)).toBeNull();
    // By token (verify and the trace page): 6002 has its MILLED record only.
    const trail = await readChainTrail({ publicClient: reader() as never, chainId: CHAIN_ID, ...contracts, tokenId: 6002n });
    expect(trail.stages).toEqual([expect.objectContaining({ tokenId: 6002n, stage: 2, auditHash: hash('6002-2') })]);
  });

  it('refuses a caller without RECORDER_ROLE as a whole', async () => {
    const stranger = generatePrivateKey();
    await fundAccount(node.rpcUrl, privateKeyToAccount(stranger).address, 10n ** 20n);
    await expect(
      send(contracts.traceLogAddress, recordStagesData([{ tokenId: 6100n, stage: 1, evidenceCid: CID, auditHash: hash('s') }]), stranger),
    ).rejects.toThrow(new RegExp(UNAUTHORIZED));
    const trail = await readChainTrail({ publicClient: reader() as never, chainId: CHAIN_ID, ...contracts, tokenId: 6100n });
    expect(trail.stages).toEqual([]);
  });
});

describe('gas per record', () => {
  const N = 20;
  it(`batched: ${N} stage records in one transaction cost less per record than one transaction per record`, async () => {
    const singles: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(
        contracts.traceLogAddress,
        encodeFunctionData({ abi: traceLogAbi, functionName: 'recordStage', args: [7000n + BigInt(i), 1, CID, hash(`s${i}`)] }),
      );
      singles.push(r.gasUsed);
    }
    const recordSingle = singles.reduce((a, b) => a + b) / 3n;
    const stages = await send(
      contracts.traceLogAddress,
      recordStagesData(
        Array.from({ length: N }, (_, i) => ({ tokenId: 7100n + BigInt(i), stage: 1, evidenceCid: CID, auditHash: hash(`b${i}`) })),
      ),
    );
    const recordBatched = stages.gasUsed / BigInt(N);
    process.stdout.write(
      `gas per stage record: ${recordSingle} alone, ${recordBatched} in a batch of ${N} (${percent(recordBatched, recordSingle)})\n`,
    );
    // A record is one event: batched, the transaction's base cost is shared (at most half of a single record's gas).
    expect(recordBatched * 2n).toBeLessThan(recordSingle);
  }, 60_000);

  it('a mint in a mintBatch of 90 costs at most 30 % of a single mint transaction (no storage per token: docs/ledger.md#batchtoken-storage)', async () => {
    const mint = (n: number) =>
      send(
        contracts.batchTokenAddress,
        encodeFunctionData({ abi: batchTokenAbi, functionName: 'mint', args: [signer(), token(n), batchId(n), hash(`m${n}`)] }),
      );
    // Batch chunkStart(k) is the first id of the k-th chunk of 256 ids from batch 8000 on (none of them minted yet).
    const chunkStart = (k: number) => 8000 + Number((256n - (token(8000) % 256n)) % 256n) + 256 * k;
    // A single mint as the service sends one, its chunk owned already; and the first mint of a chunk (also stores its owner).
    const mintFirst = (await mint(chunkStart(0))).gasUsed;
    const mintSingle = (await mint(chunkStart(0) + 1)).gasUsed;
    const perMint = async (from: number, count: number) => {
      const receipt = await send(
        contracts.batchTokenAddress,
        mintBatchData(
          Array.from({ length: count }, (_, i) => ({ tokenId: token(from + i), batchId: batchId(from + i), auditHash: hash(`m${i}`) })),
        ),
        signerKey,
        29_000_000n,
      );
      expect(parseEventLogs({ abi: batchTokenAbi, eventName: 'BatchMinted', logs: receipt.logs })).toHaveLength(count);
      return receipt.gasUsed / BigInt(count);
    };
    // Each batch opens a chunk of its own (a fresh bitmap slot and chunk owner shared by its records): the dearer case.
    const at20 = await perMint(chunkStart(1), 20);
    const at90 = await perMint(chunkStart(2), 90);
    // The same sizes inside a chunk opened already.
    const at20Open = await perMint(chunkStart(1) + 20, 20);
    const at90Open = await perMint(chunkStart(2) + 90, 90);
    process.stdout.write(
      `gas per mint: ${mintSingle} alone (${mintFirst} for the first of a chunk); in a batch opening a chunk: ` +
        `${at20} at 20 (${percent(at20, mintSingle)}), ${at90} at 90 (${percent(at90, mintSingle)}); ` +
        `in a chunk opened already: ${at20Open} at 20 (${percent(at20Open, mintSingle)}), ${at90Open} at 90 (${percent(at90Open, mintSingle)})\n`,
    );
    expect(at90 * 100n).toBeLessThanOrEqual(mintSingle * 30n);
  }, 60_000);

  it("a mintBatch of the writer's cap stays under half a block even when every record opens a chunk of ids of its own", async () => {
    const cap = maxRecordsPerTx('MINT');
    // Ids 256 apart: each record writes a fresh bitmap slot and a fresh chunk owner (the service's ids are consecutive).
    const ns = Array.from({ length: cap }, (_, i) => 100_000 + 256 * i);
    const receipt = await send(
      contracts.batchTokenAddress,
      mintBatchData(ns.map((n) => ({ tokenId: token(n), batchId: batchId(n), auditHash: hash(`w${n}`) }))),
      signerKey,
      29_000_000n,
    );
    expect(parseEventLogs({ abi: batchTokenAbi, eventName: 'BatchMinted', logs: receipt.logs })).toHaveLength(cap);
    process.stdout.write(`gas of ${cap} mints in distinct chunks: ${receipt.gasUsed} (${receipt.gasUsed / BigInt(cap)} per mint)\n`);
    expect(receipt.gasUsed).toBeLessThan(15_000_000n);
  }, 60_000);
});

const percent = (part: bigint, whole: bigint) => `${((100 * Number(part)) / Number(whole)).toFixed(0)} %`;
