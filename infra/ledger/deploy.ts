import { createPublicClient, createTestClient, createWalletClient, http, maxUint256, type Abi, type Hex } from 'viem';
import { privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { auditAnchorAbi, batchTokenAbi, lendingVaultAbi, testUsdcAbi } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import type { CompiledContracts } from './compile';

/** Addresses of the deployed ledger contracts. */
export interface DeployedContracts {
  batchTokenAddress: Hex;
  traceLogAddress: Hex;
  /** AuditAnchor: periodic Merkle roots of audit heads (docs/api/anchoring.md#anchoring-of-the-audit-log). */
  auditAnchorAddress: Hex;
  /** The LendingVault (ERC-4626). */
  lendingVaultAddress: Hex;
  /** The vault's asset: the USDC contract given, or the TestUSDC deployed here. */
  vaultAssetAddress: Hex;
}

/**
 * Deploys BatchToken, TraceLog, AuditAnchor, TestUSDC (only when `vaultAssetAddress` is not given: in AWS the
 * asset is a real USDC contract) and LendingVault(asset, BatchToken) from `artifacts` (see
 * `compileContracts`) with `deployerKey`, which thereby holds every admin role, MINTER_ROLE and
 * RECORDER_ROLE, ANCHORER_ROLE, OPERATOR_ROLE of the vault and MINTER_ROLE of TestUSDC. The deployer is then made
 * the vault's operator in full (`approveVaultAsOperator`): when the service signer is another key,
 * grant it OPERATOR_ROLE and run `approveVaultAsOperator` with that key (deploy-cli.ts does).
 * Transactions are sent back to back (consecutive nonces) and their receipts awaited (60 s each).
 * Throws when a deployment or call reverts, has no contract address, or the RPC fails (viem errors).
 */
export async function deployContracts(input: {
  rpcUrl: string;
  chainId: number;
  deployerKey: Hex;
  artifacts: CompiledContracts;
  /** The vault's asset (a USDC contract); omitted: a TestUSDC is deployed. */
  vaultAssetAddress?: Hex;
}): Promise<DeployedContracts> {
  const chain = ledgerChain(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 1 });
  const account = privateKeyToAccount(input.deployerKey);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ account, chain, transport });

  let nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const send = (name: keyof CompiledContracts) =>
    wallet.deployContract({ abi: input.artifacts[name].abi as Abi, bytecode: input.artifacts[name].bytecode, nonce: nonce++ });
  const batchTokenTx = await send('BatchToken');
  const traceLogTx = await send('TraceLog');
  const auditAnchorTx = await send('AuditAnchor');

  const addressOf = async (name: string, hash: Hex): Promise<Hex> => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
    if (receipt.status !== 'success' || !receipt.contractAddress) {
      throw new Error(`Deployment of ${name} failed (tx ${hash}, status ${receipt.status})`);
    }
    return receipt.contractAddress;
  };
  const testUsdcTx = input.vaultAssetAddress ? undefined : await send('TestUSDC');
  const [batchTokenAddress, traceLogAddress, auditAnchorAddress, vaultAssetAddress] = await Promise.all([
    addressOf('BatchToken', batchTokenTx),
    addressOf('TraceLog', traceLogTx),
    addressOf('AuditAnchor', auditAnchorTx),
    testUsdcTx ? addressOf('TestUSDC', testUsdcTx) : Promise.resolve(input.vaultAssetAddress!),
  ]);
  const vaultTx = await wallet.deployContract({
    abi: input.artifacts.LendingVault.abi as Abi,
    bytecode: input.artifacts.LendingVault.bytecode,
    args: [vaultAssetAddress, batchTokenAddress],
    nonce: nonce++,
  });
  const lendingVaultAddress = await addressOf('LendingVault', vaultTx);
  const deployed = { batchTokenAddress, traceLogAddress, auditAnchorAddress, lendingVaultAddress, vaultAssetAddress };
  await approveVaultAsOperator({ rpcUrl: input.rpcUrl, chainId: input.chainId, operatorKey: input.deployerKey, contracts: deployed });
  return deployed;
}

/**
 * What the vault's operator (the service signer, which is the treasury and, unless
 * LEDGER_CUSTODIAN_ADDRESS names another address, the custodian of minted BatchTokens) must allow
 * once: the vault may pull its USDC (`approve(vault, max)`: deposits, cancelled loans' principal)
 * and its BatchTokens (`setApprovalForAll(vault, true)`: `openLoan` takes the token from its
 * holder). A separate custodian must call `setApprovalForAll(vault, true)` on BatchToken itself.
 * Throws when a transaction reverts or the RPC fails.
 */
export async function approveVaultAsOperator(input: {
  rpcUrl: string;
  chainId: number;
  /** The operator's private key, or (in AWS) its KMS-signing account (shared/adapters/ledger/kms-signer.ts). */
  operatorKey?: Hex;
  operatorAccount?: LocalAccount;
  contracts: DeployedContracts;
}): Promise<void> {
  const chain = ledgerChain(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 1 });
  if (!input.operatorAccount && !input.operatorKey) throw new Error('approveVaultAsOperator: give operatorKey or operatorAccount');
  const account = input.operatorAccount ?? privateKeyToAccount(input.operatorKey!);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ account, chain, transport });
  const { lendingVaultAddress: vault } = input.contracts;
  let nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const hashes = [
    await wallet.writeContract({
      address: input.contracts.vaultAssetAddress,
      abi: testUsdcAbi,
      functionName: 'approve',
      args: [vault, maxUint256],
      nonce: nonce++,
    }),
    await wallet.writeContract({
      address: input.contracts.batchTokenAddress,
      abi: batchTokenAbi,
      functionName: 'setApprovalForAll',
      args: [vault, true],
      nonce: nonce++,
    }),
  ];
  await waitAll(publicClient, hashes, 'vault approvals');
}

