import { BaseError, createClient, http, isAddress, type Chain, type Client, type Transport, type Hex } from 'viem';
import { getBlockNumber, getChainId } from 'viem/actions';
import { LedgerUnavailableError } from '../../domain/errors';
import { ledgerChain } from './evm-ledger';

/** What a read-only ledger client needs: the RPC endpoint, the chain, one contract, the RPC retry count. */
export interface LedgerReadConfig {
  rpcUrl: string;
  chainId: number;
  address: Hex;
  retryCount?: number;
}

/**
 * The read-only ledger configuration from LEDGER_RPC_URL, LEDGER_CHAIN_ID and the contract address
 * in `addressVariable` (required) and LEDGER_RPC_RETRY_COUNT (optional), shared by the trace-log
 * and vault readers. Throws an Error naming the first missing or malformed variable.
 */
export function ledgerReadConfigFromEnv(env: Record<string, string | undefined>, addressVariable: string): LedgerReadConfig {
  const need = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new Error(`Missing environment variable ${name}`);
    return value;
  };
  const rpcUrl = need('LEDGER_RPC_URL');
  const chainIdText = need('LEDGER_CHAIN_ID');
  if (!/^\d+$/.test(chainIdText) || !Number.isSafeInteger(Number(chainIdText)) || Number(chainIdText) <= 0) {
    throw new Error('Environment variable LEDGER_CHAIN_ID must be a positive integer');
  }
  const address = need(addressVariable);
  if (!isAddress(address, { strict: false })) throw new Error(`Environment variable ${addressVariable} is malformed`);
  const retryText = env.LEDGER_RPC_RETRY_COUNT?.trim();
  if (retryText && !/^\d{1,2}$/.test(retryText))
    throw new Error('Environment variable LEDGER_RPC_RETRY_COUNT must be a small non-negative integer');
  return { rpcUrl, chainId: Number(chainIdText), address: address as Hex, ...(retryText ? { retryCount: Number(retryText) } : {}) };
}

/** A failed RPC call as LEDGER_UNAVAILABLE (503), naming the operation and viem's short message. */
export function ledgerUnavailable(err: unknown, operation: string): LedgerUnavailableError {
  const message = err instanceof BaseError ? err.shortMessage : ((err as Error)?.message ?? String(err));
  return new LedgerUnavailableError(`Ledger RPC failed during ${operation}: ${message}`, err);
}

/** What every read-only ledger client is built from. */
export interface LedgerClientConfig {
  rpcUrl: string;
  chainId: number;
  /** Timeout of one RPC request, ms (default 10 000). */
  requestTimeoutMs?: number;
  /** Retries of a failed RPC request (default 2). */
  retryCount?: number;
}

/**
 * The read-only client of a ledger reader (`who` names it in errors): viem's public client without
 * its action decorators, over HTTP with the request timeout and retries of `config`, and its
 * remembered chain-id check ({@link chainIdCheck}). Errors: RangeError for a chain id that is not a
 * positive integer.
 */
export function ledgerReadClient(
  config: LedgerClientConfig,
  who: string,
): { client: Client<Transport, Chain>; checkChain: () => Promise<void> } {
  if (!Number.isSafeInteger(config.chainId) || config.chainId <= 0) throw new RangeError(`${who}: chainId must be a positive integer`);
  const transport = http(config.rpcUrl, { timeout: config.requestTimeoutMs ?? 10_000, retryCount: config.retryCount ?? 2 });
  const client = createClient({
    chain: ledgerChain(config.chainId, config.rpcUrl),
    transport,
    key: 'public',
    name: 'Public Client',
    type: 'publicClient',
  });
  return { client, checkChain: chainIdCheck(client, config.chainId) };
}

/**
 * The chain-id check of one reader: {@link assertChainId} asked once and remembered, asked again
 * after a failure. Errors: as assertChainId.
 */
function chainIdCheck(client: Client<Transport, Chain>, expected: number): () => Promise<void> {
  let checked: Promise<void> | undefined;
  return () => {
    checked ??= assertChainId(client, expected);
    checked.catch(() => (checked = undefined));
    return checked;
  };
}

/**
 * Checks that the endpoint serves `expected` (eth_chainId). Errors: LedgerUnavailableError when it
 * cannot be asked or names another chain. Callers keep the promise, once per instance, and drop it
 * on failure so the next call asks again.
 */
async function assertChainId(client: Client<Transport, Chain>, expected: number): Promise<void> {
  let reported: number;
  try {
    reported = await getChainId(client);
  } catch (err) {
    throw ledgerUnavailable(err, 'eth_chainId');
  }
  if (reported !== expected) throw new LedgerUnavailableError(`The ledger endpoint is chain ${reported}, expected ${expected}.`);
}

/**
 * The chain's current block (never cached), after the reader's chain-id check. Errors:
 * LedgerUnavailableError (`eth_blockNumber` failed, or the endpoint is another chain).
 */
export async function headBlockOf(reader: { client: Client<Transport, Chain>; checkChain: () => Promise<void> }): Promise<bigint> {
  await reader.checkChain();
  try {
    return await getBlockNumber(reader.client, { cacheTime: 0 });
  } catch (err) {
    throw ledgerUnavailable(err, 'eth_blockNumber');
  }
}
