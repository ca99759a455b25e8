import { TokenAlreadyMintedError } from '../../domain/errors';
import {
  BaseError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  createClient,
  defineChain,
  encodeFunctionData,
  keccak256,
  http,
  isAddress,
  type Chain,
  type Client,
  type Transport,
  type Hex,
} from 'viem';
import { privateKeyToAccount, type LocalAccount } from 'viem/accounts';
// Tree-shakable form: bare clients plus only the actions used here (createPublicClient and
// createWalletClient attach every viem action: viem's part of ledger-writer was 364 KB, now 193 KB).
import {
  call as ethCall,
  estimateFeesPerGas,
  estimateGas,
  getBlockNumber,
  getCode,
  getTransaction,
  getTransactionCount,
  getTransactionReceipt,
  prepareTransactionRequest,
  readContract,
  sendRawTransaction,
  signTransaction,
  simulateContract,
  waitForTransactionReceipt,
  writeContract,
} from 'viem/actions';
import { LedgerRefusedError, LedgerTransportError, LedgerUnavailableError } from '../../domain/errors';
import { isTransportFailure, revertReasonOf } from './revert';
import type { BatchedCall, Ledger, LedgerReceipt, MintRecord, StageRecord } from '../../domain/ports/ledger';
import type { BatchRecordOutcome } from '../../domain/ledger-batching';
import type { VaultLedger } from '../../domain/ports/lending';
import type { VaultCall } from '../../domain/vault-calls';
import { STAGE_CODES, auditAnchorAbi, batchTokenAbi, testUsdcAbi, traceLogAbi, type LedgerStageName } from './abi';
import { vaultCallData, vaultRevertReason } from './vault-ledger';
import { batchCallData, batchOutcomesOf, batchSelector, checkBytes32, checkTokenId } from './batch-calls';
import { replacementOf } from './replacement';
import type { EvmLedgerConfig } from './evm-ledger-config';

