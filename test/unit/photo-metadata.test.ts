import { fileTypeFromBuffer } from 'file-type';
import { checkEvidencePhoto, parseEvidencePhoto } from '../../shared/domain/evidence-photo';
import { stripPhotoMetadata } from '../../shared/domain/photo-metadata';
import { buildEvidencePackage } from '../../shared/domain/evidence-package';
import { holdsMetadata, JPEG, JPEG_WITH_METADATA, PNG, PNG_WITH_METADATA, WEBP, WEBP_STRIPPED, WEBP_WITH_METADATA } from './support/images';

/**
 * Photo metadata (EXIF with GPS, XMP, IPTC, PNG text chunks) is removed before a photo is hashed
 * and pinned: the evidence holds the stripped bytes and its CID is computed over them.
 */
describe('evidence photo metadata', () => {
  it('the fixtures do carry the metadata, and are still their image types', async () => {
    for (const [bytes, mime] of [
      [JPEG_WITH_METADATA, 'image/jpeg'],
      [PNG_WITH_METADATA, 'image/png'],
      [WEBP_WITH_METADATA, 'image/webp'],
    ] as const) {
      expect(holdsMetadata(bytes)).toBe(true);
      expect((await fileTypeFromBuffer(bytes))?.mime).toBe(mime);
    }
  });

  it('JPEG: the EXIF (GPS) and XMP APP1, the IPTC APP13 and the comment are removed; the image bytes are untouched', async () => {
    const out = await stripPhotoMetadata(JPEG_WITH_METADATA, 'image/jpeg');
    expect(holdsMetadata(out)).toBe(false);
    expect(Buffer.from(out).equals(Buffer.from(JPEG))).toBe(true);
  });

  it('PNG: eXIf, tEXt, iTXt and tIME are removed; the image chunks stay', async () => {
    const out = await stripPhotoMetadata(PNG_WITH_METADATA, 'image/png');
    expect(holdsMetadata(out)).toBe(false);
    expect(Buffer.from(out).equals(Buffer.from(PNG))).toBe(true);
  });

  it('WebP: the EXIF and XMP chunks are removed, their VP8X flags cleared and the RIFF size fixed', async () => {
    const out = await stripPhotoMetadata(WEBP_WITH_METADATA, 'image/webp');
    expect(holdsMetadata(out)).toBe(false);
    expect(Buffer.from(out).equals(Buffer.from(WEBP_STRIPPED))).toBe(true);
    expect(Buffer.from(out).readUInt32LE(4)).toBe(out.byteLength - 8);
  });

  it('PNG: a 4 MiB upload of many tiny metadata chunks, or with bytes after IEND, is handled in one pass', async () => {
    // exif-be-gone 1.5.1 took minutes on such input; the PNG filter reads each chunk header once.
    const many = Buffer.alloc(4 * 1024 * 1024);
    Buffer.from(PNG).copy(many, 0, 0, 33); // signature + IHDR
    for (let i = 33; i + 12 <= many.length; i += 12) many.write('tEXt', i + 4, 'latin1');
    const out = Buffer.from(await stripPhotoMetadata(many, 'image/png'));
    expect(out.subarray(0, 33).equals(Buffer.from(PNG).subarray(0, 33))).toBe(true);
    expect(out.includes(Buffer.from('tEXt', 'latin1'))).toBe(false);
    const trailing = Buffer.concat([Buffer.from(PNG_WITH_METADATA), Buffer.alloc(1024 * 1024)]);
    const kept = Buffer.from(await stripPhotoMetadata(trailing, 'image/png'));
    expect(kept.equals(Buffer.concat([Buffer.from(PNG), Buffer.alloc(1024 * 1024)]))).toBe(true);
  });

  it('a photo without metadata comes through byte for byte', async () => {
    for (const [bytes, mime] of [
      [JPEG, 'image/jpeg'],
      [PNG, 'image/png'],
      [WEBP, 'image/webp'],
    ] as const) {
      expect(Buffer.from(await stripPhotoMetadata(bytes, mime)).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('checkEvidencePhoto and parseEvidencePhoto hand on the stripped bytes, so the evidence CID is computed over them', async () => {
    const checked = await checkEvidencePhoto(JPEG_WITH_METADATA, 'image/jpeg');
    expect(checked.ok).toBe(true);
    const photo = (checked as { ok: true; photo: { bytes: Uint8Array; extension: string } }).photo;
    expect(Buffer.from(photo.bytes).equals(Buffer.from(JPEG))).toBe(true);
    const parsed = await parseEvidencePhoto(`data:image/png;base64,${Buffer.from(PNG_WITH_METADATA).toString('base64')}`);
    expect(holdsMetadata(parsed.bytes)).toBe(false);
    const evidence = { grade: 'screen18' };
    const fromStripped = await buildEvidencePackage({ evidence, photo });
    const fromClean = await buildEvidencePackage({ evidence, photo: { bytes: JPEG, extension: 'jpg' } });
    expect(fromStripped.cid).toBe(fromClean.cid);
  });
});
