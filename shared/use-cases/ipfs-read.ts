import { exporter } from 'ipfs-unixfs-exporter';
import { CID } from 'multiformats/cid';
import { DomainError } from '../domain/errors';
import { contentTypeFor, InvalidCarError } from '../domain/evidence-car';
import { readVerifiedCar } from '../domain/evidence-car-reader';
import { isPublicEvidencePackage } from '../domain/evidence-package';
import type { EvidenceArchive, PinStoreEntry } from '../domain/ports/evidence';

/** What `/ipfs/{cid}[/path]` answers: a directory listing or a file's bytes. */
export type IpfsPathContent =
  | { kind: 'directory'; cid: string; entries: PinStoreEntry[] }
  | { kind: 'file'; cid: string; path: string; bytes: Uint8Array; contentType: string };

/**
 * GET /ipfs/{cid}[/{path}] (docs/api/evidence.md#evidence-on-ipfs): a public evidence package from the service's own
 * copy, whatever its pin status. The CAR of `cid` is read and verified (every block hashes to its
 * CID); its root must be a stage's evidence package (`isPublicEvidencePackage`: `evidence.json`
 * and at most a photo) — anything else the copy holds, such as a due diligence statement archived
 * before statements became private, is null exactly like an unknown CID, so the answer tells
 * nothing about it. Then walked: no path → the listing `{name, cid, size}` sorted by name (size:
 * file bytes); a file → its bytes with the content type of its name. Null when the own copy has no
 * such CID or path. Only root CIDs of archived packages are known (not their inner blocks).
 * Errors: DomainError VALIDATION_ERROR for a malformed CID or a `.`/`..` segment.
 */
export async function readIpfsPath(archive: Pick<EvidenceArchive, 'getCar'>, cidText: string, path = ''): Promise<IpfsPathContent | null> {
  let cid: CID;
  try {
    cid = CID.parse(cidText);
  } catch {
    throw new DomainError('VALIDATION_ERROR', `Not a valid CID: ${JSON.stringify(cidText)}.`, {
      details: [{ path: 'path.id', message: 'not a valid CID' }],
    });
  }
  const segments = path.split('/').filter((s) => s.length > 0);
  if (segments.some((s) => s === '.' || s === '..'))
    throw new DomainError('VALIDATION_ERROR', 'Path segments "." and ".." are not allowed.', {
      details: [{ path: 'path.name', message: 'no . or .. segments' }],
    });
  const root = cid.toV1().toString();
  const bytes = await archive.getCar(root);
  if (!bytes) return null;
  let car;
  try {
    car = await readVerifiedCar(bytes);
  } catch (err) {
    if (err instanceof InvalidCarError) throw new Error(`The own copy of ${root} is not a valid CAR: ${err.message}`);
    throw err;
  }
  const rootEntry = await exporter(CID.parse(root), car.blockstore, { offline: true }).catch(() => null);
  if (rootEntry?.type !== 'directory') return null;
  const names: string[] = [];
  for await (const link of rootEntry.entries()) names.push(link.name);
  if (!isPublicEvidencePackage(names)) return null;
  let entry;
  try {
    entry = await exporter(segments.length ? `${root}/${segments.join('/')}` : CID.parse(root), car.blockstore, { offline: true });
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'NotFoundError' || name === 'BadPathError' || name === 'NoResolverError' || name === 'NotUnixFSError') return null;
    throw err;
  }
  if (entry.type === 'directory') {
    if (segments.length) return null;
    const entries: PinStoreEntry[] = [];
    for await (const link of entry.entries()) {
      const child = await exporter(link.cid, car.blockstore, { offline: true });
      entries.push({
        name: link.name,
        cid: link.cid.toString(),
        size: child.type === 'directory' || child.type === 'object' ? 0 : Number(child.size),
      });
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { kind: 'directory', cid: root, entries };
  }
  if (entry.type !== 'file' && entry.type !== 'raw' && entry.type !== 'identity') return null;
  const chunks: Uint8Array[] = [];
  for await (const c of entry.content()) chunks.push(c);
  return {
    kind: 'file',
    cid: root,
    path: segments.join('/'),
    bytes: new Uint8Array(Buffer.concat(chunks)),
    contentType: contentTypeFor(segments.at(-1)),
  };
}