/** A viem chain for `chainId` served at `rpcUrl` (native currency ETH, 18 decimals). */
export function ledgerChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: `ledger-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/** A ledger signer's private key: 32 bytes, 0x-hex. */
export const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;
/**
 * Gas of a vault write the chain is known to refuse (its simulation reverted): it is still signed,
 * kept and sent, so the refusal is mined (status reverted) and the ledger writer settles the write
 * as refused instead of retrying it forever. Enough for any vault call to reach its revert.
 */
export const REFUSED_VAULT_CALL_GAS = 400_000n;

/**
 * The `Ledger` port on an EVM chain with viem: BatchToken (ERC-721) and TraceLog.
 * One public and one wallet client per instance; the signer's nonces come from a per-instance
 * nonce manager and transactions are submitted one at a time (in nonce order) while callers may
 * run concurrently. Errors: `LedgerUnavailableError` when the RPC cannot be reached, fails, or the
 * chain refuses a transaction for a reason other than those below; `TokenAlreadyMintedError` for a
 * mint of an existing token id; `RangeError` for malformed input (nothing is sent).
 * Several processes must not share one signer key (their nonces would collide).
 */
export class EvmLedger implements Ledger, VaultLedger {
  /** The signer's address (holds the roles, pays gas). */
  readonly signerAddress: Hex;
  /** The address minted tokens go to. */
  readonly custodian: Hex;
  private readonly account: LocalAccount;
  private readonly config: EvmLedgerConfig;
  private readonly publicClient: Client<Transport, Chain>;
  private readonly walletClient: Client<Transport, Chain, LocalAccount>;
  private sendQueue: Promise<void> = Promise.resolve();
  private readonly batchSupport = new Map<'MINT' | 'TRACE_STAGE', Promise<boolean>>();

  constructor(config: EvmLedgerConfig) {
    if ((config.signerPrivateKey === undefined) === (config.signerAccount === undefined))
      throw new RangeError('EvmLedger: give exactly one of signerPrivateKey and signerAccount');
    if (config.signerPrivateKey !== undefined && !PRIVATE_KEY.test(config.signerPrivateKey))
      throw new RangeError('EvmLedger: signerPrivateKey must be 0x + 64 hex digits');
    for (const [name, value] of [
      ['batchTokenAddress', config.batchTokenAddress],
      ['traceLogAddress', config.traceLogAddress],
      ['custodianAddress', config.custodianAddress],
      ['lendingVaultAddress', config.lendingVaultAddress],
      ['vaultAssetAddress', config.vaultAssetAddress],
      ['auditAnchorAddress', config.auditAnchorAddress],
    ] as const) {
      if (value !== undefined && !isAddress(value, { strict: false })) throw new RangeError(`EvmLedger: ${name} is not an address`);
    }
    if (!Number.isSafeInteger(config.chainId) || config.chainId <= 0) throw new RangeError('EvmLedger: chainId must be a positive integer');

    this.config = config;
    const chain = ledgerChain(config.chainId, config.rpcUrl);
    const transport = http(config.rpcUrl, { timeout: config.requestTimeoutMs ?? 10_000, retryCount: config.retryCount ?? 2 });
    const pollingInterval = config.pollingIntervalMs ?? 250;
    this.account = config.signerAccount ?? privateKeyToAccount(config.signerPrivateKey!);
    this.signerAddress = this.account.address;
    this.custodian = config.custodianAddress ?? this.account.address;
    // The same clients createPublicClient / createWalletClient build, without the action decorators.
    this.publicClient = createClient({ chain, transport, pollingInterval, key: 'public', name: 'Public Client', type: 'publicClient' });
    this.walletClient = createClient({
      account: this.account,
      chain,
      transport,
      pollingInterval,
      key: 'wallet',
      name: 'Wallet Client',
      type: 'walletClient',
    });
  }

  /**
   * Direct sends (local tooling and tests; the service itself writes through the kept variants):
   * simulates, then broadcasts `BatchToken.mint(custodian, tokenId, batchId, auditHash)`; returns
   * the transaction hash without waiting for the receipt. Throws `TokenAlreadyMintedError` when
   * the id exists, `LedgerRefusedError` `BatchIdMismatch` for a batch id not the token's, `RangeError`
   * for an empty batch id, a bad hash or id, `LedgerUnavailableError` otherwise.
   */
  async mintBatchToken(input: { tokenId: bigint; batchId: string; auditHash: Hex }): Promise<{ txHash: Hex }> {
    checkTokenId(input.tokenId);
    checkBytes32('auditHash', input.auditHash);
    if (input.batchId.length === 0) throw new RangeError('mintBatchToken: batchId must not be empty');
    try {
      const { request } = await simulateContract(this.publicClient, {
        account: this.account,
        address: this.config.batchTokenAddress,
        abi: batchTokenAbi,
        functionName: 'mint',
        args: [this.custodian, input.tokenId, input.batchId, input.auditHash],
      });
      const txHash = await this.serialized(async () => writeContract(this.walletClient, { ...request, nonce: await this.pendingNonce() }));
      return { txHash };
    } catch (err) {
      throw this.mapError(err, 'mint', input.tokenId);
    }
  }

  /**
   * Broadcasts `TraceLog.recordStage(tokenId, STAGE_CODES[stage], evidenceCid, auditHash)`; returns
   * the transaction hash without waiting for the receipt. Throws `RangeError` for an unknown stage,
   * a bad hash or id, `LedgerUnavailableError` when the RPC fails or the chain refuses it.
   */
  async recordStage(input: { tokenId: bigint; stage: LedgerStageName; evidenceCid: string; auditHash: Hex }): Promise<{ txHash: Hex }> {
    checkTokenId(input.tokenId);
    checkBytes32('auditHash', input.auditHash);
    if (!Object.hasOwn(STAGE_CODES, input.stage)) throw new RangeError(`recordStage: unknown stage ${String(input.stage)}`);
    const stageCode = STAGE_CODES[input.stage];
    try {
      const txHash = await this.serialized(async () =>
        writeContract(this.walletClient, {
          address: this.config.traceLogAddress,
          abi: traceLogAbi,
          functionName: 'recordStage',
          args: [input.tokenId, stageCode, input.evidenceCid, input.auditHash],
          nonce: await this.pendingNonce(),
        }),
      );
      return { txHash };
    } catch (err) {
      throw this.mapError(err, 'recordStage', input.tokenId);
    }
  }

  /**
   * Waits up to `timeoutMs` for the receipt of `txHash`. Returns `{ status, blockNumber, txHash }`,
   * or `null` when there is none by then (unknown or still pending; never throws on timeout).
   * Throws `LedgerUnavailableError` when the RPC cannot be reached at the first look-up.
   */
  async waitForReceipt(txHash: Hex, timeoutMs: number): Promise<LedgerReceipt | null> {
    try {
      return toReceipt(await getTransactionReceipt(this.publicClient, { hash: txHash }));
    } catch (err) {
      if (!(err instanceof TransactionReceiptNotFoundError)) throw this.mapError(err, 'getTransactionReceipt');
    }
    if (timeoutMs <= 0) return null;
    try {
      const receipt = await waitForTransactionReceipt(this.publicClient, {
        hash: txHash,
        timeout: timeoutMs,
        checkReplacement: false,
      });
      return toReceipt(receipt);
    } catch (err) {
      if (err instanceof WaitForTransactionReceiptTimeoutError) return null;
      throw this.mapError(err, 'waitForTransactionReceipt');
    }
  }

  /**
   * `BatchToken.batchIdOf(tokenId)`: the batch id, or `null` when the token does not exist (the
   * contract returns "" then; an empty batch id cannot be minted). Throws `LedgerUnavailableError`
   * on RPC failure, `RangeError` for an id outside uint256.
   */
  async batchIdOfToken(tokenId: bigint): Promise<string | null> {
    checkTokenId(tokenId);
    try {
      const batchId = await readContract(this.publicClient, {
        address: this.config.batchTokenAddress,
        abi: batchTokenAbi,
        functionName: 'batchIdOf',
        args: [tokenId],
      });
      return batchId === '' ? null : batchId;
    } catch (err) {
      throw this.mapError(err, 'batchIdOf', tokenId);
    }
  }

  /**
   * `TraceLog.recordStage` as a signed transaction that is kept before it is broadcast: signs it
   * with the signer's next nonce, hands `{rawTx, txHash, nonce}` to `keep` (which stores it
   * durably), then broadcasts it. A transaction whose broadcast failed is later re-sent as the same
   * signed transaction with `rebroadcast`, never signed again. Runs in this instance's send order.
   * Errors: LedgerUnavailableError; whatever `keep` throws (nothing is broadcast then).
   */
  async recordStageKept(
    input: { tokenId: bigint; stage: LedgerStageName; evidenceCid: string; auditHash: Hex },
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
  ): Promise<{ txHash: Hex }> {
    checkTokenId(input.tokenId);
    checkBytes32('auditHash', input.auditHash);
    if (!Object.hasOwn(STAGE_CODES, input.stage)) throw new RangeError(`recordStage: unknown stage ${String(input.stage)}`);
    const data = encodeFunctionData({
      abi: traceLogAbi,
      functionName: 'recordStage',
      args: [input.tokenId, STAGE_CODES[input.stage], input.evidenceCid, input.auditHash],
    });
    return this.sendKept(this.config.traceLogAddress, data, keep, 'recordStage', input.tokenId);
  }

  /**
   * `AuditAnchor.anchor(root, headCount)` (docs/api/anchoring.md#anchoring-of-the-audit-log) as a kept signed transaction (see
   * recordStageKept). Errors: Error when no AuditAnchor is configured, RangeError for a malformed
   * root or a head count outside 1..2^32-1 (nothing sent); LedgerUnavailableError; whatever `keep` throws.
   */
  async anchorAuditRootKept(
    input: { root: Hex; headCount: number },
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
  ): Promise<{ txHash: Hex }> {
    const anchor = this.config.auditAnchorAddress;
    if (!anchor || /^0x0{40}$/i.test(anchor))
      throw new Error(
        'EvmLedger: no AuditAnchor configured (AUDIT_ANCHOR_ADDRESS is unset or the zero address: deploy the contracts and set AuditAnchorAddress)',
      );
    checkBytes32('root', input.root);
    if (!Number.isSafeInteger(input.headCount) || input.headCount < 1 || input.headCount > 0xffffffff)
      throw new RangeError(`anchor: head count ${input.headCount} is not a uint32 above 0`);
    const data = encodeFunctionData({ abi: auditAnchorAbi, functionName: 'anchor', args: [input.root, input.headCount] });
    return this.sendKept(anchor, data, keep, 'anchor', undefined);
  }

  /**
   * `BatchToken.mint(custodian, tokenId, batchId, auditHash)` as a kept signed transaction (see
   * recordStageKept). Simulated first: an existing token id throws `TokenAlreadyMintedError`.
   */
  async mintBatchTokenKept(
    input: { tokenId: bigint; batchId: string; auditHash: Hex },
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
  ): Promise<{ txHash: Hex }> {
    checkTokenId(input.tokenId);
    checkBytes32('auditHash', input.auditHash);
    if (input.batchId.length === 0) throw new RangeError('mintBatchToken: batchId must not be empty');
    const args = [this.custodian, input.tokenId, input.batchId, input.auditHash] as const;
    try {
      await simulateContract(this.publicClient, {
        account: this.account,
        address: this.config.batchTokenAddress,
        abi: batchTokenAbi,
        functionName: 'mint',
        args,
      });
    } catch (err) {
      throw this.mapError(err, 'mint', input.tokenId);
    }
    const data = encodeFunctionData({ abi: batchTokenAbi, functionName: 'mint', args });
    return this.sendKept(this.config.batchTokenAddress, data, keep, 'mint', input.tokenId);
  }

  /**
   * `BatchToken.mintBatch(custodian, records)` as a kept signed transaction (see recordStageKept;
   * docs/ledger.md#the-batched-writer). Not simulated: a record the contract would refuse is skipped
   * with `MintSkipped` and read back with `batchOutcomes`. Errors: RangeError for an empty list, a
   * bad id or hash (nothing sent); LedgerRefusedError when gas estimation reverts (the signer lacks
   * MINTER_ROLE); LedgerUnavailableError; whatever `keep` throws.
   */
  mintBatchKept(
    records: MintRecord[],
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
    nonce?: number,
    gas?: bigint,
  ): Promise<{ txHash: Hex }> {
    const { contract, operation, data } = batchCallData({ kind: 'MINT', records }, this.custodian);
    return this.sendKept(this.contractAddress(contract), data, keep, operation, undefined, gas, nonce);
  }

  /**
   * `TraceLog.recordStages(records)` as a kept signed transaction (see recordStageKept). Errors:
   * RangeError for an empty list, an unknown stage, a bad id or hash (nothing sent);
   * LedgerRefusedError when gas estimation reverts; LedgerUnavailableError; whatever `keep` throws.
   */
  recordStagesKept(
    records: StageRecord[],
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
    nonce?: number,
    gas?: bigint,
  ): Promise<{ txHash: Hex }> {
    const { contract, operation, data } = batchCallData({ kind: 'TRACE_STAGE', records }, this.custodian);
    return this.sendKept(this.contractAddress(contract), data, keep, operation, undefined, gas, nonce);
  }

  /**
   * `eth_estimateGas` of the batched `call` from the signer (see the port). Errors: RangeError when
   * it cannot be encoded; LedgerRefusedError when it reverts; LedgerUnavailableError / LedgerTransportError.
   */
  async estimateBatchGas(call: BatchedCall): Promise<bigint> {
    const { contract, operation, data } = batchCallData(call, this.custodian);
    try {
      return await estimateGas(this.publicClient, { account: this.account, to: this.contractAddress(contract), data });
    } catch (err) {
      throw this.mapError(err, operation);
    }
  }

  /** The first reason the batched `call` cannot be encoded (see `batchCallData`), or undefined; nothing is sent. */
  async batchCallError(call: BatchedCall): Promise<Error | undefined> {
    try {
      batchCallData(call, this.custodian);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  /**
   * The batched `call` as an `eth_call` from the signer (nothing signed). Errors: RangeError when it
   * cannot be encoded; LedgerRefusedError when it reverts; LedgerUnavailableError / LedgerTransportError.
   */
  async simulateBatch(call: BatchedCall): Promise<void> {
    const { contract, operation, data } = batchCallData(call, this.custodian);
    try {
      await ethCall(this.publicClient, { account: this.account, to: this.contractAddress(contract), data });
    } catch (err) {
      throw this.mapError(err, operation);
    }
  }

  /**
   * Each record's fate in the mined batched transaction `txHash`, in record order (`batchOutcomesOf`:
   * BatchMinted / StageRecorded → written; MintSkipped / StageSkipped → skipped with the decoded
   * error). Errors: Error when there is no receipt or it holds other than `count` record events;
   * LedgerUnavailableError.
   */
  async batchOutcomes(txHash: Hex, kind: 'MINT' | 'TRACE_STAGE', count: number): Promise<BatchRecordOutcome[]> {
    let receipt: Awaited<ReturnType<typeof getTransactionReceipt>>;
    try {
      receipt = await getTransactionReceipt(this.publicClient, { hash: txHash });
    } catch (err) {
      throw this.mapError(err, 'getTransactionReceipt');
    }
    return batchOutcomesOf(receipt.logs, this.contractAddress(kind === 'MINT' ? 'batchToken' : 'traceLog'), kind, count, txHash);
  }

  /**
   * Whether the configured BatchToken (MINT) / TraceLog (TRACE_STAGE) has `mintBatch` /
   * `recordStages`: its function selector is in the deployed code (Solidity's dispatcher pushes
   * every external function's selector). Read once per instance; a failed read is not cached.
   * Errors: LedgerUnavailableError / LedgerTransportError.
   */
  batchedCallsDeployed(kind: 'MINT' | 'TRACE_STAGE'): Promise<boolean> {
    const cached = this.batchSupport.get(kind);
    if (cached) return cached;
    const address = this.contractAddress(kind === 'MINT' ? 'batchToken' : 'traceLog');
    const selector = batchSelector(kind).slice(2).toLowerCase();
    const read = getCode(this.publicClient, { address }).then(
      (code) => (code ?? '0x').toLowerCase().includes(selector),
      (err) => {
        this.batchSupport.delete(kind);
        throw this.mapError(err, 'getCode');
      },
    );
    this.batchSupport.set(kind, read);
    return read;
  }

  private contractAddress(contract: 'batchToken' | 'traceLog'): Hex {
    return contract === 'batchToken' ? this.config.batchTokenAddress : this.config.traceLogAddress;
  }

  /**
   * A write to the LendingVault (see `VaultCall` and LendingVault.sol) as a kept signed transaction (see recordStageKept):
   * VAULT_DEPOSIT → `depositFor(ref, assets, vaultShareholder(mfiId))`, VAULT_REVERSE_DEPOSIT → `reverseDeposit(ref,
   * vaultShareholder(mfiId), shares)`, LOCK_COLLATERAL → `openLoan(ref, tokenId, principal)`, CANCEL_LOAN → `cancelLoan(ref)`,
   * REPAY_LOAN → `repayLoan(ref, purchaseOrderRef, amount)`, REPAY_LOANS → `repayLoans(ref, [(loanRef, amount)…])`,
   * RELEASE_REMAINDER → `releaseRemainder(ref, cooperativeSettlementAddress(cooperativeId), amount)`; refs are the ids as
   * right-padded bytes32. Simulated first: when the vault refuses it (TokenLocked, LoanExists, InsufficientLiquidity,
   * InsufficientEscrow, RefUsed, …) the transaction is still signed, kept and sent with `REFUSED_VAULT_CALL_GAS`, so the
   * chain records the refusal (receipt status `reverted`; `EvmVaultReader.refusalReason(txHash)` names the error) — unless
   * `unlessRefused`: then nothing is signed, LedgerRefusedError with the vault's error. Errors: RangeError for a bad ref or
   * amount and Error when no vault is configured (nothing sent); LedgerUnavailableError when the RPC fails; whatever `keep` throws.
   */
  async vaultCallKept(
    call: VaultCall,
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
    opts: { unlessRefused?: boolean } = {},
  ): Promise<{ txHash: Hex }> {
    const vault = this.config.lendingVaultAddress;
    if (!vault) throw new Error('EvmLedger: no lendingVaultAddress configured (LENDING_VAULT_ADDRESS)');
    const { functionName, data } = vaultCallData(call);
    let gas: bigint | undefined;
    try {
      await ethCall(this.publicClient, { account: this.account, to: vault, data });
    } catch (err) {
      const reason = vaultRevertReason(err);
      if (reason === undefined) throw this.mapError(err, functionName);
      if (opts.unlessRefused) throw new LedgerRefusedError(functionName, reason, err);
      gas = REFUSED_VAULT_CALL_GAS;
    }
    return this.sendKept(vault, data, keep, functionName, undefined, gas);
  }

  /** The signer's (treasury's) USDC balance, micro-USDC. Errors: Error without vaultAssetAddress; LedgerUnavailableError. */
  async treasuryUsdcMicro(): Promise<bigint> {
    const asset = this.config.vaultAssetAddress;
    if (!asset) throw new Error('EvmLedger: no vaultAssetAddress configured (VAULT_ASSET_ADDRESS)');
    try {
      return await readContract(this.publicClient, {
        address: asset,
        abi: testUsdcAbi,
        functionName: 'balanceOf',
        args: [this.signerAddress],
      });
    } catch (err) {
      throw this.mapError(err, 'balanceOf');
    }
  }

  /** Signs `data` to `to` with `givenNonce` or the next one, hands it to `keep`, then broadcasts it (in send order). */
  private sendKept(
    to: Hex,
    data: Hex,
    keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
    operation: string,
    tokenId: bigint | undefined,
    gas?: bigint,
    givenNonce?: number,
  ): Promise<{ txHash: Hex }> {
    return this.serialized(async () => {
      let signed: { rawTx: Hex; txHash: Hex; nonce: number };
      try {
        const nonce = givenNonce ?? (await this.pendingNonce());
        const request = await prepareTransactionRequest(this.walletClient, {
          account: this.account,
          to,
          data,
          nonce,
          ...(gas !== undefined ? { gas } : {}),
        });
        const rawTx = await signTransaction(this.walletClient, request);
        signed = { rawTx, txHash: keccak256(rawTx), nonce };
      } catch (err) {
        throw this.mapError(err, operation, tokenId);
      }
      await keep(signed);
      await this.rebroadcastNow(signed.rawTx, signed.txHash);
      return { txHash: signed.txHash };
    });
  }

  /**
   * Broadcasts an already signed transaction again (the same bytes, so the same hash and nonce).
   * A node that already has it, or has mined it, is fine. Errors: LedgerUnavailableError.
   */
  async rebroadcast(rawTx: Hex, txHash: Hex): Promise<void> {
    await this.serialized(() => this.rebroadcastNow(rawTx, txHash));
  }

  /** The signer's mined and pending transaction counts (see the port). Errors: LedgerUnavailableError. */
  async signerNonces(): Promise<{ mined: number; pending: number }> {
    try {
      const count = (blockTag: 'latest' | 'pending') => getTransactionCount(this.publicClient, { address: this.account.address, blockTag });
      const [mined, pending] = await Promise.all([count('latest'), count('pending')]);
      return { mined, pending };
    } catch (err) {
      throw this.mapError(err, 'getTransactionCount');
    }
  }

  /** The chain's latest block number (see the port). */
  blockNumber(): Promise<number> {
    return getBlockNumber(this.publicClient, { cacheTime: 0 }).then(Number, (err) => Promise.reject(this.mapError(err, 'getBlockNumber')));
  }

  /** Whether the node knows `txHash` (mempool or mined). Errors: LedgerUnavailableError. */
  async isKnown(txHash: Hex): Promise<boolean> {
    try {
      return Boolean(await getTransaction(this.publicClient, { hash: txHash }));
    } catch (err) {
      if (err instanceof TransactionNotFoundError) return false;
      throw this.mapError(err, 'getTransaction');
    }
  }

  /** A stuck kept transaction replaced (`replacementOf`), signed, kept, then broadcast (see the port). */
  replaceKept(rawTx: Hex, keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>): Promise<{ txHash: Hex }> {
    return this.serialized(async () => {
      let signed: { rawTx: Hex; txHash: Hex; nonce: number };
      try {
        const fees = await estimateFeesPerGas(this.publicClient).catch(() => ({}));
        const replacement = replacementOf(rawTx, fees);
        const raw = await this.account.signTransaction(replacement);
        signed = { rawTx: raw, txHash: keccak256(raw), nonce: replacement.nonce! };
      } catch (err) {
        throw this.mapError(err, 'replace');
      }
      await keep(signed);
      await this.rebroadcastNow(signed.rawTx, signed.txHash);
      return { txHash: signed.txHash };
    });
  }

  private async rebroadcastNow(rawTx: Hex, txHash: Hex): Promise<void> {
    try {
      await sendRawTransaction(this.publicClient, { serializedTransaction: rawTx });
    } catch (err) {
      // "already known" / "nonce too low" for the very same transaction: look for it instead.
      const known = await getTransaction(this.publicClient, { hash: txHash }).catch(() => null);
      if (!known) throw this.mapError(err, 'sendRawTransaction');
    }
  }

  /** The signer's next nonce, counting its pending transactions. */
  private async pendingNonce(): Promise<number> {
    return getTransactionCount(this.publicClient, { address: this.account.address, blockTag: 'pending' });
  }

  /** Runs `send` after every earlier send of this instance settled, so nonces reach the node in order. */
  private serialized<T>(send: () => Promise<T>): Promise<T> {
    const run = this.sendQueue.then(send);
    this.sendQueue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * viem errors → domain errors (see ./revert.ts); anything else is returned unchanged. A revert
   * (decoded with the contracts' ABI, wherever it shows: simulation, gas estimation, a call) →
   * `LedgerRefusedError` with its reason (a mint of an existing id → `TokenAlreadyMintedError`); an
   * RPC endpoint that cannot be reached → `LedgerTransportError`; any other RPC failure →
   * `LedgerUnavailableError`.
   */
  private mapError(err: unknown, operation: string, tokenId?: bigint): unknown {
    if (!(err instanceof BaseError)) return err;
    const reason = revertReasonOf(err);
    if (reason !== undefined) {
      if (operation === 'mint' && reason === 'ERC721InvalidSender' && tokenId !== undefined) {
        return new TokenAlreadyMintedError(tokenId, err);
      }
      return new LedgerRefusedError(operation, reason, err);
    }
    if (isTransportFailure(err)) return new LedgerTransportError(`Ledger RPC unreachable during ${operation}: ${err.shortMessage}`, err);
    return new LedgerUnavailableError(`Ledger RPC failed during ${operation}: ${err.shortMessage}`, err);
  }
}

function toReceipt(r: { status: 'success' | 'reverted'; blockNumber: bigint; transactionHash: Hex }): LedgerReceipt {
  return { status: r.status, blockNumber: r.blockNumber, txHash: r.transactionHash };
}
