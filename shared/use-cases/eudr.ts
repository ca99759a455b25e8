import canonicalize from 'canonicalize';
import { assertActsFor } from '../domain/access';
import type { Caller } from '../domain/caller';
import { buildDueDiligenceStatement, type DdsRecord, type DueDiligenceStatement, type StoredDdsRecord } from '../domain/dds';
import { DdsRegistryRejectedError, DomainError } from '../domain/errors';
import { buildUnixfsDirectory } from '../domain/evidence-package';
import type { BatchStore, CustodyStore } from '../domain/ports/batches';
import type { DdsDocumentStore, DdsDocuments, DdsFilingMessage, DdsRegistry, DdsStore, DdsV3Status } from '../domain/ports/eudr';
import type { Notifier, WorkQueue } from '../domain/ports/messaging';
import type { ForestCheck, ForestCheckResult, RegistryStore } from '../domain/ports/registry';
import { logger } from '../runtime/logger';
import { metrics } from '../runtime/metrics';
import { type BuiltDds, type DdsXmlDelivery, ddsXmlDelivery, ddsXmlOf, keepDdsDocuments, withDdsDocuments } from './dds-documents';

/**
 * POST /eudr/verify-gfw (docs/api/eudr.md#forest-check): checks the farm again and records the result.
 * Errors: FARMER_NOT_REGISTERED, INSUFFICIENT_PERMISSIONS, GFW_API_UNAVAILABLE (503, Retry-After 300).
 */
export async function verifyFarmForest(
  deps: { registry: Pick<RegistryStore, 'getFarmer' | 'setForestCheck'>; forestCheck: ForestCheck },
  caller: Caller,
  farmerId: string,
): Promise<ForestCheckResult & { farmer_id: string }> {
  const farmer = await deps.registry.getFarmer(farmerId);
  if (!farmer) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${farmerId} is not in the farmer registry.`);
  assertActsFor(caller, farmer.cooperative_id);
  const result = await deps.forestCheck.check(farmer.farm);
  await deps.registry.setForestCheck(farmerId, result);
  if (result.status === 'FLAGGED') {
    logger.warn('farm flagged by the forest check: manual review required', {
      farmer_id: farmerId,
      cooperative_id: farmer.cooperative_id,
      alerts: result.alerts.length,
    });
  }
  return { farmer_id: farmerId, ...result };
}

/** The ports DDS generation needs. */
export interface DdsDeps {
  batches: Pick<BatchStore, 'get'>;
  registry: Pick<RegistryStore, 'getFarmer'>;
  custody: Pick<CustodyStore, 'getPurchaseOrder'>;
  dds: Pick<DdsStore, 'create' | 'get'>;
  documents: DdsDocuments;
  /** Where the statements' documents are kept (private object storage). */
  documentStore: DdsDocumentStore;
  filingQueue: WorkQueue<DdsFilingMessage>;
  now: () => Date;
}

/**
 * POST /eudr/generate-dds (docs/api/eudr.md#due-diligence-statements). Steps: 1. the batch exists and is the caller's
 * 2. GRADED or later (BATCH_NOT_ELIGIBLE) 3. its farm is CLEAR (GFW_CHECK_FAILED) 4. the EU
 * importer named on the batch's purchase order (`buyer_operator`) is the operator; the EU country
 * it goes to is the operator's 5. the JSON record and the SubmitDdsRequest XML are built, and the
 * CID of the UnixFS directory holding both (`ipfs_cid`) is computed 6. the DDS is stored (one per
 * batch: a second request returns the first) and queued for filing with the EU Information System.
 * The statement carries full names and exact plots, so it is kept privately only: its documents in
 * the private document store, its record in the table (read with a token through GET /eudr/dds/{id}
 * and /xml), never put in the public evidence copy served by GET /ipfs nor pinned to IPFS; its CID
 * stays on the record as its content address.
 * Errors: BATCH_NOT_FOUND, INSUFFICIENT_PERMISSIONS, BATCH_NOT_ELIGIBLE, GFW_CHECK_FAILED, VALIDATION_ERROR.
 */
export async function generateDds(
  deps: DdsDeps,
  caller: Caller,
  input: { batch_id: string; description?: string },
): Promise<{ dds: DdsRecord; created: boolean }> {
  const ddsId = `DDS-${input.batch_id.slice(6)}`;
  const { statement, cooperativeId } = await buildBatchStatement(deps, caller, input, ddsId, deps.now().toISOString());
  return keepAndQueueStatement(deps, await ddsRecordOf(deps, statement, cooperativeId));
}

/**
 * Keeps a newly built statement and queues its filing, for the batch and the purchase-order form
 * alike: its documents in the document store first, then its record (with their keys, sizes and
 * SHA-256) in the table. A statement with the same id already kept is returned instead
 * (`created: false`, with its documents), so a repeated request files nothing twice and writes no
 * documents; a failure to queue the filing is logged and the kept statement still returned (`created: true`).
 */
export async function keepAndQueueStatement(deps: DdsDeps, built: BuiltDds): Promise<{ dds: DdsRecord; created: boolean }> {
  const kept = async (id: string) => ({ dds: await withDdsDocuments(deps.documentStore, (await deps.dds.get(id))!), created: false });
  if (await deps.dds.get(built.record.dds_id)) return kept(built.record.dds_id);
  const stored = await keepDdsDocuments(deps.documentStore, built);
  const existing = await deps.dds.create(stored);
  if (existing) return kept(existing);
  try {
    await deps.filingQueue.send({ dds_id: built.record.dds_id });
  } catch (err) {
    logger.error('DDS filing could not be queued', { dds_id: built.record.dds_id, error: err as Error });
  }
  return { dds: { ...built.record, documents: stored.documents! }, created: true };
}

/**
 * A batch's statement from the current records (steps 1–4 of {@link generateDds}), for generation
 * and amendment. Errors as {@link generateDds}.
 */
export async function buildBatchStatement(
  deps: Pick<DdsDeps, 'batches' | 'registry' | 'custody'>,
  caller: Caller,
  input: { batch_id: string; description?: string },
  ddsId: string,
  createdAt: string,
): Promise<{ statement: DueDiligenceStatement; cooperativeId: string }> {
  const batch = await deps.batches.get(input.batch_id);
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${input.batch_id} is not recognised.`);
  assertActsFor(caller, batch.cooperative_id);
  const farmer = await deps.registry.getFarmer(batch.farmer_id);
  if (!farmer) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${batch.farmer_id} of batch ${batch.batch_id} is not registered.`);
  const po = batch.purchase_order_id ? await deps.custody.getPurchaseOrder(batch.purchase_order_id) : null;
  if (batch.stage === null || ['DELIVERED'].includes(batch.stage)) {
    throw new DomainError(
      'BATCH_NOT_ELIGIBLE',
      `Batch ${batch.batch_id} is at ${batch.stage ?? 'no stage'}; a due diligence statement needs GRADED or later.`,
    );
  }
  if (!po?.buyer_operator) {
    throw new DomainError(
      'BATCH_NOT_ELIGIBLE',
      `Batch ${batch.batch_id} has no purchase order naming the EU importer (buyer_operator); the statement is the importer's.`,
    );
  }
  const statement = buildDueDiligenceStatement({
    ddsId,
    internalReferenceNumber: ddsId,
    batch,
    producers: [{ farmer }],
    operator: po.buyer_operator,
    destinationCountry: po.buyer_operator.country,
    ...(input.description ? { description: input.description } : {}),
    createdAt,
  });
  return { statement, cooperativeId: batch.cooperative_id };
}

