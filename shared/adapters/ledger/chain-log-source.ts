import { isAddress, zeroAddress, type Chain, type Client, type Transport, type Hex } from 'viem';
// Tree-shakable form: a bare client plus only the actions used here (as trace-log-reader.ts).
import { getLogs, readContract } from 'viem/actions';
import type { ChainLogSource, WatchedChainLog } from '../../domain/ports/chain-watch';
import { batchTokenAbi, lendingVaultAbi, traceLogAbi } from './abi';
import { ledgerReadClient, ledgerReadConfigFromEnv, headBlockOf, ledgerUnavailable } from './read-config';
import { idOfVaultRef } from './vault-ledger';

/** Configuration of an `EvmChainLogSource` (read-only: no signing key). */
export interface ChainLogSourceConfig {
  rpcUrl: string;
  chainId: number;
  traceLogAddress: Hex;
  /** The BatchToken whose `batchIdOf(tokenId)` names the batch of a StageRecorded log. */
  batchTokenAddress: Hex;
  /** The LendingVault whose `PurchaseOrderPaid` logs are read too; omitted (or the zero address): stage logs only. */
  lendingVaultAddress?: Hex;
  /** Timeout of one RPC request, ms (default 10 000). */
  requestTimeoutMs?: number;
  /** Retries of a failed RPC request (default 2). */
  retryCount?: number;
}

const stageRecordedEvent = traceLogAbi.find((e) => e.type === 'event' && e.name === 'StageRecorded')!;
const purchaseOrderPaidEvent = lendingVaultAbi.find((e) => e.type === 'event' && e.name === 'PurchaseOrderPaid')!;

/**
 * The `ChainLogSource` port with viem over JSON-RPC: `eth_blockNumber`, and `eth_getLogs` of the
 * TraceLog's `StageRecorded` and (with a vault) the LendingVault's `PurchaseOrderPaid` over a
 * block range, decoded strictly, pending or removed logs dropped, merged in chain order. The batch
 * id of a token is read once (`BatchToken.batchIdOf`; it never changes) and cached. The endpoint's
 * chain id is checked once per instance.
 * Errors: `LedgerUnavailableError` when the RPC fails or reports another chain; `RangeError` from
 * the constructor for a bad address or chain id.
 */
export class EvmChainLogSource implements ChainLogSource {
  private readonly client: Client<Transport, Chain>;
  private readonly config: ChainLogSourceConfig;
  private readonly batchIds = new Map<bigint, string>();
  /** The endpoint is the configured chain (asked once per instance; a failure is asked again next call). */
  private readonly checkChain: () => Promise<void>;

  constructor(config: ChainLogSourceConfig) {
    for (const [name, address] of [
      ['traceLogAddress', config.traceLogAddress],
      ['batchTokenAddress', config.batchTokenAddress],
      ['lendingVaultAddress', config.lendingVaultAddress ?? zeroAddress],
    ] as const) {
      if (!isAddress(address, { strict: false })) throw new RangeError(`EvmChainLogSource: ${name} is not an address`);
    }
    this.config = config;
    ({ client: this.client, checkChain: this.checkChain } = ledgerReadClient(config, 'EvmChainLogSource'));
  }

  async headBlock(): Promise<bigint> {
    return headBlockOf({ client: this.client, checkChain: this.checkChain });
  }

  async logsIn(fromBlock: bigint, toBlock: bigint): Promise<WatchedChainLog[]> {
    await this.checkChain();
    const vault =
      this.config.lendingVaultAddress && this.config.lendingVaultAddress.toLowerCase() !== zeroAddress
        ? this.config.lendingVaultAddress
        : undefined;
    let stages, payments;
    try {
      [stages, payments] = await Promise.all([
        getLogs(this.client, { address: this.config.traceLogAddress, event: stageRecordedEvent, fromBlock, toBlock, strict: true }),
        vault
          ? getLogs(this.client, { address: vault, event: purchaseOrderPaidEvent, fromBlock, toBlock, strict: true })
          : Promise.resolve([]),
      ]);
    } catch (err) {
      throw ledgerUnavailable(err, 'eth_getLogs');
    }
    const out: WatchedChainLog[] = [];
    for (const l of stages) {
      if (l.removed || l.blockNumber === null || l.logIndex === null || l.transactionHash === null) continue;
      out.push({
        kind: 'StageRecorded',
        blockNumber: l.blockNumber,
        logIndex: l.logIndex,
        txHash: l.transactionHash,
        tokenId: l.args.tokenId,
        stage: l.args.stage,
        batchId: await this.batchIdOf(l.args.tokenId),
      });
    }
    for (const l of payments) {
      if (l.removed || l.blockNumber === null || l.logIndex === null || l.transactionHash === null) continue;
      let purchaseOrderId: string | null;
      try {
        purchaseOrderId = idOfVaultRef(l.args.poRef) || null;
      } catch {
        purchaseOrderId = null; // not text: cannot be one of our ids
      }
      out.push({
        kind: 'PurchaseOrderPaid',
        blockNumber: l.blockNumber,
        logIndex: l.logIndex,
        txHash: l.transactionHash,
        purchaseOrderId,
        payer: l.args.payer,
        amountUsdMicro: l.args.amount,
      });
    }
    return out.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
  }

  /** `BatchToken.batchIdOf(tokenId)`, null for "" (no such token); cached once known. */
  private async batchIdOf(tokenId: bigint): Promise<string | null> {
    const known = this.batchIds.get(tokenId);
    if (known) return known;
    let id: string;
    try {
      id = await readContract(this.client, {
        address: this.config.batchTokenAddress,
        abi: batchTokenAbi,
        functionName: 'batchIdOf',
        args: [tokenId],
      });
    } catch (err) {
      throw ledgerUnavailable(err, 'batchIdOf');
    }
    if (id === '') return null;
    this.batchIds.set(tokenId, id);
    return id;
  }
}

/**
 * An `EvmChainLogSource` from LEDGER_RPC_URL, LEDGER_CHAIN_ID, TRACE_LOG_ADDRESS, BATCH_TOKEN_ADDRESS
 * (required), LENDING_VAULT_ADDRESS and LEDGER_RPC_RETRY_COUNT (optional; a vault at the zero
 * address is not read). Throws an Error naming the first missing or malformed variable.
 */
export function createChainLogSourceFromEnv(env: Record<string, string | undefined> = process.env): EvmChainLogSource {
  const { address, ...rest } = ledgerReadConfigFromEnv(env, 'TRACE_LOG_ADDRESS');
  const batchToken = ledgerReadConfigFromEnv(env, 'BATCH_TOKEN_ADDRESS').address;
  const vault = env.LENDING_VAULT_ADDRESS?.trim() ? ledgerReadConfigFromEnv(env, 'LENDING_VAULT_ADDRESS').address : undefined;
  return new EvmChainLogSource({
    ...rest,
    traceLogAddress: address,
    batchTokenAddress: batchToken,
    ...(vault ? { lendingVaultAddress: vault } : {}),
  });
}
