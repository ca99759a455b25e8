import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  http,
  keccak256,
  maxUint256,
  parseEventLogs,
  toHex,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount, setUpLocalVaultAccounts, type DeployedContracts } from '../../infra/ledger/deploy';
import { lendingVaultAbi, testUsdcAbi } from '../../shared/adapters/ledger/abi';
import { EvmLedger, ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { vaultRef } from '../../shared/adapters/ledger/vault-ledger';
import { EvmVaultReader } from '../../shared/adapters/ledger/vault-reader';
import { formatBatchId, tokenIdForBatch } from '../../shared/domain/ids';
import { REPAY_LOANS_CHUNK, type VaultCall } from '../../shared/domain/vault-calls';
import { stackDataDir } from '../support/api';

/**
 * `LendingVault.repayLoans` (the batch form of `repayLoan`, docs/ledger.md#batched-contract-calls)
 * on a deployment of its own on the local stack's hardhat node: many loans of one purchase order
 * repaid in one transaction, each with its own LoanRepaid event; a repayment `repayLoan` would
 * refuse (not active — also repaid earlier in the same call —, below the principal, above the
 * escrow left) is skipped with RepaymentSkipped naming the error, and the others go through.
 */
const CHAIN_ID = 31337;
const USDC = 1_000_000n;
const run = randomBytes(4).toString('hex').toUpperCase();
const ref = (kind: string, n: number) => `${kind}-${run}-${n}`;

let rpcUrl: string;
let operatorKey: Hex;
let buyerKey: Hex;
let contracts: DeployedContracts;
let ledger: EvmLedger;
let reader: EvmVaultReader;
const client = () => createPublicClient({ chain: ledgerChain(CHAIN_ID, rpcUrl), transport: http(rpcUrl) });
const wallet = (key: Hex) =>
  createWalletClient({ account: privateKeyToAccount(key), chain: ledgerChain(CHAIN_ID, rpcUrl), transport: http(rpcUrl) });

async function write(call: VaultCall): Promise<void> {
  const { txHash } = await ledger.vaultCallKept(call, async () => undefined);
  expect((await ledger.waitForReceipt(txHash, 10_000))?.status).toBe('success');
}

beforeAll(async () => {
  rpcUrl = (JSON.parse(readFileSync(join(stackDataDir(), 'stack.json'), 'utf8')) as { endpoints: Record<string, string> }).endpoints
    .ledger!;
  operatorKey = generatePrivateKey();
  buyerKey = generatePrivateKey();
  const operator = privateKeyToAccount(operatorKey).address;
  await fundAccount(rpcUrl, operator, 10n ** 21n);
  contracts = await deployContracts({ rpcUrl, chainId: CHAIN_ID, deployerKey: operatorKey, artifacts: await compileContracts() });
  await setUpLocalVaultAccounts({
    rpcUrl,
    chainId: CHAIN_ID,
    adminKey: operatorKey,
    testUsdcAddress: contracts.vaultAssetAddress,
    buyerAddress: privateKeyToAccount(buyerKey).address,
    buyerUsdcMicro: 5_000n * USDC,
    onRampAddress: privateKeyToAccount(generatePrivateKey()).address,
  });
  const minted = await wallet(operatorKey).writeContract({
    address: contracts.vaultAssetAddress,
    abi: testUsdcAbi,
    functionName: 'mint',
    args: [operator, 10_000n * USDC],
  });
  await client().waitForTransactionReceipt({ hash: minted });
  ledger = new EvmLedger({ rpcUrl, chainId: CHAIN_ID, signerPrivateKey: operatorKey, retryCount: 0, ...contracts });
  reader = new EvmVaultReader({ rpcUrl, chainId: CHAIN_ID, lendingVaultAddress: contracts.lendingVaultAddress, retryCount: 0 });

  await write({ kind: 'VAULT_DEPOSIT', ref: ref('DEP', 1), mfiId: `MFI-${run}`, assetsUsdMicro: 2_000n * USDC });
  for (const n of [1, 2, 3, 4]) {
    const batchNo = randomInt(1, 1_000_000_000_000);
    const tokenId = tokenIdForBatch(2099, batchNo);
    const { txHash } = await ledger.mintBatchToken({
      tokenId,
      batchId: formatBatchId(2099, batchNo),
      auditHash: keccak256(toHex(`a ${tokenId}`)),
    });
    expect((await ledger.waitForReceipt(txHash, 10_000))?.status).toBe('success');
    await write({ kind: 'LOCK_COLLATERAL', ref: ref('LOAN', n), tokenId, principalUsdMicro: 100n * USDC });
  }
  const buyer = wallet(buyerKey);
  const approve = await buyer.writeContract({
    address: contracts.vaultAssetAddress,
    abi: testUsdcAbi,
    functionName: 'approve',
    args: [contracts.lendingVaultAddress, maxUint256],
  });
  await client().waitForTransactionReceipt({ hash: approve });
  const paid = await buyer.writeContract({
    address: contracts.lendingVaultAddress,
    abi: lendingVaultAbi,
    functionName: 'payPurchaseOrder',
    args: [vaultRef(ref('PO', 1)), 350n * USDC],
  });
  await client().waitForTransactionReceipt({ hash: paid });
}, 120_000);

describe('LendingVault.repayLoans', () => {
  it('repays the loans it can in one transaction, each with its own LoanRepaid; skips the others with RepaymentSkipped', async () => {
    const po = vaultRef(ref('PO', 1));
    const repayments = [
      { loanRef: vaultRef(ref('LOAN', 1)), amount: 110n * USDC },
      { loanRef: vaultRef(ref('LOAN', 2)), amount: 90n * USDC }, // below the principal
      { loanRef: vaultRef(ref('LOAN', 3)), amount: 110n * USDC },
      { loanRef: vaultRef(ref('LOAN', 1)), amount: 110n * USDC }, // repaid just above
      { loanRef: vaultRef(ref('LOAN', 4)), amount: 200n * USDC }, // 130 USDC left in escrow
      { loanRef: vaultRef(ref('LOAN', 9)), amount: 110n * USDC }, // no such loan
    ];
    // A caller that is not the operator is refused outright.
    await expect(
      client().simulateContract({
        account: privateKeyToAccount(buyerKey),
        address: contracts.lendingVaultAddress,
        abi: lendingVaultAbi,
        functionName: 'repayLoans',
        args: [po, repayments],
      }),
    ).rejects.toThrow(/AccessControlUnauthorizedAccount/);

    const hash = await wallet(operatorKey).writeContract({
      address: contracts.lendingVaultAddress,
      abi: lendingVaultAbi,
      functionName: 'repayLoans',
      args: [po, repayments],
    });
    const receipt = await client().waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    const repaid = parseEventLogs({ abi: lendingVaultAbi, logs: receipt.logs, eventName: 'LoanRepaid' });
    expect(repaid.map((l) => [l.args.loanRef, l.args.poRef, l.args.principal, l.args.interest])).toEqual([
      [vaultRef(ref('LOAN', 1)), po, 100n * USDC, 10n * USDC],
      [vaultRef(ref('LOAN', 3)), po, 100n * USDC, 10n * USDC],
    ]);
    const skipped = parseEventLogs({ abi: lendingVaultAbi, logs: receipt.logs, eventName: 'RepaymentSkipped' });
    expect(
      skipped.map((l) => {
        const e = decodeErrorResult({ abi: lendingVaultAbi, data: l.args.reason });
        return [l.args.loanRef, l.args.poRef, e.errorName, e.args];
      }),
    ).toEqual([
      [vaultRef(ref('LOAN', 2)), po, 'RepaymentBelowPrincipal', [vaultRef(ref('LOAN', 2)), 100n * USDC, 90n * USDC]],
      [vaultRef(ref('LOAN', 1)), po, 'LoanNotActive', [vaultRef(ref('LOAN', 1))]],
      [vaultRef(ref('LOAN', 4)), po, 'InsufficientEscrow', [po, 130n * USDC, 200n * USDC]],
      [vaultRef(ref('LOAN', 9)), po, 'LoanNotActive', [vaultRef(ref('LOAN', 9))]],
    ]);
    expect((await reader.loan(ref('LOAN', 1))).status).toBe('REPAID');
    expect((await reader.loan(ref('LOAN', 3))).status).toBe('REPAID');
    expect((await reader.loan(ref('LOAN', 2))).status).toBe('ACTIVE');
    expect((await reader.loan(ref('LOAN', 4))).status).toBe('ACTIVE');
    expect(await reader.escrowOf(ref('PO', 1))).toBe(130n * USDC);
    expect((await reader.state()).loans_outstanding_usd_micro).toBe(200n * USDC);
  });

  it('REPAY_LOANS through the ledger: one kept transaction; its result names each loan repaid or skipped (the reason decoded), within the gas a chunk is sized for', async () => {
    const { txHash } = await ledger.vaultCallKept(
      {
        kind: 'REPAY_LOANS',
        ref: ref('PO', 1),
        repayments: [
          { loanRef: ref('LOAN', 2), amountUsdMicro: 105n * USDC },
          { loanRef: ref('LOAN', 3), amountUsdMicro: 110n * USDC }, // repaid by the test above
        ],
      },
      async () => undefined,
    );
    const receipt = await ledger.waitForReceipt(txHash, 10_000);
    expect(receipt?.status).toBe('success');
    expect(await reader.writeResult(txHash)).toEqual({
      assetsUsdMicro: 105n * USDC,
      repayments: [
        { loanId: ref('LOAN', 2), repaid: true, amountUsdMicro: 105n * USDC },
        { loanId: ref('LOAN', 3), repaid: false, reason: 'LoanNotActive' },
      ],
    });
    expect((await reader.loan(ref('LOAN', 2))).status).toBe('REPAID');
    // REPAY_LOANS_CHUNK repayments must fit well inside a 30M-gas block: one repayment (plus a skip and the call) stays below 100k.
    const gasUsed = (await client().getTransactionReceipt({ hash: txHash })).gasUsed;
    expect(gasUsed).toBeLessThan(BigInt(100_000));
    expect(BigInt(REPAY_LOANS_CHUNK) * gasUsed).toBeLessThan(15_000_000n);
  });
});