/** The record of a new statement (its XML, the CID of `dds.json` + `dds.xml`, PENDING_FILING) and the text of `dds.json`. */
export async function ddsRecordOf(
  deps: Pick<DdsDeps, 'documents'>,
  statement: DueDiligenceStatement,
  cooperativeId: string,
): Promise<BuiltDds> {
  const xml = deps.documents.submitRequestXml(statement);
  const json = canonicalize(statement)!;
  const { cid } = await buildUnixfsDirectory([
    { path: 'dds.json', bytes: new TextEncoder().encode(json) },
    { path: 'dds.xml', bytes: new TextEncoder().encode(xml) },
  ]);
  return { record: { ...statement, status: 'PENDING_FILING', cooperative_id: cooperativeId, ipfs_cid: cid, xml }, json };
}

/** Reads a DDS as stored (without its documents) for a caller. Errors: DDS_NOT_FOUND (404), INSUFFICIENT_PERMISSIONS. */
export async function readDds(dds: Pick<DdsStore, 'get'>, caller: Caller, id: string): Promise<StoredDdsRecord> {
  const d = await dds.get(id);
  if (!d) throw new DomainError('DDS_NOT_FOUND', `Due diligence statement ${id} is not recognised.`);
  assertActsFor(caller, d.cooperative_id);
  return d;
}

/** The ports of reading a statement with its documents. */
export interface DdsReadDeps {
  dds: Pick<DdsStore, 'get'>;
  documentStore: DdsDocumentStore;
}

/** GET /eudr/dds/{id}: a DDS with its producers and plots, for a caller. Errors as {@link readDds}. */
export async function readDdsWithDocuments(deps: DdsReadDeps, caller: Caller, id: string): Promise<DdsRecord> {
  return withDdsDocuments(deps.documentStore, await readDds(deps.dds, caller, id));
}

