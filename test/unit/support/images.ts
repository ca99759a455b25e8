import { deflateSync } from 'node:zlib';

/**
 * Real tiny images built byte by byte (a 1×1 JPEG, PNG and WebP), and the same images carrying
 * the metadata a phone camera writes: EXIF with a GPS position, XMP, IPTC, text chunks.
 */

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
const le32 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255];
const le16 = (n: number) => [n & 255, (n >>> 8) & 255];
const be16 = (n: number) => [(n >>> 8) & 255, n & 255];

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
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const IHDR = pngChunk('IHDR', [...be32(1), ...be32(1), 8, 2, 0, 0, 0]);
const IDAT_IEND = u8(pngChunk('IDAT', deflateSync(Buffer.from([0, 0x6f, 0x4e, 0x37]))), pngChunk('IEND', []));
/** 1×1 RGB PNG (one coffee-brown pixel). */
export const PNG = u8(PNG_SIGNATURE, IHDR, IDAT_IEND);

const SOI = [0xff, 0xd8];
const JPEG_BODY = u8(
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
/** 1×1 baseline greyscale JPEG: one DC/AC Huffman code each; the scan is DC diff 0 + EOB. */
export const JPEG = u8(SOI, JPEG_BODY);

const VP8L = [0x2f, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07];
const riffChunk = (type: string, data: ArrayLike<number>) => u8(ascii(type), le32(data.length), data, data.length % 2 ? [0] : []);
const riff = (...chunks: Uint8Array[]) => {
  const body = u8(ascii('WEBP'), ...chunks);
  return u8(ascii('RIFF'), le32(body.length), body);
};
/** 1×1 lossless WebP (RIFF/WEBP/VP8L). */
export const WEBP = riff(riffChunk('VP8L', VP8L));

/** The GPS position written into the photos' EXIF: 0°19'N 32°34'E (Kampala), as a phone would. */
const GPS_MARK = 'GPS-SECRET-0.3130N-32.5811E';

/**
 * A little-endian TIFF (the EXIF payload): IFD0 with a GPSInfo pointer (tag 0x8825) to a GPS IFD
 * holding GPSLatitudeRef 'N' (0x0001) and GPSLatitude (0x0002, three RATIONALs), followed by a
 * marker text so a test can search for it.
 */
function exifTiffWithGps(): Uint8Array {
  const ifd0At = 8;
  const gpsAt = ifd0At + 2 + 12 + 4; // 26
  const ratAt = gpsAt + 2 + 2 * 12 + 4; // 56
  return u8(
    ascii('II'),
    le16(42),
    le32(ifd0At),
    le16(1),
    le16(0x8825),
    le16(4),
    le32(1),
    le32(gpsAt),
    le32(0),
    le16(2),
    le16(0x0001),
    le16(2),
    le32(2),
    ascii('N'),
    [0, 0, 0],
    le16(0x0002),
    le16(5),
    le32(3),
    le32(ratAt),
    le32(0),
    le32(0),
    le32(1),
    le32(19),
    le32(1),
    le32(0),
    le32(1),
    ascii(GPS_MARK),
  );
}
const XMP = `<?xpacket begin=""?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="0,18.78N" exif:GPSLongitude="32,34.866E"/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;
const segment = (marker: number, payload: ArrayLike<number>) => u8([0xff, marker], be16(payload.length + 2), payload);

/** {@link JPEG} with an EXIF APP1 (GPS), an XMP APP1, an IPTC APP13 (Photoshop IRB) and a comment. */
export const JPEG_WITH_METADATA = u8(
  SOI,
  segment(0xe1, u8(ascii('Exif'), [0, 0], exifTiffWithGps())),
  JPEG_BODY.subarray(0, 18), // APP0 JFIF
  segment(0xe1, u8(ascii('http://ns.adobe.com/xap/1.0/'), [0], ascii(XMP))),
  segment(
    0xed,
    u8(
      ascii('Photoshop 3.0'),
      [0],
      ascii('8BIM'),
      [0x04, 0x04, 0, 0],
      be32(20),
      [0x1c, 0x02, 0x5a, 0x00, 0x07],
      ascii('Kampala'),
      [0x1c, 0x02, 0x50, 0x00, 0x02],
      ascii('NM'),
    ),
  ),
  segment(0xfe, ascii('taken at the farm of Nabulo Mirembe')),
  JPEG_BODY.subarray(18),
);

/** {@link PNG} with `eXIf` (GPS), `tEXt`, `iTXt` (XMP) and `tIME` chunks. */
export const PNG_WITH_METADATA = u8(
  PNG_SIGNATURE,
  IHDR,
  pngChunk('eXIf', exifTiffWithGps()),
  pngChunk('tEXt', u8(ascii('Author'), [0], ascii('Nabulo Mirembe'))),
  pngChunk('iTXt', u8(ascii('XML:com.adobe.xmp'), [0, 0, 0, 0, 0], ascii(XMP))),
  pngChunk('tIME', [0x07, 0xea, 11, 22, 12, 0, 0]),
  IDAT_IEND,
);

/** {@link WEBP} as an extended WebP (VP8X with the EXIF and XMP flags) with `EXIF` (GPS) and `XMP ` chunks. */
export const WEBP_WITH_METADATA = riff(
  riffChunk('VP8X', [0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
  riffChunk('VP8L', VP8L),
  riffChunk('EXIF', exifTiffWithGps()),
  riffChunk('XMP ', ascii(XMP)),
);
/** {@link WEBP_WITH_METADATA} as it must come out: VP8X with no metadata flags, the image chunk. */
export const WEBP_STRIPPED = riff(riffChunk('VP8X', [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), riffChunk('VP8L', VP8L));

/** Whether `bytes` still hold any of the planted metadata (EXIF header, GPS mark, XMP, IPTC, comments, names). */
export function holdsMetadata(bytes: Uint8Array): boolean {
  const b = Buffer.from(bytes);
  return ['Exif\0\0', GPS_MARK, 'xmpmeta', 'Photoshop 3.0', '8BIM', 'Nabulo', 'Kampala', 'eXIf', 'tEXt', 'iTXt', 'tIME', 'XMP '].some((m) =>
    b.includes(Buffer.from(m, 'latin1')),
  );
}
