import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { importer } from 'ipfs-unixfs-importer';
import { MemoryBlockstore } from 'blockstore-core/memory';
import { CID } from 'multiformats/cid';
import * as Digest from 'multiformats/hashes/digest';
import { DomainError } from '../../shared/domain/errors';
import { MAX_EVIDENCE_PHOTO_BYTES, parseEvidencePhoto } from '../../shared/domain/evidence-photo';
import {
  buildEvidencePackage,
  buildUnixfsDirectory,
  canonicalEvidenceBytes,
  EVIDENCE_FILE,
  kuboCidV1ImportOptions,
} from '../../shared/domain/evidence-package';
import { onTheWire } from './support/errors';

// ---------------------------------------------------------------------------------------------
// Real tiny images, built byte by byte.

const u8 = (...parts: Array<ArrayLike<number>>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};
const ascii = (s: string) => Array.from(s, (c) => c.charCodeAt(0));
const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: ArrayLike<number>): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 255]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function pngChunk(type: string, data: ArrayLike<number>): Uint8Array {
  const td = u8(ascii(type), data);
  return u8(be32(data.length), td, be32(crc32(td)));
}
/** 1×1 RGB PNG (one coffee-brown pixel). */
const PNG = u8(
  [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  pngChunk('IHDR', [...be32(1), ...be32(1), 8, 2, 0, 0, 0]),
  pngChunk('IDAT', deflateSync(Buffer.from([0, 0x6f, 0x4e, 0x37]))),
  pngChunk('IEND', []),
);
/** 1×1 baseline greyscale JPEG: one DC/AC Huffman code each; the scan is DC diff 0 + EOB. */
const JPEG = u8(
  [0xff, 0xd8],
  [0xff, 0xe0, 0x00, 0x10],
  ascii('JFIF'),
  [0, 1, 1, 0, 0, 1, 0, 1, 0, 0],
  [0xff, 0xdb, 0x00, 0x43, 0x00],
  new Array(64).fill(1),
  [0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00],
  [0xff, 0xc4, 0x00, 0x14, 0x00, 1, ...new Array(15).fill(0), 0x00],
  [0xff, 0xc4, 0x00, 0x14, 0x10, 1, ...new Array(15).fill(0), 0x00],
  [0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00],
  [0x3f],
  [0xff, 0xd9],
);
/** 1×1 lossless WebP (RIFF/WEBP/VP8L). */
const VP8L = [0x2f, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07];
const WEBP = u8(ascii('RIFF'), [26, 0, 0, 0], ascii('WEBP'), ascii('VP8L'), [VP8L.length, 0, 0, 0], VP8L, [0]);

const dataUri = (mime: string, bytes: Uint8Array) => `data:${mime};base64,${Buffer.from(bytes).toString('base64')}`;

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected a rejection');
}

describe('parseEvidencePhoto', () => {
  it.each([
    ['image/png', PNG, 'png'],
    ['image/jpeg', JPEG, 'jpg'],
    ['image/webp', WEBP, 'webp'],
  ] as const)('accepts a real %s', async (mime, bytes, extension) => {
    const photo = await parseEvidencePhoto(dataUri(mime, bytes));
    expect(photo).toEqual({ bytes: new Uint8Array(bytes), mime, extension });
  });

  it('rejects a PNG declared as JPEG (400)', async () => {
    const err = await rejection(parseEvidencePhoto(dataUri('image/jpeg', PNG)));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(onTheWire(err).status).toBe(400);
    expect(err.details).toEqual([expect.objectContaining({ path: 'evidence_photo_base64' })]);
    expect(err.message).toMatch(/declared image\/jpeg but the content is image\/png/);
  });

  it('rejects a text file declared as PNG (400)', async () => {
    const err = await rejection(parseEvidencePhoto(dataUri('image/png', new TextEncoder().encode('just some text, not an image\n'))));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.details).toEqual([expect.objectContaining({ path: 'evidence_photo_base64' })]);
  });

  it('rejects another image type (GIF) even when declared as PNG', async () => {
    const gif = u8(ascii('GIF89a'), [1, 0, 1, 0, 0, 0, 0], [0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0], [0x3b]);
    expect((await rejection(parseEvidencePhoto(dataUri('image/png', gif)))).code).toBe('VALIDATION_ERROR');
  });

  it('rejects a photo over 4 MiB decoded (413) and accepts exactly 4 MiB', async () => {
    const big = new Uint8Array(MAX_EVIDENCE_PHOTO_BYTES + 1);
    big.set(PNG);
    const err = await rejection(parseEvidencePhoto(dataUri('image/png', big)));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect(onTheWire(err).status).toBe(413);

    const exact = new Uint8Array(MAX_EVIDENCE_PHOTO_BYTES);
    exact.set(PNG);
    const ok = await parseEvidencePhoto(dataUri('image/png', exact));
    expect(ok.bytes.byteLength).toBe(MAX_EVIDENCE_PHOTO_BYTES);
  });

  it.each([
    ['invalid characters', 'data:image/png;base64,iVBO@w0KGgo='],
    [
      'whitespace',
      `data:image/png;base64,${Buffer.from(PNG).toString('base64').slice(0, 8)} ${Buffer.from(PNG).toString('base64').slice(8)}`,
    ],
    ['a bad length', 'data:image/png;base64,iVBORw0KGgo'],
    ['non-canonical padding bits', 'data:image/png;base64,QR=='],
    ['misplaced padding', 'data:image/png;base64,iV=ORw0KGgo='],
    ['an empty payload', 'data:image/png;base64,'],
    ['base64url characters', `data:image/png;base64,${Buffer.from(PNG).toString('base64').replace(/\+/g, '-').replace(/\//g, '_')}-_==`],
  ])('rejects bad base64: %s (400)', async (_label, uri) => {
    const err = await rejection(parseEvidencePhoto(uri));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.details).toEqual([expect.objectContaining({ path: 'evidence_photo_base64' })]);
  });

  it.each([
    ['gif', `data:image/gif;base64,${Buffer.from(PNG).toString('base64')}`],
    ['no base64 marker', `data:image/png,${Buffer.from(PNG).toString('base64')}`],
    ['extra parameter', `data:image/png;charset=utf-8;base64,${Buffer.from(PNG).toString('base64')}`],
    ['not a data URI', Buffer.from(PNG).toString('base64')],
    ['upper-case type', `data:IMAGE/PNG;base64,${Buffer.from(PNG).toString('base64')}`],
  ])('rejects bad data-URI syntax: %s (400)', async (_label, uri) => {
    expect((await rejection(parseEvidencePhoto(uri))).code).toBe('VALIDATION_ERROR');
  });
});

