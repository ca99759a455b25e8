import { createPublicClient, createWalletClient, http, isAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { auditAnchorAbi, batchTokenAbi, traceLogAbi } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { kmsLedgerAccount } from '../../shared/adapters/ledger/kms-signer';
import { compileContracts } from './compile';
import { approveVaultAsOperator, deployAuditAnchor, deployContracts, grantVaultOperator } from './deploy';

/**
 * `npm run deploy-contracts`: compiles BatchToken, TraceLog and LendingVault (and TestUSDC) from
 * infra/ledger/contracts and deploys them to a real EVM network.
 *   LEDGER_RPC_URL, LEDGER_CHAIN_ID   the network (e.g. https://sepolia.base.org, 84532)
 *   DEPLOYER_KEY                      0x… private key that pays the gas and becomes admin
 *   SERVICE_SIGNER_ADDRESS (optional) the ledger signer's address (in AWS the KMS key's: npm run ledger-signer-address); it is
 *                                     granted MINTER_ROLE, RECORDER_ROLE, ANCHORER_ROLE and the vault's
 *                                     OPERATOR_ROLE (default: the deployer)
 *   SERVICE_SIGNER_KEY (optional)       that key itself (instead of the address): the vault
 *                                     approvals the operator must give (USDC allowance,
 *                                     BatchToken setApprovalForAll) are then made with it; without
 *                                     it a signer other than the deployer must make them later
 *   SERVICE_SIGNER_KMS_KEY_ID (optional) the stack's ledger signer KMS key (output
 *                                     LedgerSignerKmsKeyId; needs kms:GetPublicKey and kms:Sign on
 *                                     it): its address gets the roles and it signs the approvals
 *   VAULT_ASSET_ADDRESS (optional)    the USDC contract the vault lends (e.g. Circle's USDC on
 *                                     the network); omitted: a TestUSDC is deployed (testnets)
 *   DEPLOY_ONLY=AuditAnchor (optional) deploy only AuditAnchor (a stack deployed before periodic
 *                                     anchors), granting the signer ANCHORER_ROLE
 * Prints the addresses to pass to `cdk deploy` (BatchTokenAddress, TraceLogAddress,
 * AuditAnchorAddress, LendingVaultAddress, VaultAssetAddress).
 */
async function main() {
  const need = (name: string) => {
    const v = process.env[name]?.trim();
    if (!v) throw new Error(`set ${name}`);
    return v;
  };
  const rpcUrl = need('LEDGER_RPC_URL');
  const chainId = Number(need('LEDGER_CHAIN_ID'));
  const deployerKey = need('DEPLOYER_KEY') as Hex;
  const signerKey = process.env.SERVICE_SIGNER_KEY?.trim() as Hex | undefined;
  const kmsKeyId = process.env.SERVICE_SIGNER_KMS_KEY_ID?.trim();
  const kmsAccount = kmsKeyId ? await kmsLedgerAccount(kmsKeyId) : undefined;
  const signer = kmsAccount
    ? kmsAccount.address
    : signerKey
      ? privateKeyToAccount(signerKey).address
      : process.env.SERVICE_SIGNER_ADDRESS?.trim();
  if (signer && !isAddress(signer)) throw new Error('SERVICE_SIGNER_ADDRESS is not an address');
  const vaultAssetAddress = process.env.VAULT_ASSET_ADDRESS?.trim() as Hex | undefined;
  if (vaultAssetAddress && !isAddress(vaultAssetAddress)) throw new Error('VAULT_ASSET_ADDRESS is not an address');
  process.stdout.write(`compiling contracts…\n`);
  const artifacts = await compileContracts();
  const only = process.env.DEPLOY_ONLY?.trim();
  if (only) {
    if (only !== 'AuditAnchor') throw new Error(`DEPLOY_ONLY=${only}: only AuditAnchor can be deployed alone`);
    const address = await deployAuditAnchor({ rpcUrl, chainId, deployerKey, artifacts, ...(signer ? { anchorer: signer as Hex } : {}) });
    process.stdout.write(`AuditAnchorAddress=${address}${signer ? ` (ANCHORER_ROLE granted to ${signer})` : ''}\n`);
    return;
  }
  process.stdout.write(`deploying to chain ${chainId} at ${rpcUrl}…\n`);
  const deployed = await deployContracts({ rpcUrl, chainId, deployerKey, artifacts, ...(vaultAssetAddress ? { vaultAssetAddress } : {}) });
  const account = privateKeyToAccount(deployerKey);
  if (signer && signer.toLowerCase() !== account.address.toLowerCase()) {
    const chain = ledgerChain(chainId, rpcUrl);
    const wallet = createWalletClient({ account, chain, transport: http(rpcUrl) });
    const reader = createPublicClient({ chain, transport: http(rpcUrl) });
    const minter = await reader.readContract({ address: deployed.batchTokenAddress, abi: batchTokenAbi, functionName: 'MINTER_ROLE' });
    const recorder = await reader.readContract({ address: deployed.traceLogAddress, abi: traceLogAbi, functionName: 'RECORDER_ROLE' });
    const anchorer = await reader.readContract({
      address: deployed.auditAnchorAddress,
      abi: auditAnchorAbi,
      functionName: 'ANCHORER_ROLE',
    });
    for (const hash of [
      await wallet.writeContract({
        address: deployed.batchTokenAddress,
        abi: batchTokenAbi,
        functionName: 'grantRole',
        args: [minter, signer as Hex],
      }),
      await wallet.writeContract({
        address: deployed.traceLogAddress,
        abi: traceLogAbi,
        functionName: 'grantRole',
        args: [recorder, signer as Hex],
      }),
      await wallet.writeContract({
        address: deployed.auditAnchorAddress,
        abi: auditAnchorAbi,
        functionName: 'grantRole',
        args: [anchorer, signer as Hex],
      }),
    ])
      await reader.waitForTransactionReceipt({ hash });
    await grantVaultOperator({
      rpcUrl,
      chainId,
      adminKey: deployerKey,
      lendingVaultAddress: deployed.lendingVaultAddress,
      operator: signer as Hex,
    });
    process.stdout.write(`granted MINTER_ROLE, RECORDER_ROLE, ANCHORER_ROLE and the vault's OPERATOR_ROLE to ${signer}\n`);
    if (signerKey || kmsAccount) {
      await approveVaultAsOperator({
        rpcUrl,
        chainId,
        ...(kmsAccount ? { operatorAccount: kmsAccount } : { operatorKey: signerKey }),
        contracts: deployed,
      });
      process.stdout.write(`${signer} approved the vault for its USDC and BatchTokens\n`);
    } else {
      process.stdout.write(
        `NOTE: ${signer} must still approve the vault: USDC approve(${deployed.lendingVaultAddress}, max) and BatchToken setApprovalForAll(${deployed.lendingVaultAddress}, true) (or rerun with SERVICE_SIGNER_KEY or SERVICE_SIGNER_KMS_KEY_ID)\n`,
      );
    }
  }
  process.stdout.write(
    `BatchTokenAddress=${deployed.batchTokenAddress}\nTraceLogAddress=${deployed.traceLogAddress}\nAuditAnchorAddress=${deployed.auditAnchorAddress}\nLendingVaultAddress=${deployed.lendingVaultAddress}\nVaultAssetAddress=${deployed.vaultAssetAddress}\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`deploy-contracts failed: ${(err as Error).message}\n`);
  process.exit(1);
});
