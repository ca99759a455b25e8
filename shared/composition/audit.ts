import { fetchEvidenceFromGateway } from '../adapters/ipfs/gateway-fetch';
import { AuditAnchorRepository } from '../adapters/dynamodb/anchor-repo';
import { auditAnchorReaderFromEnv } from '../adapters/ledger/anchor-reader';
import { readChainTrail } from '../adapters/ledger/trail-reader';
import { envOr, requireEnv } from '../config';
import type { AnchorRootReader, EvidenceFetcher } from '../domain/ports/audit';
import type { AuditDeps } from '../use-cases/audit';
import { filesOfCar } from '../domain/evidence-car-reader';
import { evidenceArchive } from './evidence';
import { batchRepo } from './repos';

/**
 * Where the audit verification reads evidence: the service's own copy (the evidence bucket, a CAR
 * per CID, every block re-hashed), else — for a CID the copy does not hold — the IPFS gateway at
 * IPFS_GATEWAY_URL (default https://ipfs.io). Either way the verifier re-imports the files and
 * compares the CID.
 */
function evidenceFetcher(): EvidenceFetcher {
  const gateway = fetchEvidenceFromGateway(envOr('IPFS_GATEWAY_URL', 'https://ipfs.io'));
  return async (cid) => {
    const car = await evidenceArchive().getCar(cid);
    if (!car) return gateway(cid);
    return { files: (await filesOfCar(car)).files };
  };
}

/** The chain trail of a token, read from LEDGER_RPC_URL (no signing key needed). */
function chainTrailOf(tokenId: bigint): ReturnType<typeof readChainTrail> {
  return readChainTrail({
    rpcUrl: requireEnv('LEDGER_RPC_URL'),
    chainId: Number(requireEnv('LEDGER_CHAIN_ID')),
    batchTokenAddress: requireEnv('BATCH_TOKEN_ADDRESS') as `0x${string}`,
    traceLogAddress: requireEnv('TRACE_LOG_ADDRESS') as `0x${string}`,
    tokenId,
  });
}

/** Ports of audit reading and verification. */
export function auditDeps(): AuditDeps {
  return {
    batches: batchRepo(),
    chainTrail: chainTrailOf,
    fetchEvidence: evidenceFetcher(),
    anchors: new AuditAnchorRepository(),
    anchorRoot: anchorRootOf,
  };
}

let anchorReader: AnchorRootReader | undefined;

/** AuditAnchor's `anchoredAtBlock(root)`, its reader built from the environment on first use (a 404 or 403 needs no ledger settings). */
function anchorRootOf(root: `0x${string}`): Promise<bigint | null> {
  anchorReader ??= auditAnchorReaderFromEnv();
  return anchorReader(root);
}