// ---------------------------------------------------------------------------------------------
// CIDs: an independent construction straight from the specs (sha2-256 multihash, raw/dag-pb
// codecs, dag-pb protobuf, UnixFS Data protobuf), without the importer.

const sha256 = (b: Uint8Array) => new Uint8Array(createHash('sha256').update(b).digest());
const rawCid = (b: Uint8Array) => CID.createV1(0x55, Digest.create(0x12, sha256(b)));
const dagPbCid = (b: Uint8Array) => CID.createV1(0x70, Digest.create(0x12, sha256(b)));
function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}
const lenField = (no: number, b: ArrayLike<number>) => u8([(no << 3) | 2, ...varint(b.length)], b);
const intField = (no: number, n: number) => u8([no << 3, ...varint(n)]);
/** dag-pb PBLink {Hash=1, Name=2, Tsize=3}; kubo always writes Name, even empty. */
const pbLink = (hash: CID, name: string, tsize: number) =>
  u8(lenField(1, hash.bytes), lenField(2, new TextEncoder().encode(name)), intField(3, tsize));
/** dag-pb PBNode: Links (field 2) before Data (field 1), as the dag-pb spec fixes. */
const pbNode = (links: Uint8Array[], data: Uint8Array) => u8(...links.map((l) => lenField(2, l)), lenField(1, data));
/** UnixFS Data {Type=1 (1 Directory, 2 File), filesize=3, blocksizes=4 repeated}. */
const unixfsDir = () => intField(1, 1);
const unixfsFile = (sizes: number[]) =>
  u8(
    intField(1, 2),
    intField(
      3,
      sizes.reduce((a, b) => a + b, 0),
    ),
    ...sizes.map((s) => intField(4, s)),
  );

/** A file as kubo imports it with --cid-version 1: one raw leaf, or 256 KiB raw chunks under one dag-pb node. */
function independentFile(bytes: Uint8Array): { cid: CID; tsize: number } {
  if (bytes.length <= 262_144) return { cid: rawCid(bytes), tsize: bytes.length };
  const chunks: Uint8Array[] = [];
  for (let o = 0; o < bytes.length; o += 262_144) chunks.push(bytes.subarray(o, o + 262_144));
  expect(chunks.length).toBeLessThanOrEqual(174);
  const node = pbNode(
    chunks.map((c) => pbLink(rawCid(c), '', c.length)),
    unixfsFile(chunks.map((c) => c.length)),
  );
  return { cid: dagPbCid(node), tsize: node.length + bytes.length };
}
function independentDirectory(files: Array<{ path: string; bytes: Uint8Array }>): CID {
  const sorted = [...files].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const links = sorted.map((f) => {
    const { cid, tsize } = independentFile(f.bytes);
    return pbLink(cid, f.path, tsize);
  });
  return dagPbCid(pbNode(links, unixfsDir()));
}

async function importSingle(bytes: Uint8Array): Promise<string> {
  let last = '';
  for await (const e of importer([{ content: bytes }], new MemoryBlockstore(), { ...kuboCidV1ImportOptions(), wrapWithDirectory: false }))
    last = e.cid.toString();
  return last;
}

const EVIDENCE = {
  stage: 'MILLED',
  batch_id: 'B-2024-000123',
  mill_id: 'MILL-07',
  outturn_kg: 812.5,
  milled_at: '2024-05-02T08:30:00Z',
  actor: { sub: 'op-1', role: 'cooperative' },
};
const enc = new TextEncoder();

