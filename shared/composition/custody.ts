import { PinningServiceStore } from '../adapters/ipfs/pinning-service-store';
import { envOr, requireEnv, secret } from '../config';
import type { PinStore } from '../domain/ports';
import type { CustodyDeps } from '../use-cases/custody';
import type { PurchaseOrderDeps } from '../use-cases/purchase-orders';
import { ledgerWriteQueue } from './queues';
import { batchRepo, custodyRepo, now } from './repos';

/**
 * The custody trail's adapters. Evidence is pinned through the IPFS Pinning Service API at
 * PINNING_SERVICE_URL with the token in PINNING_SERVICE_TOKEN or its Secrets Manager secret, unless
 * the process put another pin store in place with `usePinStore` (the local stack: a pin store on
 * disk under IPFS_PIN_DIR). The on-disk store is wired by infra/local, so no Lambda bundle carries it.
 */
let pins: PinStore | undefined;
let injected: PinStore | undefined;

/** Puts `store` in place of the Pinning Service API for this process (the local stack's pin store on disk). */
export function usePinStore(store: PinStore): void {
  pins = injected = store;
}

/** The pin store put in place with `usePinStore`, if any (evidence is then read from it, not a gateway). */
export function injectedPinStore(): PinStore | undefined {
  return injected;
}

/** Where evidence is pinned: the injected store, else the Pinning Service API (its secret read on first use). */
export function pinStore(): PinStore {
  if (pins) return pins;
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
