import type { EvidencePackDeps } from '../use-cases/evidence-pack';
import { chainTrailOf, evidenceFetcher } from './audit';
import { batchRepo, ddsRepo, registryRepo } from './repos';

/** Ports of the EU evidence pack: the table, and the ledger (read only) and evidence copy as the audit endpoint reads them for the anchors. */
export function evidencePackDeps(): EvidencePackDeps {
  return { dds: ddsRepo(), batches: batchRepo(), registry: registryRepo(), chainTrail: chainTrailOf, fetchEvidence: evidenceFetcher() };
}