describe('evidence package CIDs', () => {
  it('single-file vectors: raw-leaf CIDv1, equal to sha2-256 over the bytes', async () => {
    expect(await importSingle(enc.encode('hello world'))).toBe('bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e');
    // With the trailing newline (`echo "hello world" | ipfs add --cid-version 1`).
    expect(await importSingle(enc.encode('hello world\n'))).toBe('bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4');
    for (const s of ['hello world', 'hello world\n']) expect(await importSingle(enc.encode(s))).toBe(rawCid(enc.encode(s)).toString());
  });

  it('reproduces kubo: `ipfs add -r --cid-version=1` of planets/{mars,venus}.txt (kubo sharness t0040)', async () => {
    const { cid } = await buildUnixfsDirectory([
      { path: 'venus.txt', bytes: enc.encode('Hello Venus!\n') },
      { path: 'mars.txt', bytes: enc.encode('Hello Mars!\n') },
    ]);
    expect(cid).toBe('bafybeih7e5dmkyk25up5vxug4q3hrg2fxbzf23dfrac2fns5h7z4aa7ioi');
    expect(
      independentDirectory([
        { path: 'mars.txt', bytes: enc.encode('Hello Mars!\n') },
        { path: 'venus.txt', bytes: enc.encode('Hello Venus!\n') },
      ]).toString(),
    ).toBe(cid);
  });

  it('evidence.json is RFC 8785 canonical JSON without a trailing newline', () => {
    const text = new TextDecoder().decode(canonicalEvidenceBytes({ b: 1, a: [true, null, 'é'], c: { y: 1e21, x: 0.1 } }));
    expect(text).toBe('{"a":[true,null,"é"],"b":1,"c":{"x":0.1,"y":1e+21}}');
    expect(() => canonicalEvidenceBytes({ n: Number.NaN })).toThrow(DomainError);
  });

  it('evidence only: a directory with evidence.json; CID matches the independent construction', async () => {
    const pkg = await buildEvidencePackage({ evidence: EVIDENCE });
    expect(EVIDENCE_FILE).toBe('evidence.json');
    expect(pkg.cid).toMatch(/^bafybei[a-z2-7]+$/);
    expect(pkg.files.map((f) => f.path)).toEqual(['evidence.json']);
    expect(pkg.files[0]!.bytes).toEqual(canonicalEvidenceBytes(EVIDENCE));
    expect(pkg.cid).toBe(independentDirectory(pkg.files).toString());
    expect(pkg.blocks.map((b) => b.cid)).toEqual([pkg.cid, rawCid(pkg.files[0]!.bytes).toString()]);
  });

  it.each([
    ['a small PNG', PNG, 'png'],
    [
      'a 600 KiB multi-chunk photo',
      (() => {
        const b = new Uint8Array(600 * 1024);
        for (let i = 0; i < b.length; i++) b[i] = (i * 2654435761) >>> 24;
        b.set(JPEG);
        return b;
      })(),
      'jpg',
    ],
  ] as const)('evidence + %s: CID matches the independent construction; every block hashes to its CID', async (_l, bytes, extension) => {
    const pkg = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes, extension } });
    expect(pkg.files.map((f) => f.path)).toEqual(['evidence.json', `photo.${extension}`]);
    expect(pkg.cid).toBe(independentDirectory(pkg.files).toString());
    expect(pkg.blocks[0]!.cid).toBe(pkg.cid);
    // directory + evidence.json leaf + (one raw leaf | a dag-pb file node over ceil(n / 256 KiB) raw chunks)
    const chunks = Math.ceil(bytes.length / 262_144);
    expect(pkg.blocks).toHaveLength(2 + (chunks === 1 ? 1 : 1 + chunks));
    for (const b of pkg.blocks) {
      const cid = CID.parse(b.cid);
      expect(cid.version).toBe(1);
      expect([0x55, 0x70]).toContain(cid.code);
      expect(Buffer.from(cid.multihash.digest)).toEqual(Buffer.from(sha256(b.bytes)));
    }
  });

  it('is deterministic; evidence key order does not change the CID; content does', async () => {
    const a = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PNG, extension: 'png' } });
    const b = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PNG, extension: 'png' } });
    const reordered = Object.fromEntries(
      Object.entries(EVIDENCE)
        .reverse()
        .map(([k, v]) => [k, v && typeof v === 'object' ? { role: 'cooperative', sub: 'op-1' } : v]),
    );
    const c = await buildEvidencePackage({ evidence: reordered, photo: { bytes: PNG, extension: 'png' } });
    expect(b.cid).toBe(a.cid);
    expect(c.cid).toBe(a.cid);
    expect(
      (await buildEvidencePackage({ evidence: { ...EVIDENCE, outturn_kg: 812.6 }, photo: { bytes: PNG, extension: 'png' } })).cid,
    ).not.toBe(a.cid);
    expect((await buildEvidencePackage({ evidence: EVIDENCE })).cid).not.toBe(a.cid);
  });
});

// ---------------------------------------------------------------------------------------------
// Keeping, pinning and serving evidence (CARs, the pinning adapters and sandbox, /ipfs): test/unit/evidence-pinning.test.ts.
