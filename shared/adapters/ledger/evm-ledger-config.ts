import type { Hex, LocalAccount } from 'viem';

/** Configuration of an `EvmLedger`. */
export interface EvmLedgerConfig {
  /** JSON-RPC endpoint (http/https). */
  rpcUrl: string;
  /** Chain id the endpoint must report (31337 for the local hardhat node). */
  chainId: number;
  /**
   * The signer (holds MINTER_ROLE on BatchToken and RECORDER_ROLE on TraceLog, pays gas): its
   * private key (locally, the key file), or an account that signs elsewhere (in AWS the KMS
   * account of ./kms-signer.ts). Exactly one of the two.
   */
  signerPrivateKey?: Hex;
  signerAccount?: LocalAccount;
  batchTokenAddress: Hex;
  traceLogAddress: Hex;
  /** Receives minted tokens; defaults to the signer's address. */
  custodianAddress?: Hex;
  /** The LendingVault (vault writes); the signer holds its OPERATOR_ROLE. Without it `vaultCallKept` throws. */
  lendingVaultAddress?: Hex;
  /** The AuditAnchor (periodic anchors of audit logs); the signer holds its ANCHORER_ROLE. Without it `anchorAuditRootKept` throws. */
  auditAnchorAddress?: Hex;
  /** The vault's asset (USDC), for `treasuryUsdcMicro`. */
  vaultAssetAddress?: Hex;
  /** Timeout of one RPC request, ms (default 10 000). */
  requestTimeoutMs?: number;
  /** Retries of a failed RPC request (default 2; viem backs off exponentially from 150 ms). */
  retryCount?: number;
  /** How often to poll for receipts and blocks, ms (default 250). */
  pollingIntervalMs?: number;
}
