import {
  TransactionReceiptNotFoundError,
  decodeEventLog,
  isAddress,
  isAddressEqual,
  type Chain,
  type Client,
  type Transport,
  type Hex,
} from 'viem';
// Tree-shakable form: a bare client plus only the actions used here (as trail-reader.ts).
import { getTransactionReceipt } from 'viem/actions';
import type { ChainDepthReader } from '../../domain/chain-confirmations';
import type { RecordedStage, TraceLogReader } from '../../domain/ports/ledger';
import { traceLogAbi } from './abi';
import { ledgerReadClient, ledgerReadConfigFromEnv, headBlockOf, ledgerUnavailable } from './read-config';

/** Configuration of an `EvmTraceLogReader` (read-only: no signing key). */
export interface TraceLogReaderConfig {
  /** JSON-RPC endpoint (http/https). */
  rpcUrl: string;
  /** Chain id the endpoint must report (31337 for the local hardhat node). */
  chainId: number;
  /** The TraceLog contract whose logs count. */
  traceLogAddress: Hex;
  /** Timeout of one RPC request, ms (default 10 000). */
  requestTimeoutMs?: number;
  /** Retries of a failed RPC request (default 2). */
  retryCount?: number;
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * The `TraceLogReader` port with viem over JSON-RPC: `eth_getTransactionReceipt(txHash)`, then the
 * receipt's log whose (block-level) `logIndex` is the one asked for, which must come from
 * `traceLogAddress` and be a `StageRecorded` event (decoded strictly; another TraceLog event, such as
 * a `StageSkipped` of a batched `recordStages`, is not). The endpoint's chain id is checked once
 * per instance. `null`: malformed hash, no receipt (unknown or not yet mined), reverted, no log at
 * that index, another contract's log, or not a StageRecorded log.
 * Errors: `LedgerUnavailableError` when the RPC fails or reports another chain; `RangeError` from
 * the constructor for a bad address or chain id.
 */
export class EvmTraceLogReader implements TraceLogReader, ChainDepthReader {
  private readonly client: Client<Transport, Chain>;
  private readonly config: TraceLogReaderConfig;
  /** The endpoint is the configured chain (asked once per instance; a failure is asked again next call). */
  private readonly checkChain: () => Promise<void>;

  constructor(config: TraceLogReaderConfig) {
    if (!isAddress(config.traceLogAddress, { strict: false })) throw new RangeError('EvmTraceLogReader: traceLogAddress is not an address');
    this.config = config;
    ({ client: this.client, checkChain: this.checkChain } = ledgerReadClient(config, 'EvmTraceLogReader'));
  }

  async stageRecordedAt(txHash: Hex, logIndex: number): Promise<RecordedStage | null> {
    if (!TX_HASH.test(txHash) || !Number.isSafeInteger(logIndex) || logIndex < 0) return null;
    await this.checkChain();
    let receipt;
    try {
      receipt = await getTransactionReceipt(this.client, { hash: txHash });
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw ledgerUnavailable(err, 'eth_getTransactionReceipt');
    }
    if (receipt.status !== 'success' || receipt.blockNumber === null) return null;
    const log = receipt.logs.find((l) => l.logIndex === logIndex);
    if (!log || log.removed || !isAddressEqual(log.address, this.config.traceLogAddress)) return null;
    try {
      const decoded = decodeEventLog({ abi: traceLogAbi, data: log.data, topics: log.topics, strict: true });
      // viem decodes whichever TraceLog event the log's topic names (eventName only narrows the types): a
      // StageSkipped of recordStages, or RoleGranted, in the same transaction is no record.
      if (decoded.eventName !== 'StageRecorded') return null;
      const { tokenId, stage, evidenceCid, auditHash } = decoded.args;
      return { tokenId, stage, evidenceCid, auditHash, blockNumber: receipt.blockNumber };
    } catch {
      return null; // another event of TraceLog (e.g. RoleGranted), or a log that does not decode
    }
  }

  /** The block of the mined transaction `txHash` (any status), or null when not mined or malformed. Errors: LedgerUnavailableError. */
  async transactionBlock(txHash: string): Promise<bigint | null> {
    if (!TX_HASH.test(txHash)) return null;
    await this.checkChain();
    try {
      const receipt = await getTransactionReceipt(this.client, { hash: txHash as Hex });
      return receipt.blockNumber ?? null;
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw ledgerUnavailable(err, 'eth_getTransactionReceipt');
    }
  }

  /** The chain's current block. Errors: LedgerUnavailableError. */
  async headBlock(): Promise<bigint> {
    return headBlockOf({ client: this.client, checkChain: this.checkChain });
  }
}

/**
 * An `EvmTraceLogReader` from LEDGER_RPC_URL, LEDGER_CHAIN_ID, TRACE_LOG_ADDRESS (required) and
 * LEDGER_RPC_RETRY_COUNT (optional). Throws an Error naming the first missing or malformed variable.
 */
export function createTraceLogReaderFromEnv(env: Record<string, string | undefined> = process.env): EvmTraceLogReader {
  const { address, ...rest } = ledgerReadConfigFromEnv(env, 'TRACE_LOG_ADDRESS');
  return new EvmTraceLogReader({ ...rest, traceLogAddress: address });
}
