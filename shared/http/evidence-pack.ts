import canonicalize from 'canonicalize';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import type { EvidencePackContent } from '../use-cases/evidence-pack';
import { ddsView } from './views';

/** The pack's format version (`pack_version`); a change of its fields is a new version. */
const EVIDENCE_PACK_VERSION = 1;

/** The response header carrying the pack's CID (also sent as a strong ETag). */
export const EVIDENCE_PACK_CID_HEADER = 'x-evidence-pack-cid';

/** The evidence pack as it is served: the DDS as GET /eudr/dds/{id} shows it, then the batch, forest checks, trail and audit. */
export function evidencePackView(c: EvidencePackContent) {
  return {
    pack_version: EVIDENCE_PACK_VERSION,
    dds: ddsView(c.dds),
    batch: c.batch,
    forest_checks: c.forest_checks,
    trail: c.trail,
    audit: c.audit,
  };
}

/**
 * The pack's body and CID: the RFC 8785 canonical JSON of the view (UTF-8), and the CIDv1 (codec
 * raw 0x55, multihash sha2-256 of exactly those bytes, base32 `bafkrei…`) — anyone recomputes it
 * from the bytes they received, e.g. `CID.create(1, 0x55, await sha256.digest(bytes))`.
 */
export async function evidencePackDocument(c: EvidencePackContent): Promise<{ text: string; bytes: Uint8Array; cid: string }> {
  const text = canonicalize(evidencePackView(c))!;
  const bytes = new TextEncoder().encode(text);
  return { text, bytes, cid: CID.create(1, raw.code, await sha256.digest(bytes)).toString() };
}
