/**
 * Port for keeping evidence packages available on IPFS (decisions §8: evidence CIDs are real
 * CIDv1 UnixFS CIDs that anyone can recompute from the pinned bytes).
 * Implementations: `LocalPinStore` (blocks on disk under LOCAL_DATA_DIR, served by the local
 * gateway at `/ipfs/{cid}`) and `PinningServiceStore` (a remote IPFS Pinning Service API).
 */

/** A package to pin: the root CID, every block of its DAG, a human name and optional metadata. */
export interface PinRequest {
  /** Root CID (CIDv1 base32 string), e.g. an evidence package directory. */
  cid: string;
  /** All blocks of the DAG under `cid` (CID string + exact bytes). */
  blocks: Array<{ cid: string; bytes: Uint8Array }>;
  /** Pin name (the Pinning Service API allows up to 255 characters). */
  name: string;
  /** String-to-string metadata stored with the pin (e.g. batch_id, stage). */
  meta?: Record<string, string>;
}

/** One entry of a UnixFS directory: `size` is the file's size in bytes (0 for a subdirectory). */
export interface PinStoreEntry {
  name: string;
  cid: string;
  size: number;
}

export interface PinStore {
  /**
   * Pins the DAG rooted at `pkg.cid`. Resolves once the pin is in place (locally: the blocks are
   * stored; remotely: the service reports `pinned`). Rejects on invalid input or a pinning failure.
   */
  pin(pkg: PinRequest): Promise<void>;
  /**
   * The bytes of the file at `cid` or at `cid/path` (path inside a directory, e.g.
   * `evidence.json`), with a content type derived from the file name. `null` when the content is
   * unknown to this store, the path does not exist, or it names a directory (use `ls`).
   */
  cat(cid: string, path?: string): Promise<{ bytes: Uint8Array; contentType: string } | null>;
  /** The entries of the directory `cid`, sorted by name; `null` when unknown or not a directory. */
  ls(cid: string): Promise<PinStoreEntry[] | null>;
}
