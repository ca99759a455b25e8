/**
 * Port for keeping evidence packages available on IPFS (decisions §8: evidence CIDs are real
 * CIDv1 UnixFS CIDs that anyone can recompute from the pinned bytes).
 * Implementations: `LocalPinStore` (blocks on disk under LOCAL_DATA_DIR, served by the local
 * gateway at `/ipfs/{cid}`) and `PinningServiceStore` (a remote IPFS Pinning Service API).
 */

export type { PinRequest, PinStore, PinStoreEntry } from '../../domain/ports';
