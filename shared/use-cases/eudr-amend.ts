import type { Caller } from '../domain/caller';
import type { DdsRecord, StoredDdsRecord } from '../domain/dds';
import { DomainError } from '../domain/errors';
import type { DdsRegistry, DdsStore } from '../domain/ports/eudr';
import { logger } from '../runtime/logger';
import { keepDdsDocuments, withDdsDocuments } from './dds-documents';
import { buildBatchStatement, type DdsDeps, ddsRecordOf, readDds } from './eudr';
import { buildPurchaseOrderStatement } from './eudr-shipment';

/** How long after submission the Information System allows amending or withdrawing a statement (V3: 72 hours). */
const DDS_AMENDMENT_WINDOW_MS = 72 * 3600_000;

/** The ports of amending and withdrawing: generation's, plus the EU Information System. */
export type DdsAmendDeps = Omit<DdsDeps, 'dds'> & {
  dds: Pick<DdsStore, 'get' | 'markAmended' | 'markWithdrawn'>;
  ddsRegistry: Pick<DdsRegistry, 'amend' | 'withdraw'>;
};

/**
 * The statement, if it may be changed now: the caller's (DDS_NOT_FOUND, INSUFFICIENT_PERMISSIONS),
 * AVAILABLE (422 DDS_NOT_AVAILABLE), within 72 hours of its submission (422 DDS_AMENDMENT_WINDOW_CLOSED).
 */
async function changeable(deps: DdsAmendDeps, caller: Caller, id: string, what: string): Promise<StoredDdsRecord> {
  const d = await readDds(deps.dds, caller, id);
  if (d.status !== 'AVAILABLE' || !d.registry_uuid) {
    throw new DomainError('DDS_NOT_AVAILABLE', `Due diligence statement ${id} is ${d.status}; only an AVAILABLE statement can be ${what}.`);
  }
  const submitted = Date.parse(d.filed_at ?? d.created_at);
  if (deps.now().getTime() - submitted > DDS_AMENDMENT_WINDOW_MS) {
    throw new DomainError(
      'DDS_AMENDMENT_WINDOW_CLOSED',
      `Due diligence statement ${id} was submitted at ${new Date(submitted).toISOString()}, more than 72 hours ago: the EU Information System no longer allows it to be ${what}.`,
    );
  }
  return d;
}

/**
 * POST /eudr/dds/{id}/amend (docs/api/eudr.md#amend-and-withdraw): rebuilds the statement from the
 * current records (the purchase order's batches and farmers, or the batch and its farmer: the same
 * checks as generation), sends it with V3 `amendDds`, and records it SUBMITTED again with its new
 * documents (kept in the document store first, under new keys: the amended-away ones stay) and CID
 * (the reference number stays); the filer is queued to poll until it is AVAILABLE again.
 * Errors: DDS_NOT_FOUND, INSUFFICIENT_PERMISSIONS, DDS_NOT_AVAILABLE, DDS_AMENDMENT_WINDOW_CLOSED,
 * DDS_LOCKED (the registry's refusal), generation's errors for the rebuilt statement, 409
 * DUPLICATE_REQUEST when the statement changed meanwhile.
 */
export async function amendDds(deps: DdsAmendDeps, caller: Caller, id: string): Promise<DdsRecord> {
  const d = await changeable(deps, caller, id, 'amended');
  const statement =
    d.purchase_order_id !== undefined && d.batch_id === null
      ? (await buildPurchaseOrderStatement(deps, caller, { purchase_order_id: d.purchase_order_id }, d.dds_id, d.created_at)).statement
      : (await buildBatchStatement(deps, caller, { batch_id: d.batch_id! }, d.dds_id, d.created_at)).statement;
  const rebuilt = await ddsRecordOf(deps, statement, d.cooperative_id);
  const stored = await keepDdsDocuments(deps.documentStore, rebuilt);
  await deps.ddsRegistry.amend(d.registry_uuid!, rebuilt.record.xml);
  const at = deps.now().toISOString();
  const { status: _status, cooperative_id: _coop, ...changes } = stored;
  if (!(await deps.dds.markAmended(id, changes, at))) {
    throw new DomainError('DUPLICATE_REQUEST', `Due diligence statement ${id} changed while it was being amended; read it again.`);
  }
  try {
    await deps.filingQueue.send({ dds_id: id });
  } catch (err) {
    logger.error('DDS status poll could not be queued after an amendment', { dds_id: id, error: err as Error });
  }
  return withDdsDocuments(deps.documentStore, (await deps.dds.get(id))!);
}

/**
 * POST /eudr/dds/{id}/withdraw (docs/api/eudr.md#amend-and-withdraw): V3 `withdrawDds`, then the
 * statement is WITHDRAWN (reference number kept on the record), and the filer is queued to record
 * the withdrawal on every batch it covers (docs/api/eudr.md#a-withdrawal-reaches-the-batches; a
 * failure to queue is logged with the statement's id, and the answer is still the WITHDRAWN statement). Errors as
 * {@link amendDds}, without the rebuilding ones.
 */
export async function withdrawDds(deps: DdsAmendDeps, caller: Caller, id: string): Promise<DdsRecord> {
  const d = await changeable(deps, caller, id, 'withdrawn');
  await deps.ddsRegistry.withdraw(d.registry_uuid!);
  if (!(await deps.dds.markWithdrawn(id, deps.now().toISOString()))) {
    throw new DomainError('DUPLICATE_REQUEST', `Due diligence statement ${id} changed while it was being withdrawn; read it again.`);
  }
  try {
    await deps.filingQueue.send({ dds_id: id });
  } catch (err) {
    logger.error('DDS withdrawal could not be queued for its batches', { dds_id: id, error: err as Error });
  }
  return withDdsDocuments(deps.documentStore, (await deps.dds.get(id))!);
}
