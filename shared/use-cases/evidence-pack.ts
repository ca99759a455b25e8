import type { EntryAnchor } from '../domain/anchoring';
import type { Caller } from '../domain/caller';
import type { DdsRecord } from '../domain/dds';
import { DomainError } from '../domain/errors';
import type { BatchStore } from '../domain/ports/batches';
import type { DdsDocumentStore, DdsStore } from '../domain/ports/eudr';
import type { RegistryStore } from '../domain/ports/registry';
import type { Batch, Farmer, Grade, Stage } from '../domain/records';
import { verifyBatchAudit, type AuditDeps } from './audit';
import { withDdsDocuments } from './dds-documents';
import { readDds } from './eudr';

/** The ports the EU evidence pack reads: the DDS, the batch and its audit log, the farmers' forest checks, and (for the anchors) the ledger. */
export interface EvidencePackDeps extends Pick<AuditDeps, 'chainTrail' | 'fetchEvidence' | 'anchors' | 'anchorRoot'> {
  dds: Pick<DdsStore, 'get'>;
  /** Where the statements' documents are kept (the pack holds the statement with its producers). */
  documentStore: DdsDocumentStore;
  batches: Pick<BatchStore, 'get' | 'auditEntries'>;
  registry: Pick<RegistryStore, 'getFarmer'>;
}

/** The public facts of the batch the DDS covers (no payment state or amount, no phone). */
interface PackBatch {
  batch_id: string;
  token_id: string;
  cooperative_id: string;
  farmer_id: string;
  grade: Grade;
  weight_kg: number;
  moisture_pct: number;
  stage: Stage | null;
  /** The BatchToken mint transaction; null until it is mined. */
  mint_tx_hash: string | null;
  purchase_order_id: string | null;
}

/** A producer's forest check as the service recorded it (docs/api/eudr.md#forest-check): the status and the concrete dataset version it used. */
interface PackForestCheck {
  farmer_id: string;
  /** CLEAR, FLAGGED, or PENDING while the forest service has not answered; null for a producer no longer in the registry. */
  status: Farmer['gfw_status'] | null;
  /** ISO 8601 UTC; null when never checked. */
  checked_at: string | null;
  dataset: { name: string; version: string } | null;
}

/** One custody stage of the batch's trail. */
interface PackStage {
  stage: Stage;
  at: string;
  /** The evidence package (UnixFS directory CIDv1), served at GET /ipfs/{cid}; null for DELIVERED. */
  evidence_ipfs_cid: string | null;
  /** The ledger transaction (mint for DELIVERED, trace log after); null until it is mined. */
  chain_tx_hash: string | null;
  audit_log_sequence_number: number;
}

/** One audit entry without its payload (payloads may carry payout amounts and phones): its place in the hash chain and its anchor. */
interface PackAuditEntry {
  sequence_number: number;
  type: string;
  at: string;
  prev_hash: string;
  hash: string;
  /** Where the entry is anchored on the ledger, as GET /batch/{id}/audit shows it (docs/api/anchoring.md#anchoring-of-the-audit-log); null while not yet anchored. */
  anchor: EntryAnchor | null;
}

/** What the evidence pack holds besides the DDS view (the HTTP layer adds that and serialises it). */
export interface EvidencePackContent {
  dds: DdsRecord;
  batch: PackBatch;
  forest_checks: PackForestCheck[];
  trail: PackStage[];
  audit: { head: { sequence_number: number; hash: string } | null; entries: PackAuditEntry[] };
}

/**
 * GET /eudr/dds/{id}/evidence (docs/api/eudr.md#due-diligence-statements, docs/api/anchoring.md#anchoring-of-the-audit-log): the file an EU importer hands an authority —
 * the DDS, its producers' forest checks with the dataset versions, the batch's custody trail
 * (evidence CIDs, ledger transactions) and its audit entries with their ledger anchors. Access as
 * GET /eudr/dds/{id} (`readDds`). Built only from stored records and the ledger, so the same trail
 * gives the same content (no generation time). Never a phone number or payout amount: audit entries
 * go without their payloads, the batch without its payment fields.
 * Errors: DDS_NOT_FOUND (404), INSUFFICIENT_PERMISSIONS (403), BATCH_NOT_FOUND (404, a DDS whose
 * batch is gone), BATCH_NOT_ELIGIBLE (422, a purchase order's statement), LEDGER_UNAVAILABLE (503) when the ledger cannot be read for the anchors.
 */
export async function readEvidencePack(deps: EvidencePackDeps, caller: Caller, ddsId: string): Promise<EvidencePackContent> {
  const stored = await readDds(deps.dds, caller, ddsId);
  if (stored.batch_id === null) {
    throw new DomainError(
      'BATCH_NOT_ELIGIBLE',
      `Due diligence statement ${ddsId} is a purchase order's (${stored.purchase_order_id}); the evidence pack is built for a batch's statement.`,
    );
  }
  const dds = await withDdsDocuments(deps.documentStore, stored);
  const batch = await deps.batches.get(stored.batch_id);
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${stored.batch_id} of due diligence statement ${ddsId} is not recognised.`);
  const [entries, farmers] = await Promise.all([
    deps.batches.auditEntries(batch.batch_id),
    Promise.all(dds.producers.map(async (p) => ({ farmer_id: p.farmer_id, farmer: await deps.registry.getFarmer(p.farmer_id) }))),
  ]);
  const { anchors } = await verifyBatchAudit(deps, batch, entries);
  const head = entries.at(-1);
  return {
    dds,
    batch: packBatch(batch),
    forest_checks: farmers.map(({ farmer_id, farmer }) => ({
      farmer_id,
      status: farmer?.gfw_status ?? null,
      checked_at: farmer?.gfw_checked_at ?? null,
      dataset: farmer?.gfw_dataset ? { name: farmer.gfw_dataset.name, version: farmer.gfw_dataset.version } : null,
    })),
    trail: (batch.stage_history ?? []).map((h) => ({
      stage: h.stage,
      at: h.at,
      evidence_ipfs_cid: h.evidence_ipfs_cid ?? null,
      chain_tx_hash: h.chain_tx_hash ?? null,
      audit_log_sequence_number: Number(h.audit_log_sequence_number),
    })),
    audit: {
      head: head ? { sequence_number: head.sequence_number, hash: head.hash } : null,
      entries: entries.map((e, i) => ({
        sequence_number: e.sequence_number,
        type: e.type,
        at: e.at,
        prev_hash: e.prev_hash,
        hash: e.hash,
        anchor: anchors[i] ?? null,
      })),
    },
  };
}

function packBatch(b: Batch): PackBatch {
  return {
    batch_id: b.batch_id,
    token_id: b.token_id,
    cooperative_id: b.cooperative_id,
    farmer_id: b.farmer_id,
    grade: b.grade,
    weight_kg: b.weight_kg,
    moisture_pct: b.moisture_pct,
    stage: b.stage,
    mint_tx_hash: b.chain_tx_hash ?? null,
    purchase_order_id: b.purchase_order_id ?? null,
  };
}
