import type { EvidencePackDeps } from '../use-cases/evidence-pack';
import { auditDeps } from './audit';
import { batchRepo, ddsRepo, registryRepo } from './repos';

/** Ports of the EU evidence pack: the table, and the ledger (read only), the evidence copy and the anchors as the audit endpoint reads them. */
export function evidencePackDeps(): EvidencePackDeps {
  return { ...auditDeps(), dds: ddsRepo(), batches: batchRepo(), registry: registryRepo() };
}
