import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import * as v from 'valibot';
import { requireEnv } from '../config';
import { DUTIES, ROLES, type Caller } from './claims';

/** Only asymmetric algorithms are accepted (docs/security.md#tokens-and-roles): no `none`, no HMAC. */
const ALLOWED_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
/** Longest accepted token lifetime (exp − iat), seconds. */
const MAX_TOKEN_LIFETIME_S = 3600;
/** Clock skew tolerated between the issuer and this service, seconds (exp, nbf and iat checks). */
export const CLOCK_TOLERANCE_S = 5;

const ClaimsSchema = v.pipe(
  v.object({
    sub: v.pipe(v.string(), v.minLength(1)),
    role: v.picklist(ROLES),
    cooperative_id: v.optional(v.pipe(v.string(), v.minLength(1))),
    mfi_id: v.optional(v.pipe(v.string(), v.minLength(1))),
    duties: v.optional(v.array(v.picklist(DUTIES))),
    iat: v.number(),
    exp: v.number(),
  }),
  v.check((c) => c.exp - c.iat <= MAX_TOKEN_LIFETIME_S, 'token lifetime exceeds 1 hour'),
  v.check(
    (c) => (c.role === 'COOPERATIVE' || c.role === 'AGENT' ? !!c.cooperative_id : true),
    'cooperative_id claim required for this role',
  ),
  v.check((c) => (c.role === 'MFI' ? !!c.mfi_id : true), 'mfi_id claim required for MFI tokens'),
);

/** Raised for any token that is not acceptable; the API answers 401 UNAUTHORIZED. */
export class InvalidTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTokenError';
  }
}

let jwks: JWTVerifyGetKey | undefined;

/** The issuer's key set from `JWKS_URL` (cached, refreshed by jose on unknown `kid`). */
function keySet(): JWTVerifyGetKey {
  jwks ??= createRemoteJWKSet(new URL(requireEnv('JWKS_URL')), { cooldownDuration: 30_000, timeoutDuration: 3000 });
  return jwks;
}

/**
 * Verifies a Bearer token with jose against `JWKS_URL`, `JWT_ISSUER`, `JWT_AUDIENCE` and returns
 * the caller. The header must be exactly `Bearer <token>` (no padding). Errors: `InvalidTokenError` for a missing, malformed, unsigned, HMAC-signed, expired,
 * not-yet-valid, wrong-issuer, wrong-audience or over-long-lived token, one issued in the future
 * (`iat` later than now + CLOCK_TOLERANCE_S) or more than 1 hour ago, or bad claims.
 */
export async function verifyBearerToken(authorization: string | undefined, getKey: JWTVerifyGetKey = keySet()): Promise<Caller> {
  // Exactly `Bearer <token>`, nothing around it: the WAF's per-token key is the header with its
  // whitespace compressed (infra/stack/waf.ts), so a padded header must not authenticate.
  const m = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(authorization ?? '');
  if (!m?.[1]) throw new InvalidTokenError('missing or malformed Authorization header; expected "Bearer <token>"');
  let payload: unknown;
  try {
    ({ payload } = await jwtVerify(m[1], getKey, {
      algorithms: ALLOWED_ALGORITHMS,
      issuer: requireEnv('JWT_ISSUER'),
      audience: requireEnv('JWT_AUDIENCE'),
      requiredClaims: ['exp', 'iat', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_S,
      // Also checks `iat`: issued in the future beyond the tolerance, or longer ago than a token may live, is refused.
      maxTokenAge: MAX_TOKEN_LIFETIME_S,
    }));
  } catch (err) {
    throw new InvalidTokenError(`token rejected: ${(err as Error).message}`);
  }
  const parsed = v.safeParse(ClaimsSchema, payload);
  if (!parsed.success) throw new InvalidTokenError(`token claims rejected: ${parsed.issues.map((i) => i.message).join('; ')}`);
  const c = parsed.output;
  return {
    sub: c.sub,
    role: c.role,
    cooperative_id: c.cooperative_id,
    mfi_id: c.mfi_id,
    duties: c.role === 'COOPERATIVE' ? (c.duties ?? [...DUTIES]) : [],
  };
}
