import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { ensureLocalKeyFile } from '../../shared/adapters/secrets/envelope-sealer';
import { repoRoot } from '../../shared/runtime/paths';

/**
 * Local development identities, kept in LOCAL_DATA_DIR across restarts (docs/architecture.md#the-local-stack):
 * the token issuer's ES256 key pair (its public half is served as the local JWKS) and the ledger
 * signer key, and the master key of outbound webhook secrets. These are development values only;
 * in AWS the issuer is configured by JWKS URL, the ledger signer is a KMS key that signs in KMS,
 * and outbound webhook secrets are sealed under a KMS key.
 */

/** Issuer and audience of local tokens (the local authorizer is configured with them). */
export const LOCAL_JWT_ISSUER = 'https://coffee-trace.local/issuer';
export const LOCAL_JWT_AUDIENCE = 'coffee-trace-api';

/** Documented development webhook secrets (README.md#configuration); override with env vars. */
export const DEV_PAYOUT_WEBHOOK_SECRET = 'whsec_Y29mZmVlLXRyYWNlLWxvY2FsLXBheW91dC13ZWJob29rLXNlY3JldA==';
export const DEV_CHAIN_WEBHOOK_SECRET = 'whsec_Y29mZmVlLXRyYWNlLWxvY2FsLWNoYWluLXdlYmhvb2stc2VjcmV0';
/** Development API key of the local national farmer registry (MAAIF) sandbox. */
export const DEV_MAAIF_API_KEY = 'maaif_dev_key_local_only';
/** Development credentials of the local EU Information System sandbox. */
export const DEV_EUDR_CREDENTIALS = { username: 'dev-importer', authKey: 'dev-eudr-auth-key-local-only', clientId: 'eudr-test' };
/** Development credentials of the local payout-provider sandbox. */
export const DEV_PROVIDER_CREDENTIALS = { api_key: 'sandbox_key_local', api_secret: 'sandbox_secret_local_only' };
/** The local pawaPay sandbox's API token (docs/api/payouts.md#pawapay). */
export const DEV_PAWAPAY_API_TOKEN = 'pawapay_sandbox_token_local_only';

/** LOCAL_DATA_DIR, default `.local/` in the repository. */
export function localDataDir(): string {
  const dir = resolve(process.env.LOCAL_DATA_DIR ?? join(repoRoot(), '.local'));
  mkdirSync(dir, { recursive: true });
  return dir;
}

interface StoredIssuerKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

/** The local issuer key, created on first use. */
async function issuerKey(dataDir = localDataDir()): Promise<StoredIssuerKey> {
  const file = join(dataDir, 'dev-issuer-key.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as StoredIssuerKey;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `local-${randomBytes(4).toString('hex')}`;
  const stored: StoredIssuerKey = {
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
  };
  writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  return stored;
}

/** The JWKS document of the local issuer. */
export async function localJwks(dataDir = localDataDir()): Promise<{ keys: JWK[] }> {
  return { keys: [(await issuerKey(dataDir)).publicJwk] };
}

export interface DevTokenClaims {
  role: 'COOPERATIVE' | 'AGENT' | 'MFI' | 'ADMIN';
  sub?: string;
  cooperative_id?: string;
  mfi_id?: string;
  duties?: string[];
}

/** Signs a local token (ES256, at most 1 hour). */
export async function signDevToken(claims: DevTokenClaims, ttlSeconds = 3600, dataDir = localDataDir()): Promise<string> {
  const key = await issuerKey(dataDir);
  const { sub, ...rest } = claims;
  return new SignJWT({ ...rest })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
    .setSubject(sub ?? `${claims.role.toLowerCase()}-${claims.cooperative_id ?? claims.mfi_id ?? 'dev'}`)
    .setIssuer(LOCAL_JWT_ISSUER)
    .setAudience(LOCAL_JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${Math.min(ttlSeconds, 3600)}s`)
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

/** The local ledger signer key (hex), created on first use. */
export function ledgerSignerKey(dataDir = localDataDir()): `0x${string}` {
  const file = join(dataDir, 'dev-ledger-signer.key');
  if (!existsSync(file)) writeFileSync(file, `0x${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  return readFileSync(file, 'utf8').trim() as `0x${string}`;
}

/**
 * The local master key of outbound webhook secrets (`outbound-secrets.key` in the data dir, 32
 * random bytes, mode 0600), created on first start; returns its path (OUTBOUND_SECRET_KEY_FILE).
 */
export function outboundSecretKeyFile(dataDir = localDataDir()): string {
  return ensureLocalKeyFile(join(dataDir, 'outbound-secrets.key'));
}

/** A dev key kept in `file` of the data dir, created on first use. */
function devKey(dataDir: string, file: string): `0x${string}` {
  const path = join(dataDir, file);
  if (!existsSync(path)) writeFileSync(path, `0x${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  return readFileSync(path, 'utf8').trim() as `0x${string}`;
}

/**
 * The local buyer's key (created on first use): the local stack funds it with ETH and TestUSDC,
 * and `npm run buyer-pay` pays purchase orders into the lending vault from it.
 */
export function devBuyerKey(dataDir = localDataDir()): `0x${string}` {
  return devKey(dataDir, 'dev-buyer.key');
}

/**
 * The local on-ramp's key (created on first use): holds MINTER_ROLE on the local TestUSDC, so the
 * on-ramp sandbox delivers USDC by minting it.
 */
export function devOnRampKey(dataDir = localDataDir()): `0x${string}` {
  return devKey(dataDir, 'dev-onramp.key');
}

/** TestUSDC minted to the local buyer at start: 10 000 000 USDC (micro-USDC). */
export const DEV_BUYER_USDC_MICRO = 10_000_000n * 1_000_000n;
