import { DomainError } from '../../domain/errors';

/**
 * Pagination tokens of GSI1 listings: the query's LastEvaluatedKey (`{PK, SK, GSI1PK, GSI1SK}`, all
 * strings) as base64url JSON. A token is accepted back only with exactly that shape and the
 * listing's own GSI1PK (and, when given, a table key the listing's items have), so a garbled,
 * forged or another listing's token is a 400, never an ExclusiveStartKey DynamoDB refuses (a 500)
 * nor a peek into another partition.
 */
export type GsiPageKey = { PK: string; SK: string; GSI1PK: string; GSI1SK: string };

/** The token of a LastEvaluatedKey, or undefined on the last page. */
export function encodePageToken(key: Record<string, unknown> | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key), 'utf8').toString('base64url') : undefined;
}

/**
 * The key inside `token` when it is one this listing issued: a base64url JSON object with exactly
 * the string fields PK, SK, GSI1PK, GSI1SK, GSI1PK equal to `gsi1pk`, and `itemKey(key)` true
 * (e.g. the PK prefix and SK of the listed entity).
 * Errors: 400 VALIDATION_ERROR (`details[0].path` = `next_token`) otherwise.
 */
export function decodePageToken(token: string, gsi1pk: string, itemKey: (key: GsiPageKey) => boolean = () => true): GsiPageKey {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) throw new Error('not base64url');
    const key = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw new Error('not an object');
    const fields = Object.keys(key).sort().join(',');
    if (fields !== 'GSI1PK,GSI1SK,PK,SK' || !Object.values(key).every((x) => typeof x === 'string' && x !== ''))
      throw new Error('not a listing key');
    const k = key as GsiPageKey;
    if (k.GSI1PK !== gsi1pk || !itemKey(k)) throw new Error('foreign key');
    return k;
  } catch {
    throw new DomainError('VALIDATION_ERROR', 'next_token is not a token this listing issued.', {
      details: [{ path: 'next_token', message: 'invalid pagination token' }],
    });
  }
}
