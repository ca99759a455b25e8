import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FsBlockstore } from 'blockstore-fs';
import { exporter } from 'ipfs-unixfs-exporter';
import { CID } from 'multiformats/cid';
import { DomainError } from '../../domain/errors';
import { contentTypeFor } from '../../domain/evidence-car';
import type { PinRequest, PinStore, PinStoreEntry } from '../../domain/ports';

const RAW_CODE = 0x55;
const DAG_PB_CODE = 0x70;
const SHA2_256_CODE = 0x12;

/** Content type for a file name, from its extension (one rule: shared/domain/evidence-car.ts). */
export { contentTypeFor };

function parseCid(cid: string): CID {
  try {
    return CID.parse(cid);
  } catch {
    throw new DomainError('VALIDATION_ERROR', `Not a valid CID: ${JSON.stringify(cid)}`, { details: [{ path: 'cid', message: 'not a valid CID' }] });
  }
}

/** Errors the exporter or the blockstore raise for content this store does not hold. */
function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string } | null)?.name;
  return name === 'NotFoundError' || name === 'BadPathError' || name === 'NoResolverError' || name === 'NotUnixFSError';
}

async function readAll(source: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const c of source) chunks.push(c);
  return chunks.length === 1 ? chunks[0]! : new Uint8Array(Buffer.concat(chunks));
}

/**
 * The local pinning store: blocks kept on disk with blockstore-fs under `<dir>/blocks` (one file
 * per block, named by multihash) and one JSON record per pin under `<dir>/pins/<cid>.json`
 * (`{cid, name, meta, pinned_at}`). The local stack passes `$LOCAL_DATA_DIR/ipfs`; the local
 * gateway serves the content at `GET /ipfs/{cid}[/path]` (see infra/local/ipfs-gateway-route.ts).
 *
 * `pin` checks every block against its CID (sha2-256, raw or dag-pb) and that the whole DAG under
 * the root is present before recording the pin, so whatever it serves re-hashes to the CID.
 * `cat` returns file bytes only (directories give `null`; `ls` lists them); `ls` sizes are file
 * sizes in bytes. Malformed CIDs throw DomainError VALIDATION_ERROR.
 */
export class LocalPinStore implements PinStore {
  private readonly blockstore: FsBlockstore;
  private opened?: Promise<void>;

  constructor(private readonly dir: string) {
    this.blockstore = new FsBlockstore(join(dir, 'blocks'));
  }

  private ready(): Promise<void> {
    this.opened ??= this.blockstore.open();
    return this.opened;
  }

  /**
   * Stores the blocks and records the pin. Errors: DomainError VALIDATION_ERROR when a block does
   * not match its CID, uses an unsupported codec/hash, or the DAG under `cid` is incomplete.
   */
  async pin(pkg: PinRequest): Promise<void> {
    await this.ready();
    const root = parseCid(pkg.cid);
    for (const block of pkg.blocks) {
      const cid = parseCid(block.cid);
      if (cid.code !== RAW_CODE && cid.code !== DAG_PB_CODE) throw new DomainError('VALIDATION_ERROR', `Block ${block.cid}: only raw and dag-pb blocks are accepted.`);
      if (cid.multihash.code !== SHA2_256_CODE) throw new DomainError('VALIDATION_ERROR', `Block ${block.cid}: only sha2-256 is accepted.`);
      const digest = createHash('sha256').update(block.bytes).digest();
      if (!Buffer.from(cid.multihash.digest).equals(digest)) throw new DomainError('VALIDATION_ERROR', `Block ${block.cid}: the bytes do not hash to the CID.`);
      await this.blockstore.put(cid, block.bytes);
    }
    try {
      await this.walk(root);
    } catch (err) {
      if (isNotFound(err)) throw new DomainError('VALIDATION_ERROR', `The DAG under ${pkg.cid} is incomplete: ${(err as Error).message}`);
      throw err;
    }
    const pinsDir = join(this.dir, 'pins');
    await mkdir(pinsDir, { recursive: true });
    const record = { cid: root.toString(), name: pkg.name, meta: pkg.meta ?? {}, pinned_at: new Date().toISOString() };
    await writeFile(join(pinsDir, `${root.toString()}.json`), `${JSON.stringify(record, null, 2)}\n`);
  }

  /** Reads every block under `cid` (directory entries and every file chunk); throws if one is missing. */
  private async walk(cid: CID): Promise<void> {
    const entry = await exporter(cid, this.blockstore, { offline: true });
    if (entry.type === 'directory') {
      for await (const link of entry.entries()) await this.walk(link.cid);
    } else if (entry.type === 'file' || entry.type === 'raw' || entry.type === 'identity') {
      for await (const chunk of entry.content()) void chunk;
    }
  }

  /** File bytes at `cid[/path]` with a content type from the file name; `null` if unknown or a directory. */
  async cat(cid: string, path?: string): Promise<{ bytes: Uint8Array; contentType: string } | null> {
    await this.ready();
    const root = parseCid(cid);
    const segments = (path ?? '').split('/').filter((s) => s.length > 0);
    try {
      const entry = await exporter(segments.length ? `${root.toString()}/${segments.join('/')}` : root, this.blockstore, { offline: true });
      if (entry.type !== 'file' && entry.type !== 'raw' && entry.type !== 'identity') return null;
      const bytes = await readAll(entry.content());
      return { bytes, contentType: contentTypeFor(segments.at(-1)) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /** Entries of the directory `cid` (name, CID, file size in bytes), sorted by name; `null` if unknown or not a directory. */
  async ls(cid: string): Promise<PinStoreEntry[] | null> {
    await this.ready();
    const root = parseCid(cid);
    try {
      const dir = await exporter(root, this.blockstore, { offline: true });
      if (dir.type !== 'directory') return null;
      const out: PinStoreEntry[] = [];
      for await (const link of dir.entries()) {
        const child = await exporter(link.cid, this.blockstore, { offline: true });
        const size = child.type === 'directory' || child.type === 'object' ? 0 : Number(child.size);
        out.push({ name: link.name, cid: link.cid.toString(), size });
      }
      return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }
}
