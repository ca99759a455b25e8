import type { CustodyDeps } from '../use-cases/custody';
import type { PurchaseOrderDeps } from '../use-cases/purchase-orders';
import { evidenceKeeping } from './evidence';
import { ledgerWriteQueue } from './queues';
import { batchRepo, custodyRepo, now } from './repos';

/**
 * The custody trail's adapters. Evidence is kept as docs/api/evidence.md#evidence-on-ipfs says: its CAR in the service's
 * own evidence bucket before the commit, then a pin job for the background pinner
 * (functions/evidence-pinner), so no stage change waits for IPFS.
 */

/** Ports of stage changes and purchase orders. */
export function custodyDeps(): CustodyDeps {
  return { batches: batchRepo(), custody: custodyRepo(), evidence: evidenceKeeping(), ledgerQueue: ledgerWriteQueue(), now };
}

/** Ports of purchase-order confirmation (it commits WAREHOUSED → COMMITTED stage changes). */
export function purchaseOrderDeps(): PurchaseOrderDeps {
  return { ...custodyDeps(), custody: custodyRepo() };
}
