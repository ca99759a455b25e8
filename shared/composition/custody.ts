import { SqsWorkQueue } from '../adapters/aws/queues';
import { CustodyRepository } from '../adapters/dynamodb/custody-repo';
import { LocalPinStore } from '../adapters/ipfs/local-pin-store';
import type { PinStore } from '../adapters/ipfs/pin-store';
import { PinningServiceStore } from '../adapters/ipfs/pinning-service-store';
import { envOr, requireEnv, secret } from '../config';
import type { CustodyDeps, LedgerWriteMessage } from '../use-cases/custody';
import type { EvidenceFetcher } from '../domain/audit-verify';
import { fetchEvidenceFromGateway } from '../adapters/ipfs/gateway-fetch';
import { readChainTrail } from '../adapters/ledger/trail-reader';
import { batchRepo, now } from './repos';

/**
 * The custody trail's adapters. Evidence is pinned to the local pinning store under
 * IPFS_PIN_DIR when it is set (the local stack), otherwise through the IPFS Pinning Service API
 * at PINNING_SERVICE_URL with the token in PINNING_SERVICE_TOKEN or its Secrets Manager secret.
 */
let custody: CustodyRepository | undefined;
let pins: PinStore | undefined;

export const custodyRepo = () => (custody ??= new CustodyRepository());
export const ledgerWriteQueue = () => new SqsWorkQueue<LedgerWriteMessage>('LEDGER_WRITE_QUEUE_URL', { fifoGroup: 'trace-log-writer' });

export function pinStore(): PinStore {
  if (pins) return pins;
  const dir = process.env.IPFS_PIN_DIR;
  if (dir) return (pins = new LocalPinStore(dir));
  let real: Promise<PinStore> | undefined;
  const load = () => (real ??= secret('PINNING_SERVICE_TOKEN', 'PINNING_SERVICE_TOKEN_SECRET_ARN').then((token) =>
    new PinningServiceStore({ endpoint: requireEnv('PINNING_SERVICE_URL'), accessToken: token.trim(), origins: envOr('PINNING_ORIGINS', '').split(',').filter(Boolean) })));
  pins = {
    pin: async (p) => (await load()).pin(p),
    cat: async (cid, path) => (await load()).cat(cid, path),
    ls: async (cid) => (await load()).ls(cid),
  };
  return pins;
}

/**
 * Where the audit verification reads pinned evidence: the local pin store when IPFS_PIN_DIR is set,
 * otherwise the IPFS gateway at IPFS_GATEWAY_URL (default https://ipfs.io).
 */
export function evidenceFetcher(): EvidenceFetcher {
  const dir = process.env.IPFS_PIN_DIR;
  if (!dir) return fetchEvidenceFromGateway(envOr('IPFS_GATEWAY_URL', 'https://ipfs.io'));
  const store = pinStore();
  return async (cid) => {
    const entries = await store.ls(cid);
    if (!entries) return null;
    const files = await Promise.all(entries.map(async (e) => ({ path: e.name, bytes: (await store.cat(cid, e.name))?.bytes ?? new Uint8Array() })));
    return { files };
  };
}

/** The chain trail of a token, read from LEDGER_RPC_URL (no signing key needed). */
export function chainTrailOf(tokenId: bigint) {
  return readChainTrail({
    rpcUrl: requireEnv('LEDGER_RPC_URL'), chainId: Number(requireEnv('LEDGER_CHAIN_ID')),
    batchTokenAddress: requireEnv('BATCH_TOKEN_ADDRESS') as `0x${string}`, traceLogAddress: requireEnv('TRACE_LOG_ADDRESS') as `0x${string}`, tokenId,
  });
}

export function custodyDeps(): CustodyDeps {
  return { batches: batchRepo(), custody: custodyRepo(), pins: pinStore(), ledgerQueue: ledgerWriteQueue(), now };
}
