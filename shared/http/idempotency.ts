import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { DomainError } from '../domain/errors';
import type { Caller } from '../domain/caller';
import type { IdempotencyStore } from '../domain/ports/messaging';
import type { HttpReply, HttpRequest } from './handler';

/**
 * `Idempotency-Key` support for a creating operation (as payment APIs offer it): the first
 * request with a key runs and its 2xx response is kept for 24 hours; a retry with the same key and
 * the same body gets that response again (`idempotent-replayed: true`) instead of creating a
 * second resource; the same key with another body is 400 VALIDATION_ERROR; a key whose first
 * request is still running is 409 DUPLICATE_REQUEST. A request that fails releases its key.
 * Without the header the operation runs as usual. `repo` keeps the keys (composition's idempotencyStore()).
 * Keys are scoped to the operation and the caller's whole identity (see `idempotencyScope`); the
 * caller checks access to the resource before calling this, so a replay is never served to a
 * token that could not make the request.
 *
 * Why not Powertools Idempotency (docs/powertools.md): it can express the scope (`makeIdempotent`
 * over an inner `{scope, key, body}` with `eventKeyJmesPath`), the body check
 * (`payloadValidationJmesPath`) and the in-progress lock, but not the single-table key design:
 * its DynamoDB persistence with `sortKeyAttr` (needed to share our table, whose key is pk + sk)
 * writes every record of a function under one static partition key (`idempotency#<function
 * name>`, DynamoDBPersistenceLayer.getKey), one hot partition for all callers of a creating
 * route, where these records are keyed per scope and key (keys.idempotency). (An earlier second
 * reason, the bundle bytes — 49 KB minified with its DynamoDB persistence and JMESPath, measured
 * 2026-11-22 — no longer holds: Powertools packages now come from the official layer, which holds
 * idempotency too, and are left out of every bundle, infra/bundling.ts.)
 */
export async function withIdempotency<B, T extends HttpReply>(
  repo: IdempotencyStore,
  operation: string,
  req: HttpRequest<B>,
  run: () => Promise<T>,
): Promise<T> {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return run();
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new DomainError('VALIDATION_ERROR', 'The Idempotency-Key header must be 1–255 visible ASCII characters.', {
      details: [{ path: 'headers.idempotency-key', message: 'invalid' }],
    });
  }
  const scope = idempotencyScope(operation, req.caller);
  const hash = createHash('sha256')
    .update(canonicalize(req.body ?? null) ?? '')
    .digest('hex');
  const claim = await repo.claim(scope, key, hash, new Date());
  // A replay answers the body `run` stored before under this key: the same reply type.
  if (claim.kind === 'replay')
    return { status: claim.status, body: claim.body, headers: { 'idempotent-replayed': 'true' } } as unknown as T;
  if (claim.kind === 'mismatch')
    throw new DomainError('VALIDATION_ERROR', 'This Idempotency-Key was used with a different request body.', {
      details: [{ path: 'headers.idempotency-key', message: 'reused with a different body' }],
    });
  if (claim.kind === 'in-progress')
    throw new DomainError('DUPLICATE_REQUEST', 'A request with this Idempotency-Key is still being processed; retry shortly.');
  let reply: T;
  try {
    reply = await run();
  } catch (err) {
    await repo.release(scope, key).catch(() => undefined);
    throw err;
  }
  const status = 'statusCode' in reply ? reply.statusCode : reply.status;
  if (status >= 200 && status < 300 && !('statusCode' in reply)) await repo.complete(scope, key, status, reply.body);
  else await repo.release(scope, key);
  return reply;
}

/**
 * The scope of an Idempotency-Key: the operation and a SHA-256 of the caller's whole identity —
 * role, the cooperative or MFI it acts for, token subject — so two tokens that share a subject but
 * act for different cooperatives never share replays (and the key stays short and free of ids).
 */
function idempotencyScope(operation: string, caller: Caller): string {
  const identity = createHash('sha256')
    .update(JSON.stringify([caller.role, caller.cooperative_id ?? null, caller.mfi_id ?? null, caller.sub]))
    .digest('base64url');
  return `${operation}#${identity}`;
}
