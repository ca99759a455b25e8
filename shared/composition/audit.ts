import { fetchEvidenceFromGateway } from '../adapters/ipfs/gateway-fetch';
import { readChainTrail } from '../adapters/ledger/trail-reader';
import { envOr, requireEnv } from '../config';
import type { EvidenceFetcher } from '../domain/ports';
import type { AuditDeps } from '../use-cases/audit';
import { injectedPinStore } from './custody';
import { batchRepo } from './repos';

/**
 * Where the audit verification reads pinned evidence: the pin store the process put in place (the
 * local stack's store on disk), otherwise the IPFS gateway at IPFS_GATEWAY_URL (default https://ipfs.io).
 */
export function evidenceFetcher(): EvidenceFetcher {
  const store = injectedPinStore();
  if (!store) return fetchEvidenceFromGateway(envOr('IPFS_GATEWAY_URL', 'https://ipfs.io'));
  return async (cid) => {
    const entries = await store.ls(cid);
    if (!entries) return null;
    const files = await Promise.all(entries.map(async (e) => ({ path: e.name, bytes: (await store.cat(cid, e.name))?.bytes ?? new Uint8Array() })));
    return { files };
  };
}

/** The chain trail of a token, read from LEDGER_RPC_URL (no signing key needed). */
export function chainTrailOf(tokenId: bigint): ReturnType<typeof readChainTrail> {
  return readChainTrail({
    rpcUrl: requireEnv('LEDGER_RPC_URL'), chainId: Number(requireEnv('LEDGER_CHAIN_ID')),
    batchTokenAddress: requireEnv('BATCH_TOKEN_ADDRESS') as `0x${string}`, traceLogAddress: requireEnv('TRACE_LOG_ADDRESS') as `0x${string}`, tokenId,
  });
}

/** Ports of audit reading and verification. */
export function auditDeps(): AuditDeps {
  return { batches: batchRepo(), chainTrail: chainTrailOf, fetchEvidence: evidenceFetcher() };
}
