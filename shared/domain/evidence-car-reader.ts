import { CarReader } from '@ipld/car/reader';
import { exporter } from 'ipfs-unixfs-exporter';
import { CID } from 'multiformats/cid';
import { identity } from 'multiformats/hashes/identity';
import { sha256 } from 'multiformats/hashes/sha2';
import { InvalidCarError } from './evidence-car';

/*
 * Reading CARs back, checked (@ipld/car CarReader, ipfs-unixfs-exporter): the pinning sandbox,
 * GET /ipfs/{cid}, audits. Apart from ./evidence-car.ts (writing), so write paths do not bundle it.
 */

/** A CAR read back and checked by {@link readVerifiedCar}. */
export interface VerifiedCar {
  /** The single root, as a CIDv1 string (base32). */
  root: string;
  /** Every block by CID string (each re-hashed to its CID). */
  blocks: Map<string, Uint8Array>;
  /** A read-only blockstore over `blocks` for ipfs-unixfs-exporter. */
  blockstore: { get(cid: CID): AsyncGenerator<Uint8Array> };
}

/**
 * Parses a CARv1 and checks it is an honest archive of one DAG: exactly one root; every block's
 * bytes hash to its CID (sha2-256, or the identity hash); the root block present; and the whole
 * UnixFS DAG under the root present (every directory entry and file chunk). What this accepts,
 * re-imported, gives back the root CID. Errors: InvalidCarError naming what is wrong.
 */
export async function readVerifiedCar(bytes: Uint8Array): Promise<VerifiedCar> {
  let reader: CarReader;
  try {
    reader = await CarReader.fromBytes(bytes);
  } catch (err) {
    throw new InvalidCarError(`Not a CAR file: ${(err as Error).message}`);
  }
  const roots = await reader.getRoots();
  if (roots.length !== 1) throw new InvalidCarError(`A CAR of one evidence DAG has exactly one root; this one has ${roots.length}.`);
  const root = roots[0]!.toV1().toString();
  const blocks = new Map<string, Uint8Array>();
  for await (const block of reader.blocks()) {
    const cid = block.cid.toV1();
    const { code, digest } = cid.multihash;
    const actual =
      code === sha256.code
        ? (await sha256.digest(block.bytes)).digest
        : code === identity.code
          ? identity.digest(block.bytes).digest
          : undefined;
    if (!actual) throw new InvalidCarError(`Block ${cid.toString()} uses an unsupported hash (multihash code 0x${code.toString(16)}).`);
    if (Buffer.compare(Buffer.from(actual), Buffer.from(digest)) !== 0)
      throw new InvalidCarError(`Block ${cid.toString()}: its bytes do not hash to its CID.`);
    blocks.set(cid.toString(), block.bytes);
  }
  if (!blocks.has(root)) throw new InvalidCarError(`The root block ${root} is not in the CAR.`);
  const blockstore = {
    async *get(cid: CID) {
      const b = blocks.get(cid.toV1().toString());
      if (!b) throw Object.assign(new Error(`block ${cid.toString()} is not in the CAR`), { name: 'NotFoundError' });
      yield b;
    },
  };
  try {
    await walk(CID.parse(root), blockstore);
  } catch (err) {
    throw new InvalidCarError(`The DAG under ${root} is incomplete or not UnixFS: ${(err as Error).message}`);
  }
  return { root, blocks, blockstore };
}

/** Reads every block under `cid` (directory entries, file chunks); throws when one is missing. */
async function walk(cid: CID, blockstore: VerifiedCar['blockstore']): Promise<void> {
  const entry = await exporter(cid, blockstore, { offline: true });
  if (entry.type === 'directory') {
    for await (const link of entry.entries()) await walk(link.cid, blockstore);
  } else if (entry.type === 'file' || entry.type === 'raw' || entry.type === 'identity') {
    for await (const chunk of entry.content()) void chunk;
  }
}

/**
 * The files of the flat UnixFS directory a CAR holds (an evidence package or a DDS), each with its
 * exact bytes, after {@link readVerifiedCar}'s checks. Errors: InvalidCarError when the CAR is not
 * valid or its root is not a directory of files.
 */
export async function filesOfCar(bytes: Uint8Array): Promise<{ root: string; files: Array<{ path: string; bytes: Uint8Array }> }> {
  const car = await readVerifiedCar(bytes);
  const dir = await exporter(CID.parse(car.root), car.blockstore, { offline: true });
  if (dir.type !== 'directory') throw new InvalidCarError(`The root ${car.root} is a ${dir.type}, not a directory.`);
  const files: Array<{ path: string; bytes: Uint8Array }> = [];
  for await (const link of dir.entries()) {
    const entry = await exporter(link.cid, car.blockstore, { offline: true });
    if (entry.type !== 'file' && entry.type !== 'raw' && entry.type !== 'identity')
      throw new InvalidCarError(`${car.root}/${link.name} is a ${entry.type}; evidence directories hold files only.`);
    const chunks: Uint8Array[] = [];
    for await (const c of entry.content()) chunks.push(c);
    files.push({ path: link.name, bytes: new Uint8Array(Buffer.concat(chunks)) });
  }
  return { root: car.root, files };
}
