import { NOT_YET_ANCHORED } from '../domain/audit-verify';
import { DomainError } from '../domain/errors';
import { publicPlotGeometry, type GeoJsonPolygonGeometry } from '../domain/farm-geometry';
import type { BatchStore } from '../domain/ports/batches';
import type { DdsOfBatchReader } from '../domain/ports/eudr';
import type { RegistryStore } from '../domain/ports/registry';
import type { Batch, Farmer, Grade, Stage } from '../domain/records';
import { verifyBatchAudit, type AuditDeps } from './audit';

/** The ports the public trace page reads. */
export interface TracePageDeps extends Pick<AuditDeps, 'chainTrail' | 'fetchEvidence' | 'anchors' | 'anchorRoot'> {
  batches: Pick<BatchStore, 'get' | 'auditEntries'>;
  registry: Pick<RegistryStore, 'getFarmer' | 'getCooperative'>;
  dds: DdsOfBatchReader;
}

/** One custody stage as the public sees it. */
interface PublicStage {
  stage: Stage;
  /** ISO 8601 UTC. */
  at: string;
  /** The ledger transaction (mint for DELIVERED, trace log after); null until it is mined. */
  chain_tx_hash: string | null;
  /** The evidence package (UnixFS directory CIDv1), served at /ipfs/{cid}; null for DELIVERED. */
  evidence_ipfs_cid: string | null;
}

/**
 * What anyone may see of a batch (docs/api/trace-page.md#public-trace-page): no phone number, no payout amount or payment
 * state, no farmer id and no full name — the farmer's first name and district only.
 */
export interface PublicTrace {
  batch_id: string;
  token_id: string;
  grade: Grade;
  weight_kg: number;
  stage: Stage | null;
  cooperative: { name: string; district: string };
  farmer: { first_name: string; district: string };
  /**
   * The farm's plot as a GeoJSON Polygon ([lng, lat]): the registered polygon, or for a farm
   * registered as a point (≤ 4 ha) the circle of its declared area round that point; every
   * coordinate rounded to 3 decimals, about 110 m (`publicPlotGeometry`).
   */
  plot: { source: 'POLYGON' | 'POINT_AND_AREA'; area_ha: number; geometry: GeoJsonPolygonGeometry };
  stages: PublicStage[];
  /** The reference number of the statement covering the batch (its own or its purchase order's) once AVAILABLE, else null. */
  dds_reference_number: string | null;
  /** Its verification number, likewise. */
  dds_verification_number: string | null;
  /** AVAILABLE while that statement covers the batch; WITHDRAWN once it was withdrawn (the numbers stay, no longer valid); null when there is none. */
  dds_status: 'AVAILABLE' | 'WITHDRAWN' | null;
  /**
   * The verification of GET /batch/{id}/audit (hash chain, ledger events, pinned evidence):
   * `verified` null when the ledger could not be read just now. Failures name the audit entry and
   * the check only (their details may quote private payloads). `entries_anchored` of
   * `entries_total` audit entries are anchored on the ledger (docs/api/anchoring.md#anchoring-of-the-audit-log); `awaiting_anchor`
   * counts those only waiting for the next periodic anchor (every other check of them passing).
   */
  verification: {
    verified: boolean | null;
    checks_passed: number;
    checks_total: number;
    failures: Array<{ sequence_number: number; check: string }>;
    entries_total: number;
    entries_anchored: number;
    awaiting_anchor: number;
    unavailable_reason?: string;
  };
}

/** The first name of a full name (the first word), as the page may show it. */
export function firstName(fullName: string): string {
  return fullName.trim().split(/\s+/)[0] ?? '';
}

/**
 * The plot drawn on the page and given in its JSON: the farmer's polygon, else the circle of the
 * declared area round the GPS point — with coordinates rounded to 3 decimals (about 110 m) by the
 * domain's one public-plot rule (`publicPlotGeometry`), never the exact plot.
 */
