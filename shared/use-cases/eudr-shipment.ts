import { createHash } from 'node:crypto';
import { assertActsFor } from '../domain/access';
import type { Caller } from '../domain/caller';
import type { DdsRecord } from '../domain/dds';
import { buildShipmentStatement, DDS_LIMITS } from '../domain/dds-shipment';
import { DomainError } from '../domain/errors';
import { mapLimited } from '../domain/purchase-order-limits';
import type { Batch, Farmer } from '../domain/records';
import { type DdsDeps, ddsRecordOf, keepAndQueueStatement } from './eudr';

/** Reads at most this many records at once (batches, farmers) while building a statement. */
const READ_CONCURRENCY = 25;

/** The statement id of a purchase order: `DDS-<purchase_order_id>` (e.g. `DDS-PO-01J…`). */
function purchaseOrderDdsId(poId: string): string {
  return `DDS-${poId}`;
}

/** The internal reference number (at most 50 characters): the statement id, or `DDS-PO-` and a digest of a long order id. */
function internalReference(ddsId: string): string {
  return ddsId.length <= 50 ? ddsId : `DDS-PO-${createHash('sha256').update(ddsId).digest('hex').slice(0, 40)}`;
}

/**
 * Builds a shipment's statement from the current records: the purchase order, its batches and their
 * farmers, read through the stores (pure building in `buildShipmentStatement`). Steps: 1. the order
 * exists (PO_NOT_FOUND) and is the caller's (INSUFFICIENT_PERMISSIONS) 2. CONFIRMED (PO_NOT_CONFIRMED)
 * 3. it names the EU importer, `buyer_operator` (BATCH_NOT_ELIGIBLE) 4. every batch read (BATCH_NOT_FOUND)
 * 5. every farmer read; the statement built (its errors). Used by generation and by amendment.
 */
export async function buildPurchaseOrderStatement(
  deps: Pick<DdsDeps, 'batches' | 'registry' | 'custody'>,
  caller: Caller,
  input: { purchase_order_id: string; description?: string },
  ddsId: string,
  createdAt: string,
  limits = DDS_LIMITS,
) {
  const po = await deps.custody.getPurchaseOrder(input.purchase_order_id);
  if (!po) throw new DomainError('PO_NOT_FOUND', `Purchase order ${input.purchase_order_id} is not recognised.`);
  assertActsFor(caller, po.cooperative_id);
  if (po.status !== 'CONFIRMED') {
    throw new DomainError(
      'PO_NOT_CONFIRMED',
      `Purchase order ${po.purchase_order_id} is ${po.status}; a statement per shipment needs a CONFIRMED order.`,
    );
  }
  if (!po.buyer_operator) {
    throw new DomainError(
      'BATCH_NOT_ELIGIBLE',
      `Purchase order ${po.purchase_order_id} does not name the EU importer (buyer_operator); the statement is the importer's.`,
    );
  }
  const batches = await mapLimited(po.batch_ids, READ_CONCURRENCY, async (id): Promise<Batch> => {
    const b = await deps.batches.get(id);
    if (!b) throw new DomainError('BATCH_NOT_FOUND', `Batch ${id} of purchase order ${po.purchase_order_id} is not recognised.`);
    return b;
  });
  const farmerIds = [...new Set(batches.map((b) => b.farmer_id))];
  const farmers = new Map<string, Farmer>();
  if (farmerIds.length <= limits.maxProducers) {
    await mapLimited(farmerIds, READ_CONCURRENCY, async (id) => {
      const f = await deps.registry.getFarmer(id);
      if (f) farmers.set(id, f);
    });
  }
  const statement = buildShipmentStatement({
    ddsId,
    internalReferenceNumber: internalReference(ddsId),
    purchaseOrderId: po.purchase_order_id,
    batches,
    farmers,
    operator: po.buyer_operator,
    ...(input.description ? { description: input.description } : {}),
    createdAt,
    limits,
  });
  return { po, statement };
}

/**
 * POST /eudr/generate-dds `{purchase_order_id}` (docs/api/eudr.md#statement-per-purchase-order): one
 * statement for a confirmed purchase order — one producer per farmer with all their plots, net mass
 * the summed MILLED `outturn_kg`, HS 0901, description from the grades, the order's importer. Built
 * as JSON and SubmitDdsRequest XML, kept privately like a batch's statement, stored once per order
 * (a repeat returns the first) and queued for filing.
 * Errors: as {@link buildPurchaseOrderStatement}; BATCH_NOT_ELIGIBLE (a batch not MILLED), DDS_TOO_LARGE,
 * GFW_CHECK_FAILED (naming the farmers), VALIDATION_ERROR / GEOMETRY_RULE_VIOLATED (a stored plot),
 * DUPLICATE_PLOT (naming both farmers).
 */
export async function generatePurchaseOrderDds(
  deps: DdsDeps,
  caller: Caller,
  input: { purchase_order_id: string; description?: string },
  limits = DDS_LIMITS,
): Promise<{ dds: DdsRecord; created: boolean }> {
  const ddsId = purchaseOrderDdsId(input.purchase_order_id);
  const { po, statement } = await buildPurchaseOrderStatement(deps, caller, input, ddsId, deps.now().toISOString(), limits);
  return keepAndQueueStatement(deps, await ddsRecordOf(deps, statement, po.cooperative_id));
}
