import { LocalPinStore } from '../adapters/ipfs/local-pin-store';
import { PinningServiceStore } from '../adapters/ipfs/pinning-service-store';
import { envOr, requireEnv, secret } from '../config';
import type { PinStore } from '../domain/ports';
import type { CustodyDeps } from '../use-cases/custody';
import type { PurchaseOrderDeps } from '../use-cases/purchase-orders';
import { ledgerWriteQueue } from './queues';
import { batchRepo, custodyRepo, now } from './repos';

/**
 * The custody trail's adapters. Evidence is pinned to the local pinning store under
 * IPFS_PIN_DIR when it is set (the local stack), otherwise through the IPFS Pinning Service API
 * at PINNING_SERVICE_URL with the token in PINNING_SERVICE_TOKEN or its Secrets Manager secret.
 */
let pins: PinStore | undefined;

export function pinStore(): PinStore {
  if (pins) return pins;
  const dir = process.env.IPFS_PIN_DIR;
  if (dir) return (pins = new LocalPinStore(dir));
  let real: Promise<PinStore> | undefined;
  const load = () => (real ??= secret('PINNING_SERVICE_TOKEN', 'PINNING_SERVICE_TOKEN_SECRET_ARN').then((token) =>
    new PinningServiceStore({ endpoint: requireEnv('PINNING_SERVICE_URL'), accessToken: token.trim(), origins: envOr('PINNING_ORIGINS', '').split(',').filter(Boolean) })));
  pins = {
    pin: async (p) => (await load()).pin(p),
    cat: async (cid, path) => (await load()).cat(cid, path),
    ls: async (cid) => (await load()).ls(cid),
  };
  return pins;
}

/** Ports of stage changes and purchase orders. */
export function custodyDeps(): CustodyDeps {
  return { batches: batchRepo(), custody: custodyRepo(), pins: pinStore(), ledgerQueue: ledgerWriteQueue(), now };
}

/** Ports of purchase-order confirmation (it commits WAREHOUSED → COMMITTED stage changes). */
export function purchaseOrderDeps(): PurchaseOrderDeps {
  return { ...custodyDeps(), custody: custodyRepo() };
}
