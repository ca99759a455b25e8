import { assertActsFor } from '../domain/access';
import { verifyAuditTrail, type AuditVerification, type EvidenceFetcher } from '../domain/audit-verify';
import { auditEntriesFor } from '../domain/audit-redaction';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import type { AnchorRootReader, AuditAnchorStore, ChainTrail, ChainTrailReader } from '../domain/ports/audit';
import type { BatchStore } from '../domain/ports/batches';
import type { AuditEntry, Batch } from '../domain/records';

/** The ports audit reading needs. */
export interface AuditDeps {
  batches: Pick<BatchStore, 'get' | 'auditEntries'>;
  /** The BatchToken's mint and TraceLog events, read from the ledger. */
  chainTrail: ChainTrailReader;
  /** Pinned evidence by CID (local pin store or an IPFS gateway). */
  fetchEvidence: EvidenceFetcher;
  /** The batch's periodic anchors (docs/api/anchoring.md#anchoring-of-the-audit-log), and where their roots are checked on chain. */
  anchors: Pick<AuditAnchorStore, 'ofBatch'>;
  anchorRoot: AnchorRootReader;
}

/** GET /batch/{id}/audit entries, after the access check. Errors: BATCH_NOT_FOUND, INSUFFICIENT_PERMISSIONS. */
async function readAuditEntries(
  batches: Pick<BatchStore, 'get' | 'auditEntries'>,
  caller: Caller,
  batchId: string,
): Promise<{ batch: Batch; entries: AuditEntry[] }> {
  const b = await batches.get(batchId);
  if (!b) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  assertActsFor(caller, b.cooperative_id);
  return { batch: b, entries: await batches.auditEntries(batchId) };
}

/**
 * GET /batch/{id}/audit (docs/api/batches-and-custody.md#custody-trail): the batch's audit entries, verified — the hash chain
 * recomputed and compared with the BatchToken and TraceLog events on chain and with the pinned
 * evidence; `checks` says what matched and what did not. The verification runs on the full
 * entries; an AGENT then reads them without amounts, phone numbers and transaction ids
 * (`auditEntriesFor`, `payload_redacted: true`), with the same `verified` and `checks`.
 * Errors: BATCH_NOT_FOUND, INSUFFICIENT_PERMISSIONS, LEDGER_UNAVAILABLE (503) when the chain cannot be read.
 */
export async function readVerifiedAudit(
  deps: AuditDeps,
  caller: Caller,
  batchId: string,
): Promise<{ batch: Batch; entries: AuditEntry[] } & AuditVerification> {
  const { batch, entries } = await readAuditEntries(deps.batches, caller, batchId);
  const verification = await verifyBatchAudit(deps, batch, entries);
  return { batch, entries: auditEntriesFor(caller, entries), ...verification };
}

/**
 * The verification of `GET /batch/{id}/audit` for a batch already read (and its access already
 * decided by the caller's use case): the hash chain, the ledger events of its token, the pinned
 * evidence and every entry's anchor (the batch's periodic anchors, their roots read from
 * AuditAnchor); `anchors` gives each entry's anchor or null. Errors: LEDGER_UNAVAILABLE (503) when
 * the chain (the token's events or an anchor's root) cannot be read.
 */
export async function verifyBatchAudit(
  deps: Pick<AuditDeps, 'chainTrail' | 'fetchEvidence' | 'anchors' | 'anchorRoot'>,
  batch: Batch,
  entries: AuditEntry[],
): Promise<AuditVerification> {
  let chain: ChainTrail;
  try {
    chain = await deps.chainTrail(BigInt(batch.token_id));
  } catch (err) {
    throw new DomainError('LEDGER_UNAVAILABLE', `The ledger could not be read to verify the trail: ${(err as Error).message}`);
  }
  const claimed = await deps.anchors.ofBatch(batch.batch_id);
  // The roots are read here, so a ledger that cannot be read is a 503 as for the trail, not a failed check.
  let roots: Map<string, bigint | null>;
  try {
    const distinct = [...new Set(claimed.map((a) => a.root))];
    roots = new Map(await Promise.all(distinct.map(async (root) => [root, await deps.anchorRoot(root)] as const)));
  } catch (err) {
    throw new DomainError('LEDGER_UNAVAILABLE', `The ledger could not be read to verify the anchors: ${(err as Error).message}`);
  }
  const rootBlock = async (root: `0x${string}`) => (roots.has(root) ? roots.get(root)! : deps.anchorRoot(root));
  return verifyAuditTrail({
    batchId: batch.batch_id,
    entries,
    chain,
    fetchEvidence: deps.fetchEvidence,
    anchoring: { claimed, rootBlock },
  });
}