/**
 * GET /eudr/dds/{id}/xml: a DDS's SubmitDdsRequest XML for a caller, inline up to
 * `opts.inlineMaxBytes` bytes, else a short-lived link ({@link ddsXmlDelivery}). Errors as
 * {@link readDds}; the document store's.
 */
export async function readDdsXml(
  deps: DdsReadDeps,
  caller: Caller,
  id: string,
  opts: { inlineMaxBytes: number; now: Date },
): Promise<DdsXmlDelivery> {
  return ddsXmlDelivery(deps.documentStore, await readDds(deps.dds, caller, id), opts);
}

/**
 * The DDS filing worker (queue consumer): files a PENDING_FILING statement with the EU
 * Information System (once: the registry UUID is recorded before anything else happens), then
 * asks for its reference and verification numbers every `opts.pollMs` (default 250 ms) for up to
 * `opts.waitMs` (default 0: ask once) — the registry assigns them seconds after filing, so waiting
 * here spares a queue redelivery. Throws while they are not there (the queue retries). A rejection
 * is recorded with its reason. When the DDS becomes AVAILABLE the cooperative is told (the
 * outbound `dds.available` event). The first status poll waits until `opts.firstPollDelayMs` after
 * the submission or the last amendment (DDS_POLL_DELAY_S; the EU asks filers not to poll straight
 * away); when that is beyond `opts.waitMs` it throws (the queue redelivers later). A later V3 status
 * (WITHDRAWN, ARCHIVED, GROUPED, SUSPENDED, UPDATED, OBSOLETE) is recorded as the registry says.
 * A WITHDRAWN statement (queued by POST /eudr/dds/{id}/withdraw, or so reported by the registry)
 * has its withdrawal recorded on every batch it covers ({@link recordWithdrawalOnBatches}).
 * Metrics: DdsFilings with `outcome` FILED, AVAILABLE, REJECTED or the later V3 status.
 */
export async function fileDds(
  deps: { dds: DdsStore; registry: DdsRegistry; notifier: Notifier; documentStore: DdsDocumentStore; now: () => Date },
  ddsId: string,
  opts: { waitMs?: number; pollMs?: number; firstPollDelayMs?: number } = {},
): Promise<void> {
  let d = await deps.dds.get(ddsId);
  if (!d) throw new Error(`DDS ${ddsId} not found`);
  if (d.status === 'AVAILABLE') {
    // A redelivery after AVAILABLE: the covered batches may not all carry the numbers yet.
    await recordOnBatches(deps, d, d.reference_number!, d.verification_number!);
    return;
  }
  if (d.status === 'WITHDRAWN') {
    await recordWithdrawalOnBatches(deps, d);
    return;
  }
  if (d.status !== 'PENDING_FILING' && d.status !== 'SUBMITTED') return;
  if (d.status === 'PENDING_FILING') {
    try {
      const xml = await ddsXmlOf(deps.documentStore, d);
      const { uuid } = await deps.registry.submit(xml, { internalReference: d.internal_reference_number });
      await deps.dds.markSubmitted(ddsId, uuid, deps.now().toISOString());
      metrics.count('DdsFilings', { outcome: 'FILED' });
    } catch (err) {
      if (err instanceof DdsRegistryRejectedError) {
        await deps.dds.markRejected(ddsId, err.message, deps.now().toISOString());
        metrics.count('DdsFilings', { outcome: 'REJECTED' });
        return;
      }
      throw err;
    }
    d = (await deps.dds.get(ddsId))!;
  }
  const deadline = Date.now() + (opts.waitMs ?? 0);
  // The EU asks filers not to poll straight after submitting (or amending): the first poll waits.
  const changedAt = Date.parse(d.amended_at ?? d.filed_at ?? deps.now().toISOString());
  const firstPollAt = changedAt + (opts.firstPollDelayMs ?? 0);
  const early = firstPollAt - deps.now().getTime();
  if (early > 0) {
    if (Date.now() + early > deadline) throw new Error(`DDS ${ddsId}: first status poll not before ${new Date(firstPollAt).toISOString()}`);
    await new Promise((r) => setTimeout(r, early));
  }
  let info = await deps.registry.status(d.registry_uuid!);
  while (info.status === 'SUBMITTED' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 250));
    info = await deps.registry.status(d.registry_uuid!);
  }
  const at = deps.now().toISOString();
  const v3 = info.registry_status as DdsV3Status | undefined;
  if (v3 && LATER_V3_STATUSES.includes(v3)) {
    // WITHDRAWN, ARCHIVED, GROUPED…: recorded as the Information System says (numbers kept when given).
    if (info.reference_number && info.verification_number)
      await deps.dds.markAvailable(ddsId, info.reference_number, info.verification_number, at);
    await deps.dds.markRegistryStatus(ddsId, v3, at);
    metrics.count('DdsFilings', { outcome: v3 });
    if (v3 === 'WITHDRAWN') await recordWithdrawalOnBatches(deps, (await deps.dds.get(ddsId))!);
    return;
  }
  if (info.status === 'REJECTED') {
    await deps.dds.markRejected(ddsId, info.rejection_reason ?? 'rejected by the EU Information System', at);
    metrics.count('DdsFilings', { outcome: 'REJECTED' });
    return;
  }
  if (info.status !== 'AVAILABLE' || !info.reference_number || !info.verification_number)
    throw new Error(`DDS ${ddsId} filed as ${d.registry_uuid}; numbers not available yet`);
  const becameAvailable = await deps.dds.markAvailable(ddsId, info.reference_number, info.verification_number, at);
  await recordOnBatches(deps, d, info.reference_number, info.verification_number);
  if (becameAvailable) {
    metrics.count('DdsFilings', { outcome: 'AVAILABLE' });
    const what = d.batch_id !== null ? `batch ${d.batch_id}` : `purchase order ${d.purchase_order_id}`;
    await deps.notifier.publish({
      subject: `Due diligence statement ${ddsId} is available`,
      message: `The due diligence statement of ${what} was ${d.amendments ? 'amended and ' : ''}accepted by the EU Information System: reference number ${info.reference_number}, verification number ${info.verification_number}. The statement: GET /eudr/dds/${ddsId} (with a token).`,
      attributes: { cooperative_id: d.cooperative_id, event: 'dds.available', dds_id: ddsId },
    });
  }
}

