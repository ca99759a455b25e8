import {
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  decodeErrorResult,
  isAddress,
  isAddressEqual,
  parseEventLogs,
  type Chain,
  type Client,
  type Log,
  type Transport,
  type Hex,
} from 'viem';
// Tree-shakable form: a bare client plus only the actions used here (as trace-log-reader.ts).
import { call as ethCall, getLogs, getTransaction, getTransactionReceipt, readContract } from 'viem/actions';
import { LedgerUnavailableError } from '../../domain/errors';
import type { PurchaseOrderPayment, VaultReader, VaultState, VaultWriteResult } from '../../domain/ports/lending';
import { lendingVaultAbi } from './abi';
import { ledgerReadClient, ledgerReadConfigFromEnv, headBlockOf, ledgerUnavailable } from './read-config';
import { VAULT_LOAN_STATUSES, idOfVaultRef, vaultRef, vaultRevertReason, vaultShareholder, type VaultLoanStatus } from './vault-ledger';

/** Configuration of an `EvmVaultReader` (read-only: no signing key). */
export interface VaultReaderConfig {
  /** JSON-RPC endpoint (http/https). */
  rpcUrl: string;
  /** Chain id the endpoint must report (31337 for the local hardhat node). */
  chainId: number;
  /** The LendingVault whose state and logs count. */
  lendingVaultAddress: Hex;
  /** Timeout of one RPC request, ms (default 10 000). */
  requestTimeoutMs?: number;
  /** Retries of a failed RPC request (default 2). */
  retryCount?: number;
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;
const purchaseOrderPaidEvent = lendingVaultAbi.find((e) => e.type === 'event' && e.name === 'PurchaseOrderPaid')!;

/**
 * The `VaultReader` port with viem over JSON-RPC, on the LendingVault at `lendingVaultAddress`.
 * Figures that belong together (state, a position) are read at one block. Logs count only when
 * they come from the vault's address. The endpoint's chain id is checked once per instance.
 * Errors: `LedgerUnavailableError` when the RPC fails or reports another chain; `RangeError` from
 * the constructor for a bad address or chain id, and from `mfiPosition`/`loan` for an id that
 * cannot be a vault reference.
 */
export class EvmVaultReader implements VaultReader {
  private readonly client: Client<Transport, Chain>;
  private readonly config: VaultReaderConfig;
  /** The endpoint is the configured chain (asked once per instance; a failure is asked again next call). */
  private readonly checkChain: () => Promise<void>;

  constructor(config: VaultReaderConfig) {
    if (!isAddress(config.lendingVaultAddress, { strict: false }))
      throw new RangeError('EvmVaultReader: lendingVaultAddress is not an address');
    this.config = config;
    ({ client: this.client, checkChain: this.checkChain } = ledgerReadClient(config, 'EvmVaultReader'));
  }

  /** totalAssets, totalSupply, loansOutstanding, loansWrittenOff and idleAssets at the latest block. */
  async state(): Promise<VaultState> {
    const blockNumber = await this.latestBlock();
    const [total, shares, loans, writtenOff, idle] = await Promise.all([
      this.read('totalAssets', [], blockNumber),
      this.read('totalSupply', [], blockNumber),
      this.read('loansOutstanding', [], blockNumber),
      this.read('loansWrittenOff', [], blockNumber),
      this.read('idleAssets', [], blockNumber),
    ]);
    return {
      total_assets_usd_micro: total,
      total_shares: shares,
      loans_outstanding_usd_micro: loans,
      loans_written_off_usd_micro: writtenOff,
      idle_usd_micro: idle,
    };
  }

  /** `balanceOf(vaultShareholder(mfiId))` and `convertToAssets` of it (rounded down), at one block. */
  async mfiPosition(mfiId: string): Promise<{ shares: bigint; value_usd_micro: bigint }> {
    const holder = vaultShareholder(mfiId);
    const blockNumber = await this.latestBlock();
    const shares = await this.read('balanceOf', [holder], blockNumber);
    const value = shares === 0n ? 0n : await this.read('convertToAssets', [shares], blockNumber);
    return { shares, value_usd_micro: value };
  }

