import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import { handler as authorizer } from '../../functions/authorizer/handler';
import { callerFromContext, callerToContext, DUTIES, type Caller } from '../../shared/auth/claims';
import { CLOCK_TOLERANCE_S, InvalidTokenError, verifyBearerToken } from '../../shared/auth/verify-token';
import { logger } from '../../shared/runtime/logger';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'coffee-trace-api';

interface SigningKey {
  alg: 'ES256' | 'RS256' | 'EdDSA';
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

let keys: Record<SigningKey['alg'], SigningKey>;
let jwks: JSONWebKeySet;
let getKey: JWTVerifyGetKey;

async function makeKey(alg: SigningKey['alg']): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `test-${alg}`;
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

const nowS = () => Math.floor(Date.now() / 1000);

/** Signs a token; by default a 15-minute COOPERATIVE token from the trusted issuer. */
async function token(
  claims: Record<string, unknown> = {},
  opts: { key?: SigningKey; iat?: number; exp?: number; nbf?: number; iss?: string; aud?: string } = {},
): Promise<string> {
  const key = opts.key ?? keys.ES256;
  const iat = opts.iat ?? nowS();
  const jwt = new SignJWT({ role: 'COOPERATIVE', cooperative_id: 'COOP-1', ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setSubject(typeof claims.sub === 'string' ? claims.sub : 'user-1')
    .setIssuer(opts.iss ?? ISSUER)
    .setAudience(opts.aud ?? AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(opts.exp ?? iat + 900);
  if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
  return jwt.sign(key.privateKey);
}

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');

beforeAll(async () => {
  logger.setLogLevel('SILENT');
  process.env.JWT_ISSUER = ISSUER;
  process.env.JWT_AUDIENCE = AUDIENCE;
  keys = { ES256: await makeKey('ES256'), RS256: await makeKey('RS256'), EdDSA: await makeKey('EdDSA') };
  jwks = { keys: Object.values(keys).map((k) => k.publicJwk) };
  getKey = createLocalJWKSet(jwks);
});

afterEach(() => {
  jest.restoreAllMocks();
});

describe('verifyBearerToken: accepted tokens', () => {
  it('returns the caller of a COOPERATIVE token with its duties', async () => {
    // Prepare
    const jwt = await token({ duties: ['QUALITY_OFFICER', 'EXPORTER'] });

    // Act
    const caller = await verifyBearerToken(`Bearer ${jwt}`, getKey);

    // Assess
    expect(caller).toEqual({
      sub: 'user-1',
      role: 'COOPERATIVE',
      cooperative_id: 'COOP-1',
      mfi_id: undefined,
      duties: ['QUALITY_OFFICER', 'EXPORTER'],
    });
  });

  it('gives a COOPERATIVE token without a duties claim every duty', async () => {
    // Prepare
    const jwt = await token();

    // Act
    const caller = await verifyBearerToken(`Bearer ${jwt}`, getKey);

    // Assess
    expect(caller.duties).toEqual([...DUTIES]);
  });

  it.each(['ES256', 'RS256', 'EdDSA'] as const)('accepts a token signed with %s', async (alg) => {
    // Prepare
    const jwt = await token({}, { key: keys[alg] });

    // Act
    const caller = await verifyBearerToken(`Bearer ${jwt}`, getKey);

    // Assess
    expect(caller.role).toBe('COOPERATIVE');
  });

  it('accepts an AGENT token bound to a cooperative, with no duties', async () => {
    // Prepare
    const jwt = await token({ role: 'AGENT', cooperative_id: 'COOP-9', duties: ['EXPORTER'] });

    // Act
    const caller = await verifyBearerToken(`Bearer ${jwt}`, getKey);

    // Assess
    expect(caller).toEqual(expect.objectContaining({ role: 'AGENT', cooperative_id: 'COOP-9', duties: [] }));
  });

  it('accepts an MFI token with mfi_id', async () => {
    // Prepare
    const jwt = await token({ role: 'MFI', cooperative_id: undefined, mfi_id: 'MFI-1' });

    // Act
    const caller = await verifyBearerToken(`Bearer ${jwt}`, getKey);

    // Assess
    expect(caller).toEqual(expect.objectContaining({ role: 'MFI', mfi_id: 'MFI-1', duties: [] }));
  });

  it('accepts an ADMIN token without cooperative or MFI binding', async () => {
    // Prepare
    const jwt = await token({ role: 'ADMIN', cooperative_id: undefined });

    // Act
    const caller = await verifyBearerToken(`Bearer ${jwt}`, getKey);

    // Assess
    expect(caller).toEqual({ sub: 'user-1', role: 'ADMIN', cooperative_id: undefined, mfi_id: undefined, duties: [] });
  });

  it('accepts a token issued within the clock tolerance in the future (issuer clock slightly ahead)', async () => {
    // Prepare
    const iat = nowS() + CLOCK_TOLERANCE_S - 2;
    const jwt = await token({}, { iat, exp: iat + 900 });

    // Act
    const caller = await verifyBearerToken(`Bearer ${jwt}`, getKey);

    // Assess
    expect(caller.sub).toBe('user-1');
  });

  it('accepts a lifetime of exactly 1 hour', async () => {
    // Prepare
    const iat = nowS();
    const jwt = await token({}, { iat, exp: iat + 3600 });

    // Act
    const caller = await verifyBearerToken(`Bearer ${jwt}`, getKey);

    // Assess
    expect(caller.sub).toBe('user-1');
  });
});

describe('verifyBearerToken: rejected tokens (401 UNAUTHORIZED)', () => {
  async function rejection(authorization: string | undefined, keyFn: JWTVerifyGetKey = getKey): Promise<InvalidTokenError> {
    const err = await verifyBearerToken(authorization, keyFn).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvalidTokenError);
    return err as InvalidTokenError;
  }

  it.each([
    ['an AGENT token without cooperative_id', { role: 'AGENT', cooperative_id: undefined }, /cooperative_id/],
    ['a COOPERATIVE token without cooperative_id', { cooperative_id: undefined }, /cooperative_id/],
    ['an MFI token without mfi_id', { role: 'MFI', cooperative_id: undefined }, /mfi_id/],
    ['an unknown role', { role: 'FARMER' }, /claims rejected/],
    ['an unknown duty', { duties: ['JANITOR'] }, /claims rejected/],
  ])('rejects %s', async (_what, claims, reason) => {
    // Prepare
    const jwt = await token(claims);

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(reason);
  });

  it('rejects an HS256 token even when a key for it is available', async () => {
    // Prepare: the key resolver would hand out the HMAC secret, so only the algorithm allow-list stops it
    const secret = new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!');
    const keyFn: JWTVerifyGetKey = async (header, tok) => (header.alg === 'HS256' ? secret : getKey(header, tok));
    const jwt = await new SignJWT({ role: 'ADMIN' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(secret);

    // Act
    const err = await rejection(`Bearer ${jwt}`, keyFn);

    // Assess
    expect(err.message).toMatch(/alg/i);
  });

  it('rejects an unsecured token (alg: none)', async () => {
    // Prepare
    const iat = nowS();
    const jwt = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: 'x', role: 'ADMIN', iss: ISSUER, aud: AUDIENCE, iat, exp: iat + 600 })}.`;

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/token rejected/);
  });

  it('rejects a token whose signature was made by another key', async () => {
    // Prepare
    const stranger = await makeKey('ES256'); // same kid as the trusted key, different key material
    const jwt = await token({}, { key: stranger });

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/signature/i);
  });

  it('rejects an expired token', async () => {
    // Prepare
    const iat = nowS() - 1800;
    const jwt = await token({}, { iat, exp: iat + 900 });

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/"exp"/);
  });

  it('rejects a token that is not valid yet (nbf in the future)', async () => {
    // Prepare
    const jwt = await token({}, { nbf: nowS() + 600 });

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/"nbf"/);
  });

  it('rejects a token from another issuer', async () => {
    // Prepare
    const jwt = await token({}, { iss: 'https://evil.test/' });

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/"iss"/);
  });

  it('rejects a token for another audience', async () => {
    // Prepare
    const jwt = await token({}, { aud: 'some-other-api' });

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/"aud"/);
  });

  it('rejects a lifetime over 1 hour', async () => {
    // Prepare
    const iat = nowS();
    const jwt = await token({}, { iat, exp: iat + 3601 });

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/lifetime exceeds 1 hour/);
  });

  it('rejects a token issued 30 days in the future, even with a 1-hour lifetime', async () => {
    // Prepare
    const iat = nowS() + 30 * 24 * 3600;
    const jwt = await token({}, { iat, exp: iat + 3600 });

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/"iat"/);
  });

  it('rejects a token issued just beyond the clock tolerance in the future', async () => {
    // Prepare
    const iat = nowS() + CLOCK_TOLERANCE_S + 60;
    const jwt = await token({}, { iat, exp: iat + 900 });

    // Act
    const err = await rejection(`Bearer ${jwt}`);

    // Assess
    expect(err.message).toMatch(/"iat"/);
  });

  it.each([
    ['a missing header', undefined],
    ['an empty header', ''],
    ['a Basic header', 'Basic dXNlcjpwYXNzd29yZA=='],
    ['"Bearer" alone', 'Bearer '],
    ['a token with spaces', 'Bearer not a token'],
  ])('rejects %s as malformed', async (_what, header) => {
    // Act
    const err = await rejection(header);

    // Assess
    expect(err.message).toMatch(/missing or malformed Authorization header/);
  });

  it('rejects a valid token in a padded header (the WAF keys on the whitespace-compressed header, so padding must not open a second bucket)', async () => {
    // Prepare
    const jwt = await token();

    // Act
    const errors = await Promise.all(
      [` Bearer ${jwt}`, `Bearer ${jwt} `, `Bearer  ${jwt}`, `Bearer\t${jwt}`, `\u00a0Bearer ${jwt}`, `Bearer ${jwt}\u000b`].map((h) =>
        rejection(h),
      ),
    );

    // Assess
    for (const err of errors) expect(err.message).toMatch(/missing or malformed Authorization header/);
    await expect(verifyBearerToken(`Bearer ${jwt}`, getKey)).resolves.toMatchObject({ sub: 'user-1' });
  });

  it('rejects a garbage token that looks like a JWT', async () => {
    // Act
    const err = await rejection('Bearer abc.def.ghi');

    // Assess
    expect(err.message).toMatch(/token rejected/);
  });
});

describe('authorizer context', () => {
  it.each<Caller>([
    { sub: 'u1', role: 'COOPERATIVE', cooperative_id: 'COOP-1', mfi_id: undefined, duties: ['QUALITY_OFFICER', 'MANAGER'] },
    { sub: 'u2', role: 'AGENT', cooperative_id: 'COOP-2', mfi_id: undefined, duties: [] },
    { sub: 'u3', role: 'MFI', cooperative_id: undefined, mfi_id: 'MFI-1', duties: [] },
    { sub: 'u4', role: 'ADMIN', cooperative_id: undefined, mfi_id: undefined, duties: [] },
  ])('round-trips a $role caller through the string-only context', (caller) => {
    // Act
    const ctx = callerToContext(caller);
    const back = callerFromContext(ctx);

    // Assess
    expect(Object.values(ctx).every((v) => typeof v === 'string')).toBe(true);
    expect(back).toEqual(caller);
  });

  it.each([
    ['no context', undefined],
    ['null', null],
    ['an unknown role', { role: 'ROOT', sub: 'x' }],
    ['a role that is not a string', { role: 1 }],
  ])('reads no caller from %s', (_what, ctx) => {
    // Act + Assess
    expect(callerFromContext(ctx as Record<string, unknown> | null | undefined)).toBeNull();
  });

  it('drops unknown duties and falls back to principalId for sub', () => {
    // Act
    const caller = callerFromContext({ principalId: 'p1', role: 'COOPERATIVE', cooperative_id: 'C', duties: 'EXPORTER,ROOT,' });

    // Assess
    expect(caller).toEqual({ sub: 'p1', role: 'COOPERATIVE', cooperative_id: 'C', mfi_id: undefined, duties: ['EXPORTER'] });
  });
});

describe('authorizer handler', () => {
  const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/payments/PAY-2025-000001-01';
  const event = (headers: Record<string, string>) =>
    ({ type: 'REQUEST', methodArn, headers }) as unknown as APIGatewayRequestAuthorizerEvent;

  beforeAll(() => {
    process.env.JWKS_URL = 'https://issuer.test/.well-known/jwks.json';
  });

  it('throws "Unauthorized" for a missing header without fetching keys', async () => {
    // Prepare
    const fetchSpy = jest.spyOn(globalThis, 'fetch').mockRejectedValue(new Error('no network in unit tests'));

    // Act
    const result = authorizer(event({}));

    // Assess
    await expect(result).rejects.toThrow(/^Unauthorized$/);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('throws "Unauthorized" for a Basic header without fetching keys', async () => {
    // Prepare
    const fetchSpy = jest.spyOn(globalThis, 'fetch').mockRejectedValue(new Error('no network in unit tests'));

    // Act
    const result = authorizer(event({ Authorization: 'Basic dXNlcjpwYXNz' }));

    // Assess
    await expect(result).rejects.toThrow(/^Unauthorized$/);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('allows the whole API and passes the caller as context for a valid token (JWKS served by a stubbed fetch)', async () => {
    // Prepare
    const fetchSpy = jest
      .spyOn(globalThis, 'fetch')
      .mockImplementation(async () => new Response(JSON.stringify(jwks), { status: 200, headers: { 'content-type': 'application/json' } }));
    const jwt = await token({ duties: ['MANAGER'] });

    // Act
    const result = await authorizer(event({ authorization: `Bearer ${jwt}` }));

    // Assess
    expect(fetchSpy).toHaveBeenCalledWith(expect.anything(), expect.anything());
    expect(String(fetchSpy.mock.calls[0]![0])).toBe(process.env.JWKS_URL);
    expect(result.principalId).toBe('user-1');
    expect(result.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*' },
    ]);
    expect(result.context).toEqual({ sub: 'user-1', role: 'COOPERATIVE', cooperative_id: 'COOP-1', mfi_id: '', duties: 'MANAGER' });
  });

  it('throws "Unauthorized" (401) for a token issued 30 days in the future', async () => {
    // Prepare (the key set fetched by the previous test is cached; the stub serves it otherwise)
    jest
      .spyOn(globalThis, 'fetch')
      .mockImplementation(async () => new Response(JSON.stringify(jwks), { status: 200, headers: { 'content-type': 'application/json' } }));
    const iat = nowS() + 30 * 24 * 3600;
    const jwt = await token({}, { iat, exp: iat + 3600 });

    // Act
    const result = authorizer(event({ authorization: `Bearer ${jwt}` }));

    // Assess
    await expect(result).rejects.toThrow(/^Unauthorized$/);
  });
});
