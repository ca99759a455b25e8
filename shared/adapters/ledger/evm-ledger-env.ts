import { isAddress, type Hex, type LocalAccount } from 'viem';
import { EvmLedger, PRIVATE_KEY } from './evm-ledger';

/**
 * An `EvmLedger` from environment variables: LEDGER_RPC_URL, LEDGER_CHAIN_ID, the signer (an
 * account that signs elsewhere, `signerAccount` — in AWS the KMS key LEDGER_SIGNER_KMS_KEY_ID —
 * or else the private key LEDGER_SIGNER_KEY),
 * BATCH_TOKEN_ADDRESS, TRACE_LOG_ADDRESS (required); LENDING_VAULT_ADDRESS and VAULT_ASSET_ADDRESS
 * (optional here; need 'vault' provides them — see createVaultLedgerFromEnv); AUDIT_ANCHOR_ADDRESS
 * (optional here; need 'ledger' provides it: the periodic anchors); LEDGER_CUSTODIAN_ADDRESS and
 * LEDGER_RPC_RETRY_COUNT (optional; default 2 — the local stack may set 0: hardhat reports reverts
 * as JSON-RPC -32603, which viem retries, delaying a refused mint by ~0.5 s).
 * Throws an Error naming the first missing or malformed variable.
 */
export function createEvmLedgerFromEnv(env: Record<string, string | undefined> = process.env, signerAccount?: LocalAccount): EvmLedger {
  const need = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new Error(`Missing environment variable ${name}`);
    return value;
  };
  const hexVar = (name: string, value: string, test: (v: string) => boolean): Hex => {
    if (!test(value)) throw new Error(`Environment variable ${name} is malformed`);
    return value as Hex;
  };
  const address = (v: string) => isAddress(v, { strict: false });

  const rpcUrl = need('LEDGER_RPC_URL');
  const chainIdText = need('LEDGER_CHAIN_ID');
  const chainId = Number(chainIdText);
  if (!/^\d+$/.test(chainIdText) || !Number.isSafeInteger(chainId) || chainId <= 0) {
    throw new Error('Environment variable LEDGER_CHAIN_ID must be a positive integer');
  }
  const signer = signerAccount
    ? { signerAccount }
    : { signerPrivateKey: hexVar('LEDGER_SIGNER_KEY', need('LEDGER_SIGNER_KEY'), (v) => PRIVATE_KEY.test(v)) };
  const batchTokenAddress = hexVar('BATCH_TOKEN_ADDRESS', need('BATCH_TOKEN_ADDRESS'), address);
  const traceLogAddress = hexVar('TRACE_LOG_ADDRESS', need('TRACE_LOG_ADDRESS'), address);
  const custodianText = env.LEDGER_CUSTODIAN_ADDRESS?.trim();
  const custodianAddress = custodianText ? hexVar('LEDGER_CUSTODIAN_ADDRESS', custodianText, address) : undefined;
  // The vault (need 'vault'): optional here, so one instance (one nonce order) signs every write.
  const vaultText = env.LENDING_VAULT_ADDRESS?.trim();
  const lendingVaultAddress = vaultText ? hexVar('LENDING_VAULT_ADDRESS', vaultText, address) : undefined;
  const assetText = env.VAULT_ASSET_ADDRESS?.trim();
  const vaultAssetAddress = assetText ? hexVar('VAULT_ASSET_ADDRESS', assetText, address) : undefined;
  const anchorText = env.AUDIT_ANCHOR_ADDRESS?.trim();
  const auditAnchorAddress = anchorText ? hexVar('AUDIT_ANCHOR_ADDRESS', anchorText, address) : undefined;
  const retryText = env.LEDGER_RPC_RETRY_COUNT?.trim();
  if (retryText && !/^\d{1,2}$/.test(retryText)) {
    throw new Error('Environment variable LEDGER_RPC_RETRY_COUNT must be a small non-negative integer');
  }
  const retryCount = retryText ? Number(retryText) : undefined;

  return new EvmLedger({
    rpcUrl,
    chainId,
    ...signer,
    batchTokenAddress,
    traceLogAddress,
    custodianAddress,
    retryCount,
    lendingVaultAddress,
    vaultAssetAddress,
    auditAnchorAddress,
  });
}

/**
 * The `VaultLedger` (an `EvmLedger` with the vault configured) from the variables of need 'vault':
 * those of createEvmLedgerFromEnv plus LENDING_VAULT_ADDRESS and VAULT_ASSET_ADDRESS (required
 * here). A process that also mints or records stages must use this one instance for both (one
 * signer, one nonce order). Throws an Error naming the first missing or malformed variable.
 */
export function createVaultLedgerFromEnv(env: Record<string, string | undefined> = process.env, signerAccount?: LocalAccount): EvmLedger {
  for (const name of ['LENDING_VAULT_ADDRESS', 'VAULT_ASSET_ADDRESS']) {
    if (!env[name]?.trim()) throw new Error(`Missing environment variable ${name}`);
  }
  return createEvmLedgerFromEnv(env, signerAccount);
}