/** Covered batches recorded at once while a statement's numbers (or its withdrawal) reach them. */
const RECORD_CONCURRENCY = 8;

/** Runs `record` for every batch a statement covers, {@link RECORD_CONCURRENCY} at once; how many recorded something. */
async function eachCoveredBatch(
  d: StoredDdsRecord,
  record: (batchId: string) => Promise<boolean>,
): Promise<{ batches: number; recorded: number }> {
  const batches = d.batch_ids ?? (d.batch_id !== null ? [d.batch_id] : []);
  let next = 0;
  let recorded = 0;
  const worker = async () => {
    while (next < batches.length) {
      if (await record(batches[next++]!)) recorded++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(RECORD_CONCURRENCY, batches.length) }, worker));
  return { batches: batches.length, recorded };
}

/**
 * The withdrawal of a statement on every batch it covers (docs/api/eudr.md#a-withdrawal-reaches-the-batches):
 * each batch whose `dds` names it gets `status: WITHDRAWN`, `withdrawn_at` and a DDS_WITHDRAWN audit
 * entry, once (`recordWithdrawalOnBatch` is idempotent). A statement without numbers reached no batch: nothing to do.
 */
async function recordWithdrawalOnBatches(deps: { dds: DdsStore; now: () => Date }, d: StoredDdsRecord): Promise<void> {
  if (!d.reference_number || !d.verification_number) return;
  const ref = { dds_id: d.dds_id, reference_number: d.reference_number, verification_number: d.verification_number };
  const at = d.withdrawn_at ?? deps.now().toISOString();
  const { batches, recorded } = await eachCoveredBatch(d, (b) => deps.dds.recordWithdrawalOnBatch(b, ref, at));
  if (recorded > 0) logger.info('DDS withdrawal recorded on its batches', { dds_id: d.dds_id, batches, recorded });
}

/**
 * The numbers of an AVAILABLE statement on every batch it covers (docs/api/eudr.md#the-reference-on-every-batch):
 * the batch's `dds` and a DDS_AVAILABLE audit entry, each batch once (`recordOnBatch` is idempotent).
 */
async function recordOnBatches(
  deps: { dds: DdsStore; now: () => Date },
  d: StoredDdsRecord,
  reference: string,
  verification: string,
): Promise<void> {
  const ref = { dds_id: d.dds_id, reference_number: reference, verification_number: verification };
  const at = deps.now().toISOString();
  const { batches, recorded } = await eachCoveredBatch(d, (b) => deps.dds.recordOnBatch(b, ref, at));
  if (recorded > 0) logger.info('DDS numbers recorded on its batches', { dds_id: d.dds_id, batches, recorded });
}

/** V3 statuses after AVAILABLE that the filer records as they are (the Information System's word). */
const LATER_V3_STATUSES: readonly DdsV3Status[] = ['WITHDRAWN', 'ARCHIVED', 'GROUPED', 'SUSPENDED', 'UPDATED', 'OBSOLETE'];
