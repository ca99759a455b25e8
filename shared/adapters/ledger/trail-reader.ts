import { createClient, http, type BlockNumber, type Client, type PublicClient, type Hex } from 'viem';
// Tree-shakable form: a bare client plus only the actions used here (createPublicClient attaches every
// viem action: viem's part of get-batch-audit was 334 KB, now 65 KB).
import { getBlockNumber, getChainId, getContractEvents } from 'viem/actions';
import type { ChainMint, ChainStage } from '../../domain/audit-verify';
import { batchTokenAbi, traceLogAbi } from './abi';
import { ledgerChain } from './evm-ledger';

/** A BatchMinted event with where it is on the chain. */
interface ChainMintEvent extends ChainMint {
  blockNumber: bigint;
  logIndex: number;
}

/** A StageRecorded event with where it is on the chain and who recorded it. */
interface ChainStageEvent extends ChainStage {
  blockNumber: bigint;
  recorder: Hex;
}

/** The ledger events of one token, each list in chain order (block, then log index). */
export interface ChainTrailEvents {
  mints: ChainMintEvent[];
  stages: ChainStageEvent[];
}

/** Input of `readChainTrail`: a viem public client, or an RPC URL to create one. */
export interface ReadChainTrailInput {
  publicClient?: PublicClient;
  /** JSON-RPC endpoint; used when no `publicClient` is given. */
  rpcUrl?: string;
  /** The chain id the endpoint must report (31337 for the local hardhat node). */
  chainId: number;
  batchTokenAddress: Hex;
  traceLogAddress: Hex;
  tokenId: bigint;
  /** First block to search (default 0: the contracts' deployment block is a good value on a real chain). */
  fromBlock?: bigint;
  /** Last block to search (default: the latest block). */
  toBlock?: bigint;
  /** Split the search into `eth_getLogs` calls over at most this many blocks (for RPCs that limit ranges). */
  maxBlockRange?: bigint;
}

/**
 * Reads the ledger trail of one BatchToken: its `BatchMinted` events on BatchToken and its
 * `StageRecorded` events on TraceLog, selected by the indexed `tokenId` topic with `eth_getLogs`
 * and decoded with the ABIs of `./abi` (logs that do not decode, were removed by a reorg or are
 * pending are left out). Returns `{mints, stages}` in chain order; token ids are bigints, hashes
 * 0x-hex.
 * Errors: Error when the endpoint reports another chain id than `chainId`, when neither
 * `publicClient` nor `rpcUrl` is given, or a bad range; viem errors when the RPC fails.
 */
export async function readChainTrail(input: ReadChainTrailInput): Promise<ChainTrailEvents> {
  let client: Client | undefined = input.publicClient;
  if (!client) {
    if (!input.rpcUrl) throw new Error('readChainTrail: give publicClient or rpcUrl');
    // The client createPublicClient builds, without the action decorators.
    client = createClient({
      chain: ledgerChain(input.chainId, input.rpcUrl),
      transport: http(input.rpcUrl, { retryCount: 2 }),
      key: 'public',
      name: 'Public Client',
      type: 'publicClient',
    });
  }
  const reported = await getChainId(client);
  if (reported !== input.chainId) throw new Error(`readChainTrail: the RPC endpoint is chain ${reported}, expected ${input.chainId}`);

  const fromBlock = input.fromBlock ?? 0n;
  const toBlock = input.toBlock ?? (await getBlockNumber(client));
  if (fromBlock < 0n || toBlock < fromBlock) throw new Error(`readChainTrail: bad block range ${fromBlock}..${toBlock}`);
  const step = input.maxBlockRange && input.maxBlockRange > 0n ? input.maxBlockRange : toBlock - fromBlock + 1n;
  const ranges: Array<[BlockNumber, BlockNumber]> = [];
  for (let start = fromBlock; start <= toBlock; start += step) {
    ranges.push([start, start + step - 1n < toBlock ? start + step - 1n : toBlock]);
  }

  const mints: ChainMintEvent[] = [];
  const stages: ChainStageEvent[] = [];
  for (const [from, to] of ranges) {
    const [minted, recorded] = await Promise.all([
      getContractEvents(client, {
        address: input.batchTokenAddress,
        abi: batchTokenAbi,
        eventName: 'BatchMinted',
        args: { tokenId: input.tokenId },
        fromBlock: from,
        toBlock: to,
        strict: true,
      }),
      getContractEvents(client, {
        address: input.traceLogAddress,
        abi: traceLogAbi,
        eventName: 'StageRecorded',
        args: { tokenId: input.tokenId },
        fromBlock: from,
        toBlock: to,
        strict: true,
      }),
    ]);
    for (const log of minted) {
      if (log.removed || log.blockNumber === null || log.transactionHash === null || log.logIndex === null) continue;
      if (log.args.tokenId !== input.tokenId) continue; // defensive: a node that ignores topic filters
      mints.push({
        tokenId: log.args.tokenId,
        batchId: log.args.batchId,
        auditHash: log.args.auditHash,
        txHash: log.transactionHash,
        blockNumber: log.blockNumber,
        logIndex: log.logIndex,
      });
    }
    for (const log of recorded) {
      if (log.removed || log.blockNumber === null || log.transactionHash === null || log.logIndex === null) continue;
      if (log.args.tokenId !== input.tokenId) continue;
      stages.push({
        tokenId: log.args.tokenId,
        stage: log.args.stage,
        evidenceCid: log.args.evidenceCid,
        auditHash: log.args.auditHash,
        recorder: log.args.recorder,
        txHash: log.transactionHash,
        blockNumber: log.blockNumber,
        logIndex: log.logIndex,
      });
    }
  }
  const order = (a: { blockNumber: bigint; logIndex: number }, b: { blockNumber: bigint; logIndex: number }) =>
    a.blockNumber < b.blockNumber ? -1 : a.blockNumber > b.blockNumber ? 1 : a.logIndex - b.logIndex;
  return { mints: mints.sort(order), stages: stages.sort(order) };
}
