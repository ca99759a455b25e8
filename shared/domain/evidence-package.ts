import { MemoryBlockstore } from 'blockstore-core/memory';
import canonicalize from 'canonicalize';
import { importer, type ImporterOptions } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced } from 'ipfs-unixfs-importer/layout';
import type { CID } from 'multiformats/cid';
import { DomainError } from './errors';

/** Name of the canonical evidence JSON inside every evidence package. */
export const EVIDENCE_FILE = 'evidence.json';

/** One block of a UnixFS DAG: its CID (base32 string) and its exact bytes. */
export interface IpfsBlock {
  cid: string;
  bytes: Uint8Array;
}

/** A file placed in a package directory: `path` is its name in the directory. */
export interface PackageFile {
  path: string;
  bytes: Uint8Array;
}

/** The result of packaging: the root directory CID, the files it contains and every block. */
export interface EvidencePackage {
  /** CIDv1 (dag-pb, sha2-256, base32 `bafy…`) of the UnixFS directory. */
  cid: string;
  files: PackageFile[];
  /** All blocks of the DAG, root first, then by CID string; enough to serve or re-verify it. */
  blocks: IpfsBlock[];
}

/**
 * Importer options that reproduce `ipfs add --cid-version 1` (and `-r` for a directory) with
 * kubo's default import settings:
 * - CIDv1, sha2-256; `--cid-version 1` implies `--raw-leaves`, so file data lives in `raw`
 *   (0x55) blocks and a file of at most one chunk IS its raw leaf (`bafkrei…`);
 * - chunker `size-262144` (fixed 256 KiB chunks);
 * - balanced layout, at most 174 links per file node (go-unixfs `DefaultLinksPerBlock`);
 * - dag-pb nodes encoded links-first, links sorted by name; no mode/mtime (kubo does not keep
 *   them unless `--preserve-mode/--preserve-mtime`);
 * - basic (flat) directories, switching to a HAMT only above 256 KiB of estimated link bytes
 *   (`Import.UnixFSHAMTDirectorySizeThreshold`), which a two-file package never reaches.
 * This is the importer's `unixfs-v0-2015` profile (kubo's default, IPIP-499) with the CID
 * version and leaf type that `--cid-version 1` selects. `wrapWithDirectory` makes the last entry
 * the directory holding the files; its CID equals what `ipfs add -r <dir>` prints for `<dir>`
 * (a directory's own name is not part of its node).
 */
export function kuboCidV1ImportOptions(): ImporterOptions {
  // A fresh object every call: the importer writes profile defaults into the options it gets.
  return {
    profile: 'unixfs-v0-2015',
    cidVersion: 1,
    rawLeaves: true,
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: 262_144 }),
    layout: balanced({ maxChildrenPerNode: 174 }),
    shardSplitThresholdBytes: 262_144,
    shardSplitStrategy: 'links-bytes',
    wrapWithDirectory: true,
  };
}

/**
 * Imports `files` as one flat UnixFS directory (names must be plain, non-empty and distinct) into
 * an in-memory blockstore, the way `ipfs add --cid-version 1 -r` would, and returns the
 * directory's CID and all blocks (root first). Deterministic: the same names and bytes always
 * give the same CID, whatever the order of `files`.
 * Errors: DomainError VALIDATION_ERROR for a bad or duplicate name.
 */