/**
 * Local chain only: funds the dev buyer and on-ramp accounts with ETH, mints `buyerUsdcMicro`
 * TestUSDC to the buyer and grants the on-ramp account MINTER_ROLE on TestUSDC (the on-ramp
 * sandbox delivers USDC by minting). `adminKey` holds TestUSDC's admin and minter roles (the
 * deployer). Throws when a transaction reverts or the RPC fails.
 */
export async function setUpLocalVaultAccounts(input: {
  rpcUrl: string;
  chainId: number;
  adminKey: Hex;
  testUsdcAddress: Hex;
  buyerAddress: Hex;
  buyerUsdcMicro: bigint;
  onRampAddress: Hex;
}): Promise<void> {
  const chain = ledgerChain(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 1 });
  const account = privateKeyToAccount(input.adminKey);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ account, chain, transport });
  await fundAccount(input.rpcUrl, input.buyerAddress, 10n ** 20n);
  await fundAccount(input.rpcUrl, input.onRampAddress, 10n ** 20n);
  const minterRole = await publicClient.readContract({ address: input.testUsdcAddress, abi: testUsdcAbi, functionName: 'MINTER_ROLE' });
  let nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const hashes = [
    await wallet.writeContract({
      address: input.testUsdcAddress,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [input.buyerAddress, input.buyerUsdcMicro],
      nonce: nonce++,
    }),
    await wallet.writeContract({
      address: input.testUsdcAddress,
      abi: testUsdcAbi,
      functionName: 'grantRole',
      args: [minterRole, input.onRampAddress],
      nonce: nonce++,
    }),
  ];
  await waitAll(publicClient, hashes, 'local vault accounts');
}

/** Grants the vault's OPERATOR_ROLE to `operator` (signed by an admin of the vault). */
export async function grantVaultOperator(input: {
  rpcUrl: string;
  chainId: number;
  adminKey: Hex;
  lendingVaultAddress: Hex;
  operator: Hex;
}): Promise<void> {
  const chain = ledgerChain(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 1 });
  const account = privateKeyToAccount(input.adminKey);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ account, chain, transport });
  const role = await publicClient.readContract({ address: input.lendingVaultAddress, abi: lendingVaultAbi, functionName: 'OPERATOR_ROLE' });
  const hash = await wallet.writeContract({
    address: input.lendingVaultAddress,
    abi: lendingVaultAbi,
    functionName: 'grantRole',
    args: [role, input.operator],
  });
  await waitAll(publicClient, [hash], 'grant OPERATOR_ROLE');
}

async function waitAll(client: ReturnType<typeof createPublicClient>, hashes: Hex[], what: string): Promise<void> {
  for (const hash of hashes) {
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 60_000 });
    if (receipt.status !== 'success') throw new Error(`${what}: transaction ${hash} reverted`);
  }
}

/**
 * Sets the balance of `address` to `wei` with `hardhat_setBalance`: local hardhat node only
 * (any other node rejects the method, and the viem error is thrown).
 */
export async function fundAccount(rpcUrl: string, address: Hex, wei: bigint): Promise<void> {
  const testClient = createTestClient({ mode: 'hardhat', transport: http(rpcUrl, { retryCount: 1 }) });
  await testClient.setBalance({ address, value: wei });
}

/**
 * Deploys AuditAnchor alone (a stack deployed before periodic anchors existed, docs/api/anchoring.md#anchoring-of-the-audit-log) with
 * `deployerKey`, which becomes its admin and holds ANCHORER_ROLE; `anchorer`, when another address
 * (the service signer), is granted ANCHORER_ROLE. Returns its address. Throws when a transaction
 * reverts or the RPC fails.
 */
export async function deployAuditAnchor(input: {
  rpcUrl: string;
  chainId: number;
  deployerKey: Hex;
  artifacts: CompiledContracts;
  anchorer?: Hex;
}): Promise<Hex> {
  const chain = ledgerChain(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 1 });
  const account = privateKeyToAccount(input.deployerKey);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const wallet = createWalletClient({ account, chain, transport });
  const hash = await wallet.deployContract({ abi: input.artifacts.AuditAnchor.abi as Abi, bytecode: input.artifacts.AuditAnchor.bytecode });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
  if (receipt.status !== 'success' || !receipt.contractAddress)
    throw new Error(`Deployment of AuditAnchor failed (tx ${hash}, status ${receipt.status})`);
  const address = receipt.contractAddress;
  if (input.anchorer && input.anchorer.toLowerCase() !== account.address.toLowerCase()) {
    const role = await publicClient.readContract({ address, abi: auditAnchorAbi, functionName: 'ANCHORER_ROLE' });
    const grant = await wallet.writeContract({ address, abi: auditAnchorAbi, functionName: 'grantRole', args: [role, input.anchorer] });
    const granted = await publicClient.waitForTransactionReceipt({ hash: grant, timeout: 60_000 });
    if (granted.status !== 'success') throw new Error(`grantRole(ANCHORER_ROLE, ${input.anchorer}) reverted (tx ${grant})`);
  }
  return address;
}
