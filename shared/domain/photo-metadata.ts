/**
 * Removing a photo's metadata (EXIF with GPS, XMP, IPTC, comments, PNG text chunks) before it is
 * hashed and pinned. Its own module, so that functions which only name the photo types (and never
 * take a photo) do not bundle the JPEG metadata library.
 */
import { Readable } from 'node:stream';
import ExifTransformer from 'exif-be-gone';

/**
 * A photo without its metadata, the pixels untouched (no re-encoding):
 * - JPEG: APP1 segments holding EXIF (with GPS), XMP or FLIR data are removed by `exif-be-gone`,
 *   then the APP13 segments (Photoshop IRB, where IPTC lives) and comments (COM) here;
 * - PNG: the `eXIf`, `tEXt`, `zTXt`, `iTXt` (XMP), `tIME` and `dSIG` chunks, here, in one pass
 *   (exif-be-gone 1.5.1 takes time quadratic in the bytes after a PNG's last chunk: about 5 s for
 *   256 KiB and minutes for a 4 MiB upload, which would let one photo hold a function to its
 *   timeout);
 * - WebP: the `EXIF` and `XMP ` chunks, their flags cleared in `VP8X` and the RIFF size fixed
 *   (here: exif-be-gone 1.5.1 mis-sizes WebP chunks and removes nothing).
 * Bytes that do not parse as their type are returned unchanged (JPEG: as the library leaves them).
 * Time is linear in the size for every type.
 */
export async function stripPhotoMetadata(bytes: Uint8Array, mime: 'image/jpeg' | 'image/png' | 'image/webp'): Promise<Uint8Array> {
  if (mime === 'image/webp') return stripWebpMetadata(bytes);
  if (mime === 'image/png') return stripPngMetadata(bytes);
  const chunks: Buffer[] = [];
  for await (const c of Readable.from([Buffer.from(bytes)]).pipe(new ExifTransformer())) chunks.push(c as Buffer);
  return dropJpegSegments(new Uint8Array(Buffer.concat(chunks)), new Set([0xed, 0xfe]));
}

/** PNG chunk types that carry metadata rather than pixels or their rendering. */
const PNG_METADATA_CHUNKS: ReadonlySet<string> = new Set(['eXIf', 'tEXt', 'zTXt', 'iTXt', 'tIME', 'dSIG']);
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A PNG without its metadata chunks ({@link PNG_METADATA_CHUNKS}), every other chunk copied as it
 * is, up to and including IEND; bytes after IEND are kept as they are. Not a PNG, or a chunk that
 * runs past the end: the input unchanged.
 */
function stripPngMetadata(png: Uint8Array): Uint8Array {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (buf.length < 8 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) return png;
  const keep: Buffer[] = [buf.subarray(0, 8)];
  let i = 8;
  while (i + 12 <= buf.length) {
    const end = i + 12 + buf.readUInt32BE(i);
    if (end > buf.length) return png;
    const type = buf.toString('latin1', i + 4, i + 8);
    if (!PNG_METADATA_CHUNKS.has(type)) keep.push(buf.subarray(i, end));
    i = end;
    if (type === 'IEND') break;
  }
  keep.push(buf.subarray(i));
  return new Uint8Array(Buffer.concat(keep));
}

/**
 * A JPEG without the marker segments named in `markers` (second byte, e.g. 0xED = APP13) among
 * those before the first scan (SOS); everything from SOS on is copied as it is. Unparseable
 * headers: the input unchanged.
 */
function dropJpegSegments(jpeg: Uint8Array, markers: ReadonlySet<number>): Uint8Array {
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return jpeg;
  const keep: Uint8Array[] = [jpeg.subarray(0, 2)];
  let i = 2;
  while (i + 4 <= jpeg.length) {
    if (jpeg[i] !== 0xff) return jpeg;
    const marker = jpeg[i + 1]!;
    if (marker === 0xda) break; // SOS: image data follows
    const end = i + 2 + ((jpeg[i + 2]! << 8) | jpeg[i + 3]!);
    if (end > jpeg.length) return jpeg;
    if (!markers.has(marker)) keep.push(jpeg.subarray(i, end));
    i = end;
  }
  keep.push(jpeg.subarray(i));
  return new Uint8Array(Buffer.concat(keep));
}

/** A WebP (RIFF) without its `EXIF` and `XMP ` chunks, with the VP8X flags and the RIFF size to match. Unparseable: unchanged. */
function stripWebpMetadata(webp: Uint8Array): Uint8Array {
  const buf = Buffer.from(webp);
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WEBP') return webp;
  const keep: Buffer[] = [];
  for (let i = 12; i < buf.length; ) {
    if (i + 8 > buf.length) return webp;
    const type = buf.toString('latin1', i, i + 4);
    const end = i + 8 + buf.readUInt32LE(i + 4) + (buf.readUInt32LE(i + 4) % 2);
    if (end > buf.length) return webp;
    if (type === 'VP8X') {
      const vp8x = Buffer.from(buf.subarray(i, end));
      vp8x[8] = vp8x[8]! & ~0x0c; // clear the EXIF (0x08) and XMP (0x04) flags
      keep.push(vp8x);
    } else if (type !== 'EXIF' && type !== 'XMP ') keep.push(buf.subarray(i, end));
    i = end;
  }
  const body = Buffer.concat([buf.subarray(8, 12), ...keep]);
  const header = Buffer.alloc(8);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(body.length, 4);
  return new Uint8Array(Buffer.concat([header, body]));
}