export async function buildUnixfsDirectory(files: PackageFile[]): Promise<{ cid: string; blocks: IpfsBlock[] }> {
  const names = new Set<string>();
  for (const f of files) {
    if (!f.path || f.path.includes('/') || f.path === '.' || f.path === '..' || names.has(f.path)) {
      throw new DomainError('VALIDATION_ERROR', `Invalid or duplicate file name in package: ${JSON.stringify(f.path)}`);
    }
    names.add(f.path);
  }
  // MemoryBlockstore keys blocks by multihash only (its getAll() reports every block as raw), so
  // remember the CIDs the importer writes to list the blocks with their real codecs.
  const memory = new MemoryBlockstore();
  const written = new Map<string, CID>();
  const store: Pick<MemoryBlockstore, 'put'> = {
    put: (cid, bytes, options) => {
      written.set(cid.toString(), cid);
      return memory.put(cid, bytes, options);
    },
  };
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  let root: string | undefined;
  for await (const entry of importer(
    sorted.map((f) => ({ path: f.path, content: f.bytes })),
    store,
    kuboCidV1ImportOptions(),
  )) {
    root = entry.cid.toString();
  }
  if (!root) throw new Error('buildUnixfsDirectory: the importer produced no root');

  const blocks: IpfsBlock[] = [];
  for (const [key, cid] of written) {
    const chunks: Uint8Array[] = [];
    for await (const c of memory.get(cid)) chunks.push(c);
    blocks.push({ cid: key, bytes: chunks.length === 1 ? chunks[0]! : new Uint8Array(Buffer.concat(chunks)) });
  }
  blocks.sort((a, b) => (a.cid === root ? -1 : b.cid === root ? 1 : a.cid < b.cid ? -1 : a.cid > b.cid ? 1 : 0));
  return { cid: root, blocks };
}

/**
 * The canonical bytes of an evidence object: RFC 8785 (JCS) JSON, UTF-8, no trailing newline.
 * Errors: DomainError VALIDATION_ERROR when the value cannot be serialised (NaN, Infinity, a
 * top-level undefined).
 */
export function canonicalEvidenceBytes(evidence: Record<string, unknown>): Uint8Array {
  let text: string | undefined;
  try {
    text = canonicalize(evidence);
  } catch (err) {
    throw new DomainError('VALIDATION_ERROR', `The evidence cannot be serialised as canonical JSON: ${(err as Error).message}`, {
      details: [{ path: 'evidence', message: (err as Error).message }],
    });
  }
  if (text === undefined)
    throw new DomainError('VALIDATION_ERROR', 'The evidence cannot be serialised as canonical JSON.', {
      details: [{ path: 'evidence', message: 'not serialisable' }],
    });
  return new TextEncoder().encode(text);
}

/**
 * Builds the evidence package of one custody event: a UnixFS directory holding
 * `evidence.json` (the evidence object as RFC 8785 canonical JSON, UTF-8, no trailing newline)
 * and, when a photo is given, `photo.<extension>` (its bytes unchanged; see
 * `parseEvidencePhoto`). The returned `cid` is the directory's CIDv1 (`bafy…`) exactly as
 * `ipfs add --cid-version 1 -r` gives it for a folder with those files, so anyone holding the
 * files can recompute it; `blocks` is the whole DAG (exported as a CAR, shared/domain/evidence-car.ts). Same input, same CID: key
 * order in `evidence` does not matter.
 * Errors: DomainError VALIDATION_ERROR when the evidence is not serialisable.
 */
export async function buildEvidencePackage(input: {
  evidence: Record<string, unknown>;
  photo?: { bytes: Uint8Array; extension: string };
}): Promise<EvidencePackage> {
  const files: PackageFile[] = [{ path: EVIDENCE_FILE, bytes: canonicalEvidenceBytes(input.evidence) }];
  if (input.photo) {
    if (!/^[a-z0-9]{1,8}$/.test(input.photo.extension))
      throw new DomainError('VALIDATION_ERROR', `Invalid photo extension ${JSON.stringify(input.photo.extension)}.`);
    files.push({ path: `photo.${input.photo.extension}`, bytes: input.photo.bytes });
  }
  const { cid, blocks } = await buildUnixfsDirectory(files);
  return { cid, files, blocks };
}

const PHOTO_FILE = /^photo\.[a-z0-9]{1,8}$/;

/**
 * Whether a directory with these file names is a public evidence package of a custody stage
 * (what {@link buildEvidencePackage} makes: `evidence.json` and at most one `photo.<ext>`). Only
 * such packages are public (GET /ipfs); anything else the service keeps — a due diligence
 * statement (`dds.json`, `dds.xml`: full names and exact plots) above all — is not.
 */
export function isPublicEvidencePackage(names: readonly string[]): boolean {
  return (
    names.includes(EVIDENCE_FILE) &&
    names.every((n) => n === EVIDENCE_FILE || PHOTO_FILE.test(n)) &&
    names.filter((n) => PHOTO_FILE.test(n)).length <= 1
  );
}
