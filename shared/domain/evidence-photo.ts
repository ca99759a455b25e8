import { fileTypeFromBuffer } from 'file-type';
import { DomainError } from './errors';
import { stripPhotoMetadata } from './photo-metadata';

/** Largest accepted photo, in decoded bytes: 4 MiB. */
export const MAX_EVIDENCE_PHOTO_BYTES = 4 * 1024 * 1024;

/** The request field the photo arrives in (used as the error `details` path). */
const FIELD = 'evidence_photo_base64';

const MIME_TO_EXTENSION = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
} as const;

export type EvidencePhotoMime = keyof typeof MIME_TO_EXTENSION;
type EvidencePhotoExtension = (typeof MIME_TO_EXTENSION)[EvidencePhotoMime];

/** The accepted photo types: image/jpeg, image/png, image/webp. */
export const EVIDENCE_PHOTO_MIMES = Object.keys(MIME_TO_EXTENSION) as EvidencePhotoMime[];

/** A decoded, type-checked evidence photo. */
export interface EvidencePhoto {
  bytes: Uint8Array;
  mime: EvidencePhotoMime;
  extension: EvidencePhotoExtension;
}

const DATA_URI = /^data:(image\/(?:jpeg|png|webp));base64,([\s\S]*)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function invalid(message: string): DomainError {
  return new DomainError('VALIDATION_ERROR', `evidence_photo_base64: ${message}`, { details: [{ path: FIELD, message }] });
}

/**
 * Parses an evidence photo sent as a data URI: exactly `data:image/jpeg;base64,…`,
 * `data:image/png;base64,…` or `data:image/webp;base64,…` (lower case, no other parameters),
 * followed by standard base64 (RFC 4648 §4 alphabet, `=` padding, length a multiple of 4, no
 * whitespace, canonical padding bits).
 *
 * The declared type is not trusted: the decoded bytes are sniffed with file-type and must be a
 * JPEG, PNG or WebP and the same type as declared.
 *
 * Returns the decoded bytes with their metadata removed (see {@link checkEvidencePhoto}), the
 * MIME type and the file extension used in the evidence package (`jpg`, `png`, `webp`).
 *
 * Errors: DomainError PAYLOAD_TOO_LARGE (413) when the decoded photo exceeds 4 MiB
 * (`MAX_EVIDENCE_PHOTO_BYTES`; checked from the base64 length before decoding);
 * VALIDATION_ERROR (400, details path `evidence_photo_base64`) for any syntax, base64 or type
 * problem.
 */
export async function parseEvidencePhoto(dataUri: string): Promise<EvidencePhoto> {
  if (typeof dataUri !== 'string') throw invalid('must be a string');
  const m = DATA_URI.exec(dataUri);
  if (!m) throw invalid('must be a data URI of the form data:image/(jpeg|png|webp);base64,<base64>');
  const declared = m[1] as EvidencePhotoMime;
  const b64 = m[2]!;
  if (b64.length === 0) throw invalid('the photo is empty');
  if (b64.length % 4 !== 0 || !BASE64.test(b64)) throw invalid('invalid base64 (standard alphabet, padded, no whitespace)');

  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  const decodedLength = (b64.length / 4) * 3 - padding;
  if (decodedLength > MAX_EVIDENCE_PHOTO_BYTES) {
    throw new DomainError(
      'PAYLOAD_TOO_LARGE',
      `evidence_photo_base64: the photo is ${decodedLength} bytes; the limit is ${MAX_EVIDENCE_PHOTO_BYTES} bytes (4 MiB).`,
      {
        details: [{ path: FIELD, message: `decoded size ${decodedLength} bytes exceeds ${MAX_EVIDENCE_PHOTO_BYTES}` }],
      },
    );
  }

  const buf = Buffer.from(b64, 'base64');
  // Node's decoder is lenient about the unused bits of the last quantum: require canonical input.
  if (buf.length !== decodedLength || buf.toString('base64') !== b64) throw invalid('invalid base64 (non-canonical encoding)');
  const bytes = new Uint8Array(buf); // a copy, not a view into Node's shared buffer pool

  const checked = await checkEvidencePhoto(bytes, declared);
  if (!checked.ok) throw invalid(checked.problem);
  return checked.photo;
}

/**
 * The check of an evidence photo's bytes, however they arrived (base64 in the body or by upload
 * URL): the bytes are sniffed with file-type and must be a JPEG, PNG or WebP and of the `declared`
 * type. Then its metadata is removed ({@link stripPhotoMetadata}: EXIF with GPS, XMP, IPTC, text
 * chunks), and the photo returned holds the stripped bytes — those are hashed into the evidence
 * CID and pinned, never the original ones. Returns the photo, or the problem in words (`detected`
 * is what the bytes are, when file-type recognises them).
 */
export async function checkEvidencePhoto(
  bytes: Uint8Array,
  declared: EvidencePhotoMime,
): Promise<{ ok: true; photo: EvidencePhoto } | { ok: false; problem: string; detected?: string }> {
  const detected = await fileTypeFromBuffer(bytes);
  if (!detected || !(detected.mime in MIME_TO_EXTENSION)) {
    return {
      ok: false,
      problem: `the content is not a JPEG, PNG or WebP image${detected ? ` (detected ${detected.mime})` : ''}`,
      detected: detected?.mime,
    };
  }
  if (detected.mime !== declared)
    return { ok: false, problem: `declared ${declared} but the content is ${detected.mime}`, detected: detected.mime };
  const stripped = await stripPhotoMetadata(bytes, declared);
  if ((await fileTypeFromBuffer(stripped))?.mime !== declared)
    return { ok: false, problem: `the ${declared} image is malformed: its metadata could not be removed`, detected: detected.mime };
  return { ok: true, photo: { bytes: stripped, mime: declared, extension: MIME_TO_EXTENSION[declared] } };
}