function farmPlot(farm: Farmer['farm']): PublicTrace['plot'] {
  const geometry = publicPlotGeometry(farm);
  if (farm.polygon) return { source: 'POLYGON', area_ha: farm.computed_area_ha ?? farm.area_ha, geometry };
  return { source: 'POINT_AND_AREA', area_ha: farm.area_ha, geometry };
}

/**
 * The public trace of a batch (GET /trace/{id}, docs/api/trace-page.md#public-trace-page). Public by decision: anyone holding
 * the batch id (printed on the bag's QR code) may read this view — which is why it is built here,
 * field by field, from what docs/api/trace-page.md#public-trace-page lists, and never from the cooperative's views; no caller is
 * authorised or impersonated. The verification is the audit endpoint's (`verifyBatchAudit`).
 * Errors: BATCH_NOT_FOUND (404; also for a batch whose mint is not confirmed yet).
 */
export async function readPublicTrace(deps: TracePageDeps, batchId: string): Promise<PublicTrace> {
  const batch = await deps.batches.get(batchId);
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  const [farmer, cooperative, entries, dds] = await Promise.all([
    deps.registry.getFarmer(batch.farmer_id),
    deps.registry.getCooperative(batch.cooperative_id),
    deps.batches.auditEntries(batchId),
    deps.dds.ofBatch(batchId),
  ]);
  if (!farmer || !cooperative) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  return {
    batch_id: batch.batch_id,
    token_id: batch.token_id,
    grade: batch.grade,
    weight_kg: batch.weight_kg,
    stage: batch.stage,
    cooperative: { name: cooperative.name, district: cooperative.district },
    farmer: { first_name: firstName(farmer.full_name), district: farmer.district },
    plot: farmPlot(farmer.farm),
    stages: publicStages(batch),
    dds_reference_number: batch.dds?.reference_number ?? (dds?.status === 'AVAILABLE' ? (dds.reference_number ?? null) : null),
    dds_verification_number: batch.dds?.verification_number ?? (dds?.status === 'AVAILABLE' ? (dds.verification_number ?? null) : null),
    dds_status: batch.dds ? (batch.dds.status ?? 'AVAILABLE') : dds?.status === 'AVAILABLE' && dds.reference_number ? 'AVAILABLE' : null,
    verification: await publicVerification(deps, batch, entries),
  };
}

function publicStages(batch: Batch): PublicStage[] {
  return (batch.stage_history ?? []).map((h) => ({
    stage: h.stage,
    at: h.at,
    chain_tx_hash: h.chain_tx_hash ?? null,
    evidence_ipfs_cid: h.evidence_ipfs_cid ?? null,
  }));
}

async function publicVerification(
  deps: TracePageDeps,
  batch: Batch,
  entries: Awaited<ReturnType<TracePageDeps['batches']['auditEntries']>>,
): Promise<PublicTrace['verification']> {
  try {
    const r = await verifyBatchAudit(deps, batch, entries);
    return {
      verified: r.verified,
      checks_passed: r.checks.filter((c) => c.ok).length,
      checks_total: r.checks.length,
      failures: r.checks.filter((c) => !c.ok).map((c) => ({ sequence_number: c.sequence_number, check: c.check })),
      entries_total: entries.length,
      entries_anchored: r.anchors.filter((a) => a !== null).length,
      awaiting_anchor: r.checks.filter((c) => !c.ok && c.check === 'anchor' && c.detail.startsWith(NOT_YET_ANCHORED)).length,
    };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'LEDGER_UNAVAILABLE') {
      return {
        verified: null,
        checks_passed: 0,
        checks_total: 0,
        failures: [],
        entries_total: entries.length,
        entries_anchored: 0,
        awaiting_anchor: 0,
        unavailable_reason: 'The ledger could not be read just now; try again shortly.',
      };
    }
    throw err;
  }
}

/** GET /trace/{id}/qr.svg: the batch must exist (confirmed). Errors: BATCH_NOT_FOUND (404). */
export async function assertPublicBatch(batches: Pick<BatchStore, 'get'>, batchId: string): Promise<void> {
  if (!(await batches.get(batchId))) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
}
