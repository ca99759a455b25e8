import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { auditMessageId } from './ids';
import type { AuditEntry } from './records';

/** prev_hash of the first entry of every batch's audit stream. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * Builds the next audit-log entry of a batch (docs/api/batches-and-custody.md#custody-trail): sequence numbers from 1, each entry
 * carrying the SHA-256 (hex) of the previous one. The hash covers the RFC 8785 canonical JSON of
 * `{batch_id, sequence_number, type, at, actor, payload, prev_hash}`, so anyone can recompute it.
 */
export function buildAuditEntry(input: {
  batchId: string;
  seq: number;
  type: string;
  at: string;
  actor: string;
  payload: Record<string, unknown>;
  prevHash: string;
}): AuditEntry {
  const body = {
    batch_id: input.batchId,
    sequence_number: input.seq,
    type: input.type,
    at: input.at,
    actor: input.actor,
    payload: input.payload,
    prev_hash: input.prevHash,
  };
  return { ...body, message_id: auditMessageId(input.batchId, input.seq), hash: auditHash(body) };
}

/** SHA-256 hex of the canonical JSON of an entry's hashed fields. */
export function auditHash(body: Omit<AuditEntry, 'hash' | 'message_id'>): string {
  const canonical = canonicalize({
    batch_id: body.batch_id,
    sequence_number: body.sequence_number,
    type: body.type,
    at: body.at,
    actor: body.actor,
    payload: body.payload,
    prev_hash: body.prev_hash,
  });
  if (canonical === undefined) throw new Error('audit entry cannot be canonicalised');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** Recomputes a chain; returns the first sequence number that does not verify, or null. */
export function firstBrokenLink(entries: AuditEntry[]): number | null {
  let prev = GENESIS_HASH;
  for (const [i, e] of entries.entries()) {
    if (e.sequence_number !== i + 1 || e.prev_hash !== prev || auditHash(e) !== e.hash) return e.sequence_number;
    prev = e.hash;
  }
  return null;
}
