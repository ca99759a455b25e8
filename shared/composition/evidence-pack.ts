import type { AuditDeps } from '../use-cases/audit';
import type { EvidencePackDeps } from '../use-cases/evidence-pack';
import { auditDeps } from './audit';
import { batchRepo, ddsRepo, registryRepo } from './repos';

/**
 * Ports of the EU evidence pack: the table, and the ledger (read only), the evidence copy and the
 * anchors as the audit endpoint reads them — built on first use, so a refused or unknown DDS is
 * answered without the ledger's configuration.
 */
export function evidencePackDeps(): EvidencePackDeps {
  let audit: AuditDeps | undefined;
  const ledger = () => (audit ??= auditDeps());
  return {
    dds: ddsRepo(),
    batches: batchRepo(),
    registry: registryRepo(),
    chainTrail: (tokenId) => ledger().chainTrail(tokenId),
    fetchEvidence: (cid) => ledger().fetchEvidence(cid),
    anchors: { ofBatch: (batchId) => ledger().anchors.ofBatch(batchId) },
    anchorRoot: (root) => ledger().anchorRoot(root),
  };
}
