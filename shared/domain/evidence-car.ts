import { CID } from 'multiformats/cid';
import type { IpfsBlock } from './evidence-package';

/**
 * A pinning service answered another root CID than ours for the CAR it imported: the pin is not
 * what the trail names, so it fails loudly (never retried: the same CAR gives the same answer).
 */
export class PinRootMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly reported: string,
    service: string,
  ) {
    super(`${service} answered root CID ${reported} for the CAR of ${expected}: the pinned DAG is not the evidence the trail names.`);
    this.name = 'PinRootMismatchError';
  }
}

const CONTENT_TYPES: Record<string, string> = {
  json: 'application/json',
  xml: 'application/xml',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  txt: 'text/plain; charset=utf-8',
};

/** Content type for a file name in an evidence or DDS directory, from its extension; `application/octet-stream` otherwise. */
export function contentTypeFor(name: string | undefined): string {
  const ext = name && /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return (ext && CONTENT_TYPES[ext]) || 'application/octet-stream';
}

/** A CAR that is not a complete, honest archive of one root (bad bytes, missing blocks, wrong root). */
export class InvalidCarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCarError';
  }
}

/** Unsigned LEB128, the varint of CARv1 section lengths. */
function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

/** ASCII bytes of a short CBOR text string with its header (major type 3, length < 24). */
function cborText(text: string): number[] {
  return [0x60 | text.length, ...Buffer.from(text, 'ascii')];
}

/**
 * Exports a DAG as a CARv1 file (https://ipld.io/specs/transport/car/carv1/): the header names
 * `root` as the only root, then every block of `blocks` in their order (evidence packages list the
 * root first), each as `varint(len(cid) + len(bytes)) cid bytes`. Same blocks, same bytes — byte
 * for byte what `@ipld/car`'s CarWriter writes (test/unit/evidence-pinning.test.ts proves it).
 * The header, the DAG-CBOR map `{roots: [root], version: 1}` (keys in DAG-CBOR order, the CID as
 * tag 42 over 0x00 + its bytes), is written here rather than by CarWriter, whose CBOR encoder
 * (cborg, about 25 KB) would push the stage-change paths over their bundle budgets; reading CARs
 * back ({@link readVerifiedCar}) uses `@ipld/car`. `root` must be among `blocks` (an evidence
 * package's `cid` always is). Errors: InvalidCarError when it is not.
 */
export async function exportCar(root: string, blocks: readonly IpfsBlock[]): Promise<Uint8Array> {
  if (!blocks.some((b) => b.cid === root))
    throw new InvalidCarError(`exportCar: the root ${root} is not among the ${blocks.length} blocks.`);
  const cidBytes = CID.parse(root).bytes;
  const tagged = cidBytes.length + 1; // the 0x00 multibase-identity prefix DAG-CBOR puts before CID bytes
  const byteString = tagged < 24 ? [0x40 | tagged] : tagged < 256 ? [0x58, tagged] : [0x59, tagged >> 8, tagged & 0xff];
  const header = [0xa2, ...cborText('roots'), 0x81, 0xd8, 0x2a, ...byteString, 0x00, ...cidBytes, ...cborText('version'), 0x01];
  const parts: Uint8Array[] = [new Uint8Array([...varint(header.length), ...header])];
  for (const b of blocks) {
    const cid = CID.parse(b.cid).bytes;
    parts.push(new Uint8Array(varint(cid.length + b.bytes.length)), cid, b.bytes);
  }
  return new Uint8Array(Buffer.concat(parts));
}