  /**
   * The first vault-write log of a mined, successful transaction: DepositRecorded →
   * {shares, assetsUsdMicro}; DepositReversed → {shares (burned), assetsUsdMicro (redeemed)};
   * LoanOpened / LoanCancelled → {assetsUsdMicro: principal}; LoanRepaid → {assetsUsdMicro:
   * principal + interest}; LoanWrittenOff → {assetsUsdMicro: principal written off};
   * RemainderReleased, PaymentRefunded → {assetsUsdMicro: amount}. A transaction with repayment
   * logs (`repayLoan`, `repayLoans`) also gets `repayments`: every LoanRepaid and RepaymentSkipped
   * in log order, a skipped one with the name of the vault's error. null: not mined, reverted, or
   * no such log from the vault.
   */
  async writeResult(txHash: Hex): Promise<VaultWriteResult | null> {
    const logs = (await this.vaultLogsOf(txHash)) ?? [];
    const repayments: NonNullable<VaultWriteResult['repayments']> = [];
    for (const log of logs) {
      if (log.eventName === 'LoanRepaid')
        repayments.push({ loanId: idOfVaultRef(log.args.loanRef), repaid: true, amountUsdMicro: log.args.principal + log.args.interest });
      else if (log.eventName === 'RepaymentSkipped')
        repayments.push({ loanId: idOfVaultRef(log.args.loanRef), repaid: false, reason: skippedReason(log.args.reason) });
    }
    const first = firstWriteResult(logs);
    if (repayments.length === 0) return first;
    return { ...(first ?? {}), repayments };
  }

  /** `PurchaseOrderPaid` logs of the vault in blocks [fromBlock, toBlock], in chain order. */
  async purchaseOrderPayments(fromBlock: bigint, toBlock: bigint): Promise<PurchaseOrderPayment[]> {
    await this.checkChain();
    let logs;
    try {
      logs = await getLogs(this.client, {
        address: this.config.lendingVaultAddress,
        event: purchaseOrderPaidEvent,
        fromBlock,
        toBlock,
        strict: true,
      });
    } catch (err) {
      throw ledgerUnavailable(err, 'eth_getLogs');
    }
    return logs.filter((l) => !l.removed).map((l) => toPayment(l.args, l));
  }

  /** `PurchaseOrderPaid` logs of one mined, successful transaction from the vault; [] otherwise. */
  async purchaseOrderPaymentsInTx(txHash: Hex): Promise<PurchaseOrderPayment[]> {
    const logs = await this.vaultLogsOf(txHash);
    return (logs ?? []).flatMap((l) => (l.eventName === 'PurchaseOrderPaid' ? [toPayment(l.args, l)] : []));
  }

  /** `loanOf(vaultRef(ref))`: NONE (never opened), ACTIVE, REPAID, CANCELLED or DEFAULTED, token id, principal. */
  async loan(ref: string): Promise<{ status: VaultLoanStatus; tokenId: bigint; principalUsdMicro: bigint }> {
    const [status, tokenId, principal] = await this.read('loanOf', [vaultRef(ref)]);
    const name = VAULT_LOAN_STATUSES[status];
    if (!name) throw new LedgerUnavailableError(`The vault answered an unknown loan status ${status}.`);
    return { status: name, tokenId, principalUsdMicro: principal };
  }

  /** The purchase order's buyer payments not yet applied (micro-USDC). Not part of the port. */
  async escrowOf(purchaseOrderId: string): Promise<bigint> {
    return this.read('escrowOf', [vaultRef(purchaseOrderId)]);
  }

  /**
   * Why a mined vault transaction reverted: its call replayed on the state before its block
   * (`TokenLocked`, `InsufficientEscrow`, …), "reverted" when the replay gives no reason, or null
   * when the transaction is unknown, not mined or did not revert. Not part of the port: for logs
   * and a refused write's reason.
   */
  async refusalReason(txHash: Hex): Promise<string | null> {
    if (!TX_HASH.test(txHash)) return null;
    await this.checkChain();
    let tx, receipt;
    try {
      [tx, receipt] = await Promise.all([
        getTransaction(this.client, { hash: txHash }),
        getTransactionReceipt(this.client, { hash: txHash }),
      ]);
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError || err instanceof TransactionNotFoundError) return null;
      throw ledgerUnavailable(err, 'eth_getTransactionReceipt');
    }
    if (receipt.status !== 'reverted' || !tx.to) return null;
    try {
      await ethCall(this.client, { account: tx.from, to: tx.to, data: tx.input, gas: tx.gas, blockNumber: receipt.blockNumber - 1n });
      return 'reverted';
    } catch (err) {
      const reason = vaultRevertReason(err);
      if (reason === undefined) throw ledgerUnavailable(err, 'eth_call');
      return reason;
    }
  }

