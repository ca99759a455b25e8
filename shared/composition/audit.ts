import { fetchEvidenceFromGateway } from '../adapters/ipfs/gateway-fetch';
import { auditAnchorReaderFromEnv } from '../adapters/ledger/anchor-reader';
import { readChainTrail } from '../adapters/ledger/trail-reader';
import { envOr, requireEnv } from '../config';
import { filesOfCar } from '../domain/evidence-car-reader';
import type { AnchorRootReader, EvidenceFetcher } from '../domain/ports/audit';
import type { AuditDeps } from '../use-cases/audit';
import type { TracePageDeps } from '../use-cases/trace-page';
import { evidenceArchive } from './batches';
import { once } from './once';
import { auditAnchorRepo, batchRepo, ddsRepo, registryRepo } from './platform';

/**
 * Reading a batch's trail back and verifying it (GET /batch/{id}/audit, the public trace page, and
 * the EU evidence pack in ./eudr): the table, the ledger read only (no signing key), the evidence
 * copy and the anchors. The ledger's settings are read on first use, so a request refused by its
 * access check (a 404 or 403) needs none of them.
 */

/**
 * Where the audit verification reads evidence: the service's own copy (the evidence bucket, a CAR
 * per CID, every block re-hashed), else — for a CID the copy does not hold — the IPFS gateway at
 * IPFS_GATEWAY_URL (default https://ipfs.io). Either way the verifier re-imports the files and
 * compares the CID.
 */
const fetchEvidence: EvidenceFetcher = async (cid) => {
  const car = await evidenceArchive().getCar(cid);
  if (!car) return ipfsGateway()(cid);
  return { files: (await filesOfCar(car)).files };
};

/** Evidence from the IPFS gateway at IPFS_GATEWAY_URL (default https://ipfs.io). */
const ipfsGateway = (): EvidenceFetcher => once(ipfsGateway, () => fetchEvidenceFromGateway(envOr('IPFS_GATEWAY_URL', 'https://ipfs.io')));

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

/** AuditAnchor's `anchoredAtBlock(root)` (LEDGER_RPC_URL, LEDGER_CHAIN_ID, AUDIT_ANCHOR_ADDRESS). */
const anchorRootReader = (): AnchorRootReader => once(anchorRootReader, () => auditAnchorReaderFromEnv());
/** {@link anchorRootReader}, built at its first call. */
const anchorRoot: AnchorRootReader = (root) => anchorRootReader()(root);

/** Ports of audit reading and verification. */
export function auditDeps(): AuditDeps {
  return { batches: batchRepo(), chainTrail: chainTrailOf, fetchEvidence, anchors: auditAnchorRepo(), anchorRoot };
}

/** Ports of the public trace page: the table, and the ledger (read only), the evidence copy and the anchors as the audit reads them. */
export function tracePageDeps(): TracePageDeps {
  return { ...auditDeps(), registry: registryRepo(), dds: ddsRepo() };
}
