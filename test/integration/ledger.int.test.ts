import { createPublicClient, createWalletClient, http, keccak256, parseEventLogs, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount, type DeployedContracts } from '../../infra/ledger/deploy';
import { freePort, startHardhatNode, type HardhatNode } from '../../infra/local/hardhat-node';
import { batchTokenAbi, traceLogAbi } from '../../shared/adapters/ledger/abi';
import { EvmLedger, ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { createEvmLedgerFromEnv } from '../../shared/adapters/ledger/evm-ledger-env';
import { LedgerRefusedError, LedgerTransportError, LedgerUnavailableError, TokenAlreadyMintedError } from '../../shared/domain/errors';
import { auditAnchorLookup } from '../../shared/adapters/ledger/anchor-reader';
import { formatBatchId, tokenIdForBatch } from '../../shared/domain/ids';
import { wire } from '../unit/support/errors';

const CHAIN_ID = 31337;
const auditHash = (s: string): Hex => keccak256(toHex(s));
/** Tokens of batches BATCH-2026-001001 and -001002 (a token id stands for its batch id). */
const T1001 = tokenIdForBatch(2026, 1001);
const T1002 = tokenIdForBatch(2026, 1002);

describe('EvmLedger on a local hardhat node', () => {
  let node: HardhatNode;
  let signerKey: Hex;
  let addresses: DeployedContracts;
  let ledger: EvmLedger;

  beforeAll(async () => {
    node = await startHardhatNode();
    try {
      const artifacts = await compileContracts();
      signerKey = generatePrivateKey();
      await fundAccount(node.rpcUrl, privateKeyToAccount(signerKey).address, 10n ** 21n);
      addresses = await deployContracts({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, deployerKey: signerKey, artifacts });
      ledger = new EvmLedger({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, signerPrivateKey: signerKey, ...addresses });
    } catch (err) {
      await node.stop();
      throw err;
    }
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
  });

  const client = () => createPublicClient({ chain: ledgerChain(CHAIN_ID, node.rpcUrl), transport: http(node.rpcUrl) });

  it('mints a token to the custodian, waits for the receipt and reads the batch id', async () => {
    const { txHash } = await ledger.mintBatchToken({ tokenId: T1001, batchId: formatBatchId(2026, 1001), auditHash: auditHash('a') });
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);

    const receipt = await ledger.waitForReceipt(txHash, 10_000);
    expect(receipt).toEqual({ status: 'success', blockNumber: expect.any(BigInt), txHash });

    expect(await ledger.batchIdOfToken(T1001)).toBe(formatBatchId(2026, 1001));
    expect(await ledger.batchIdOfToken(999_999n)).toBeNull();

    const owner = await client().readContract({
      address: addresses.batchTokenAddress,
      abi: batchTokenAbi,
      functionName: 'ownerOf',
      args: [T1001],
    });
    expect(owner.toLowerCase()).toBe(ledger.custodian.toLowerCase());

    const logs = parseEventLogs({
      abi: batchTokenAbi,
      eventName: 'BatchMinted',
      logs: (await client().getTransactionReceipt({ hash: txHash })).logs,
    });
    expect(logs).toHaveLength(1);
    expect(logs[0]?.args).toEqual({ tokenId: T1001, batchId: formatBatchId(2026, 1001), auditHash: auditHash('a') });
  });

  it('refuses to mint an existing token id with TokenAlreadyMintedError (nothing broadcast)', async () => {
    const { txHash } = await ledger.mintBatchToken({ tokenId: T1002, batchId: formatBatchId(2026, 1002), auditHash: auditHash('b') });
    await ledger.waitForReceipt(txHash, 10_000);
    const blockBefore = await client().getBlockNumber();

    const again = ledger.mintBatchToken({ tokenId: T1002, batchId: 'BATCH-OTHER', auditHash: auditHash('c') });
    await expect(again).rejects.toBeInstanceOf(TokenAlreadyMintedError);
    await expect(again).rejects.toMatchObject({ tokenId: T1002 });

    expect(await client().getBlockNumber()).toBe(blockBefore);
    expect(await ledger.batchIdOfToken(T1002)).toBe(formatBatchId(2026, 1002));
  });

  it("refuses to mint a batch id other than the token's with LedgerRefusedError BatchIdMismatch (nothing broadcast)", async () => {
    const blockBefore = await client().getBlockNumber();
    const wrong = ledger.mintBatchToken({
      tokenId: tokenIdForBatch(2026, 1003),
      batchId: formatBatchId(2026, 1004),
      auditHash: auditHash('w'),
    });
    await expect(wrong).rejects.toBeInstanceOf(LedgerRefusedError);
    await expect(wrong).rejects.toMatchObject({ reason: 'BatchIdMismatch' });
    expect(await client().getBlockNumber()).toBe(blockBefore);
    expect(await ledger.batchIdOfToken(tokenIdForBatch(2026, 1003))).toBeNull();
  });

  it('records a stage and the StageRecorded event decodes with viem', async () => {
    const cid = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
    const { txHash } = await ledger.recordStage({ tokenId: T1001, stage: 'MILLED', evidenceCid: cid, auditHash: auditHash('m') });
    const receipt = await ledger.waitForReceipt(txHash, 10_000);
    expect(receipt?.status).toBe('success');

    const logs = parseEventLogs({
      abi: traceLogAbi,
      eventName: 'StageRecorded',
      logs: (await client().getTransactionReceipt({ hash: txHash })).logs,
    });
    expect(logs).toHaveLength(1);
    expect(logs[0]?.address.toLowerCase()).toBe(addresses.traceLogAddress.toLowerCase());
    expect(logs[0]?.args).toEqual({
      tokenId: T1001,
      stage: 2,
      evidenceCid: cid,
      auditHash: auditHash('m'),
      recorder: ledger.signerAddress,
    });
  });

  it('lands 20 concurrent recordStage calls (one nonce each, all mined)', async () => {
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ledger.recordStage({ tokenId: 2000n + BigInt(i), stage: 'WAREHOUSED', evidenceCid: `cid-${i}`, auditHash: auditHash(`w${i}`) }),
      ),
    );
    expect(new Set(sent.map((s) => s.txHash)).size).toBe(20);

    const receipts = await Promise.all(sent.map((s) => ledger.waitForReceipt(s.txHash, 15_000)));
    expect(receipts.map((r) => r?.status)).toEqual(Array(20).fill('success'));

    const txs = await Promise.all(sent.map((s) => client().getTransaction({ hash: s.txHash })));
    expect(new Set(txs.map((t) => t.nonce)).size).toBe(20);

    const events = await client().getContractEvents({
      address: addresses.traceLogAddress,
      abi: traceLogAbi,
      eventName: 'StageRecorded',
      args: { stage: 3 },
      fromBlock: 0n,
    });
    expect(events.map((e) => e.args.evidenceCid).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `cid-${i}`).sort());
  });

  it('returns null from waitForReceipt when no receipt arrives in time', async () => {
    const unknown = auditHash('no such transaction');
    const started = Date.now();
    expect(await ledger.waitForReceipt(unknown, 300)).toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('rejects malformed input before sending anything', async () => {
    await expect(ledger.mintBatchToken({ tokenId: 1n, batchId: '', auditHash: auditHash('x') })).rejects.toBeInstanceOf(RangeError);
    await expect(ledger.mintBatchToken({ tokenId: 1n, batchId: 'B', auditHash: '0x1234' })).rejects.toBeInstanceOf(RangeError);
    await expect(
      ledger.recordStage({ tokenId: 1n, stage: 'ROASTED' as 'MILLED', evidenceCid: '', auditHash: auditHash('x') }),
    ).rejects.toBeInstanceOf(RangeError);
  });

  it('maps an unreachable RPC endpoint to LedgerUnavailableError', async () => {
    const closedPort = await freePort();
    const offline = new EvmLedger({
      rpcUrl: `http://127.0.0.1:${closedPort}`,
      chainId: CHAIN_ID,
      signerPrivateKey: signerKey,
      ...addresses,
      retryCount: 0,
    });
    await expect(offline.mintBatchToken({ tokenId: 5n, batchId: 'B-5', auditHash: auditHash('5') })).rejects.toBeInstanceOf(
      LedgerUnavailableError,
    );
    await expect(offline.recordStage({ tokenId: 5n, stage: 'GRADED', evidenceCid: 'x', auditHash: auditHash('5') })).rejects.toBeInstanceOf(
      LedgerUnavailableError,
    );
    await expect(offline.batchIdOfToken(5n)).rejects.toBeInstanceOf(LedgerUnavailableError);
    await expect(wire(offline.waitForReceipt(auditHash('5'), 1_000))).rejects.toMatchObject({ code: 'LEDGER_UNAVAILABLE', status: 503 });
  });

  it('createEvmLedgerFromEnv builds a working ledger and names a missing variable', async () => {
    const env = {
      LEDGER_RPC_URL: node.rpcUrl,
      LEDGER_CHAIN_ID: String(CHAIN_ID),
      LEDGER_SIGNER_KEY: signerKey,
      BATCH_TOKEN_ADDRESS: addresses.batchTokenAddress,
      TRACE_LOG_ADDRESS: addresses.traceLogAddress,
    };
    const fromEnv = createEvmLedgerFromEnv(env);
    expect(await fromEnv.batchIdOfToken(T1001)).toBe(formatBatchId(2026, 1001));

    for (const name of Object.keys(env)) {
      expect(() => createEvmLedgerFromEnv({ ...env, [name]: undefined })).toThrow(name);
    }
    expect(() => createEvmLedgerFromEnv({ ...env, LEDGER_CHAIN_ID: 'abc' })).toThrow('LEDGER_CHAIN_ID');
    expect(() => createEvmLedgerFromEnv({ ...env, BATCH_TOKEN_ADDRESS: '0x12' })).toThrow('BATCH_TOKEN_ADDRESS');
    expect(() => createEvmLedgerFromEnv({ ...env, LEDGER_RPC_RETRY_COUNT: '-1' })).toThrow('LEDGER_RPC_RETRY_COUNT');

    // Without transport retries a refused mint surfaces at once (hardhat reports reverts as -32603).
    const noRetry = createEvmLedgerFromEnv({ ...env, LEDGER_RPC_RETRY_COUNT: '0' });
    const started = performance.now();
    await expect(
      noRetry.mintBatchToken({ tokenId: T1001, batchId: formatBatchId(2026, 1001), auditHash: auditHash('a') }),
    ).rejects.toBeInstanceOf(TokenAlreadyMintedError);
    expect(performance.now() - started).toBeLessThan(400);
  });

  it('a revert found in gas estimation is a refusal with the custom error decoded (AlreadyAnchored), not an RPC failure; the chain tells where the root is', async () => {
    const root = auditHash(`root-${Date.now()}`);
    const kept: string[] = [];
    const keep = async (signed: { txHash: Hex }) => void kept.push(signed.txHash);
    const { txHash } = await ledger.anchorAuditRootKept({ root, headCount: 2 }, keep);
    const receipt = await ledger.waitForReceipt(txHash, 10_000);
    expect(receipt?.status).toBe('success');
    const again = ledger.anchorAuditRootKept({ root, headCount: 2 }, keep);
    await expect(again).rejects.toBeInstanceOf(LedgerRefusedError);
    await expect(again).rejects.toMatchObject({ reason: 'AlreadyAnchored', operation: 'anchor', code: 'LEDGER_UNAVAILABLE' });
    expect(kept).toEqual([txHash]); // nothing signed or kept for the refused one
    const lookup = auditAnchorLookup({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, address: addresses.auditAnchorAddress, retryCount: 0 });
    expect(await lookup(root)).toEqual({ block_number: Number(receipt!.blockNumber), tx_hash: txHash });
    expect(await lookup(auditHash('never anchored'))).toBeNull();
  });

  it('a trace-log record refused in estimation (signer without RECORDER_ROLE) is a LedgerRefusedError, uses no nonce, and the next mint lands', async () => {
    const account = privateKeyToAccount(signerKey);
    const wallet = createWalletClient({ account, chain: ledgerChain(CHAIN_ID, node.rpcUrl), transport: http(node.rpcUrl) });
    const role = keccak256(toHex('RECORDER_ROLE'));
    const revoke = await wallet.writeContract({
      address: addresses.traceLogAddress,
      abi: traceLogAbi,
      functionName: 'revokeRole',
      args: [role, account.address],
    });
    await client().waitForTransactionReceipt({ hash: revoke });
    try {
      const keep = async () => {
        throw new Error('a refused write must not be kept');
      };
      const refused = ledger.recordStageKept({ tokenId: 1n, stage: 'GRADED', evidenceCid: 'bafy', auditHash: auditHash('refused') }, keep);
      await expect(refused).rejects.toBeInstanceOf(LedgerRefusedError);
      await expect(refused).rejects.toMatchObject({ reason: 'AccessControlUnauthorizedAccount' });
      // The batched writer's bisection sees the same refusal when it simulates the batched call.
      const simulated = ledger.simulateBatch({
        kind: 'TRACE_STAGE',
        records: [{ tokenId: 1n, stage: 'GRADED', evidenceCid: 'bafy', auditHash: auditHash('refused') }],
      });
      await expect(simulated).rejects.toBeInstanceOf(LedgerRefusedError);
      await expect(simulated).rejects.toMatchObject({ reason: 'AccessControlUnauthorizedAccount' });
      const { txHash } = await ledger.mintBatchTokenKept(
        { tokenId: tokenIdForBatch(2026, 7_000_001), batchId: 'BATCH-2026-7000001', auditHash: auditHash('after') },
        async () => undefined,
      );
      expect((await ledger.waitForReceipt(txHash, 10_000))?.status).toBe('success');
    } finally {
      const grant = await wallet.writeContract({
        address: addresses.traceLogAddress,
        abi: traceLogAbi,
        functionName: 'grantRole',
        args: [role, account.address],
      });
      await client().waitForTransactionReceipt({ hash: grant });
    }
  });

  it('checks a batched call before signing: a record that cannot be encoded is named locally, a good call simulates, nothing is sent', async () => {
    const good = { tokenId: 8_000_001n, stage: 'GRADED' as const, evidenceCid: 'bafy', auditHash: auditHash('batch ok') };
    const unknownStage = { ...good, stage: 'ROASTED' as unknown as 'GRADED' };
    const nonceBefore = await client().getTransactionCount({ address: privateKeyToAccount(signerKey).address, blockTag: 'pending' });
    expect(await ledger.batchCallError({ kind: 'TRACE_STAGE', records: [good] })).toBeUndefined();
    expect(await ledger.batchCallError({ kind: 'TRACE_STAGE', records: [good, unknownStage] })).toEqual(
      new RangeError('recordStages: unknown stage ROASTED'),
    );
    expect(
      await ledger.batchCallError({ kind: 'MINT', records: [{ tokenId: -1n, batchId: 'B', auditHash: good.auditHash }] }),
    ).toBeInstanceOf(RangeError);
    await expect(ledger.simulateBatch({ kind: 'TRACE_STAGE', records: [good] })).resolves.toBeUndefined();
    await expect(
      ledger.simulateBatch({
        kind: 'MINT',
        records: [{ tokenId: tokenIdForBatch(2026, 8_000_002), batchId: 'BATCH-2026-8000002', auditHash: good.auditHash }],
      }),
    ).resolves.toBeUndefined();
    await expect(ledger.simulateBatch({ kind: 'TRACE_STAGE', records: [unknownStage] })).rejects.toBeInstanceOf(RangeError);
    expect(await client().getTransactionCount({ address: privateKeyToAccount(signerKey).address, blockTag: 'pending' })).toBe(nonceBefore);
  });

  it('tells whether the configured contracts have their batched functions (contracts deployed before them do not)', async () => {
    expect(await ledger.batchedCallsDeployed('MINT')).toBe(true);
    expect(await ledger.batchedCallsDeployed('TRACE_STAGE')).toBe(true);
    // Contracts without mintBatch / recordStages (here: AuditAnchor in their place).
    const older = new EvmLedger({
      rpcUrl: node.rpcUrl,
      chainId: CHAIN_ID,
      signerPrivateKey: signerKey,
      ...addresses,
      batchTokenAddress: addresses.auditAnchorAddress,
      traceLogAddress: addresses.auditAnchorAddress,
    });
    expect(await older.batchedCallsDeployed('MINT')).toBe(false);
    expect(await older.batchedCallsDeployed('TRACE_STAGE')).toBe(false);
  });

  it('an unreachable RPC endpoint is a transport failure (LedgerTransportError), which the writer retries without counting', async () => {
    const offline = new EvmLedger({
      rpcUrl: `http://127.0.0.1:${await freePort()}`,
      chainId: CHAIN_ID,
      signerPrivateKey: signerKey,
      ...addresses,
      retryCount: 0,
    });
    await expect(
      offline.recordStageKept({ tokenId: 5n, stage: 'GRADED', evidenceCid: 'x', auditHash: auditHash('5') }, async () => undefined),
    ).rejects.toBeInstanceOf(LedgerTransportError);
    await expect(offline.anchorAuditRootKept({ root: auditHash('r'), headCount: 1 }, async () => undefined)).rejects.toBeInstanceOf(
      LedgerTransportError,
    );
  });
});