  /** The vault's decoded logs of a mined, successful transaction; null when not mined or reverted. */
  private async vaultLogsOf(txHash: Hex) {
    if (!TX_HASH.test(txHash)) return null;
    await this.checkChain();
    let receipt;
    try {
      receipt = await getTransactionReceipt(this.client, { hash: txHash });
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw ledgerUnavailable(err, 'eth_getTransactionReceipt');
    }
    if (receipt.status !== 'success') return null;
    const own = receipt.logs.filter((l) => !l.removed && isAddressEqual(l.address, this.config.lendingVaultAddress));
    return parseEventLogs({ abi: lendingVaultAbi, logs: own, strict: true });
  }

  private async latestBlock(): Promise<bigint> {
    return headBlockOf({ client: this.client, checkChain: this.checkChain });
  }

  private async read<
    F extends
      | 'totalAssets'
      | 'totalSupply'
      | 'loansOutstanding'
      | 'loansWrittenOff'
      | 'idleAssets'
      | 'balanceOf'
      | 'convertToAssets'
      | 'loanOf'
      | 'escrowOf',
  >(functionName: F, args: readonly unknown[], blockNumber?: bigint) {
    await this.checkChain();
    try {
      return (await readContract(this.client, {
        address: this.config.lendingVaultAddress,
        abi: lendingVaultAbi,
        functionName,
        args,
        ...(blockNumber !== undefined ? { blockNumber } : {}),
      } as never)) as ReadResult<F>;
    } catch (err) {
      throw ledgerUnavailable(err, functionName);
    }
  }
}

/** The effect named by the first vault-write log (see `EvmVaultReader.writeResult`); null without one. */
function firstWriteResult(logs: ReturnType<typeof parseEventLogs<typeof lendingVaultAbi>>): VaultWriteResult | null {
  for (const log of logs) {
    switch (log.eventName) {
      case 'DepositRecorded':
        return { shares: log.args.shares, assetsUsdMicro: log.args.assets };
      case 'DepositReversed':
        return { shares: log.args.shares, assetsUsdMicro: log.args.assets };
      case 'LoanOpened':
        return { assetsUsdMicro: log.args.principal };
      case 'LoanCancelled':
        return { assetsUsdMicro: log.args.principal };
      case 'LoanRepaid':
        return { assetsUsdMicro: log.args.principal + log.args.interest };
      case 'LoanWrittenOff':
        return { assetsUsdMicro: log.args.principal };
      case 'RemainderReleased':
        return { assetsUsdMicro: log.args.amount };
      case 'PaymentRefunded':
        return { assetsUsdMicro: log.args.amount };
      default:
        break;
    }
  }
  return null;
}

/** The vault error's name in a RepaymentSkipped `reason` (LoanNotActive, RepaymentBelowPrincipal, InsufficientEscrow); "skipped" when it is none of the vault's. */
function skippedReason(reason: Hex): string {
  try {
    return decodeErrorResult({ abi: lendingVaultAbi, data: reason }).errorName;
  } catch {
    return 'skipped';
  }
}

type ReadResult<F extends string> = F extends 'loanOf' ? readonly [number, bigint, bigint] : bigint;

function toPayment(
  args: { poRef: Hex; payer: Hex; amount: bigint },
  log: Pick<Log, 'transactionHash' | 'logIndex' | 'blockNumber'>,
): PurchaseOrderPayment {
  return {
    purchaseOrderId: idOfVaultRef(args.poRef),
    payer: args.payer,
    amountUsdMicro: args.amount,
    txHash: log.transactionHash!,
    logIndex: log.logIndex!,
    blockNumber: log.blockNumber!,
  };
}

/**
 * An `EvmVaultReader` from LEDGER_RPC_URL, LEDGER_CHAIN_ID, LENDING_VAULT_ADDRESS (required; need
 * 'vault:read') and LEDGER_RPC_RETRY_COUNT (optional). Throws an Error naming the first missing
 * or malformed variable.
 */
export function createVaultReaderFromEnv(env: Record<string, string | undefined> = process.env): EvmVaultReader {
  const { address, ...rest } = ledgerReadConfigFromEnv(env, 'LENDING_VAULT_ADDRESS');
  return new EvmVaultReader({ ...rest, lendingVaultAddress: address });
}
