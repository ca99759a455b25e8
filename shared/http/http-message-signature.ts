/**
 * HTTP Message Signatures (RFC 9421) with Content-Digest (RFC 9530), as pawaPay signs its callbacks
 * (https://docs.pawapay.io/v2/docs/signatures): `Content-Digest: sha-512=:<base64>:` (or sha-256)
 * over the raw body; `Signature-Input: <label>=("@method" "@authority" "@path" "signature-date"
 * "content-digest" "content-type");alg="ecdsa-p256-sha256";keyid="…";created=…;expires=…` and
 * `Signature: <label>=:<base64>:` over the signature base of RFC 9421 §2.5. The public key is
 * pawaPay's (`GET /v2/public-key/http`), configured with the provider's secret.
 *
 * Only what a callback needs is implemented: derived components `@method`, `@authority`, `@path`,
 * `@target-uri`, `@query`, `@scheme`, `@request-target`, plain header fields, and the algorithms
 * ecdsa-p256-sha256, ecdsa-p384-sha384, rsa-pss-sha512, rsa-v1_5-sha256 and ed25519.
 */
import { createHash, createPublicKey, type KeyObject, constants as cryptoConstants, sign, verify } from 'node:crypto';
import { DomainError } from '../domain/errors';

/** The request facts a signature covers. */
export interface SignedRequest {
  method: string;
  /** `host[:port]` as the sender addressed it (the Host header). */
  authority: string;
  /** The path as the sender called it (with any stage prefix), no query. */
  path: string;
  /** Raw query string without `?`, '' when none. */
  query?: string;
  scheme?: 'https' | 'http';
  /** Header fields, lower-case names. */
  headers: Record<string, string>;
  body: string;
}

/** The parsed `Signature-Input` member. */
interface SignatureParams {
  label: string;
  components: string[];
  /** The serialised inner list and parameters, exactly as the signature base's last line needs it. */
  serialised: string;
  alg?: string;
  keyid?: string;
  created?: number;
  expires?: number;
}

/** `Content-Digest` value (RFC 9530) of `body`: `sha-512=:<base64>:` (or sha-256). */
function contentDigest(body: string, alg: 'sha-512' | 'sha-256' = 'sha-512'): string {
  return `${alg}=:${createHash(alg === 'sha-512' ? 'sha512' : 'sha256')
    .update(body, 'utf8')
    .digest('base64')}:`;
}

/** Parses `<label>=(<components>);<params>` (one member; the first when there are several). */
function parseSignatureInput(value: string): SignatureParams {
  const m = /^\s*([a-z*][a-z0-9_\-.*]*)=(\([^)]*\)(?:;[^,]*)?)/i.exec(value);
  if (!m) throw new Error('Signature-Input is not a signature parameters member');
  const label = m[1]!;
  const serialised = m[2]!.trim();
  const inner = /^\(([^)]*)\)/.exec(serialised)![1]!;
  const components = [...inner.matchAll(/"([^"]+)"/g)].map((c) => c[1]!.toLowerCase());
  const params: Record<string, string> = {};
  for (const p of serialised.slice(inner.length + 2).matchAll(/;\s*([a-z]+)=("([^"]*)"|-?\d+)/gi)) params[p[1]!] = p[3] ?? p[2]!;
  const out: SignatureParams = { label, components, serialised };
  if (params.alg !== undefined) out.alg = params.alg;
  if (params.keyid !== undefined) out.keyid = params.keyid;
  if (params.created !== undefined) out.created = Number(params.created);
  if (params.expires !== undefined) out.expires = Number(params.expires);
  return out;
}

/** The value of one covered component. @throws Error when the request lacks it. */
function componentValue(name: string, req: SignedRequest): string {
  switch (name) {
    case '@method':
      return req.method.toUpperCase();
    case '@authority':
      return req.authority.toLowerCase();
    case '@path':
      return req.path;
    case '@query':
      return `?${req.query ?? ''}`;
    case '@scheme':
      return req.scheme ?? 'https';
    case '@target-uri':
      return `${req.scheme ?? 'https'}://${req.authority.toLowerCase()}${req.path}${req.query ? `?${req.query}` : ''}`;
    case '@request-target':
      return `${req.path}${req.query ? `?${req.query}` : ''}`;
    default: {
      if (name.startsWith('@')) throw new Error(`unsupported derived component ${name}`);
      const v = req.headers[name];
      if (v === undefined) throw new Error(`the covered header ${name} is missing`);
      return v.trim().replace(/\s*\r?\n\s*/g, ' ');
    }
  }
}

/** The signature base of RFC 9421 §2.5 for `components`, ending with the `@signature-params` line. */
function signatureBase(req: SignedRequest, components: string[], serialisedParams: string): string {
  const lines = components.map((c) => `"${c}": ${componentValue(c, req)}`);
  lines.push(`"@signature-params": ${serialisedParams}`);
  return lines.join('\n');
}

function algorithmOf(alg: string | undefined, key: KeyObject): string {
  if (alg) return alg;
  if (key.asymmetricKeyType === 'ec')
    return key.asymmetricKeyDetails?.namedCurve === 'secp384r1' ? 'ecdsa-p384-sha384' : 'ecdsa-p256-sha256';
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  return 'rsa-pss-sha512';
}

/** An ECDSA signature in either encoding: r||s (RFC 9421 §3.3.4) or DER (ASN.1, as pawaPay's examples sign). */
function ecdsaVerify(hash: string, data: Buffer, key: KeyObject, sig: Buffer): boolean {
  const raw = sig.length === (hash === 'sha256' ? 64 : 96) && sig[0] !== 0x30;
  if (raw) return verify(hash, data, { key, dsaEncoding: 'ieee-p1363' }, sig);
  try {
    return verify(hash, data, { key, dsaEncoding: 'der' }, sig);
  } catch {
    return verify(hash, data, { key, dsaEncoding: 'ieee-p1363' }, sig);
  }
}

/** Verifies `sig` over `data` with `key` under an RFC 9421 algorithm name. */
function verifyWith(alg: string, key: KeyObject, data: Buffer, sig: Buffer): boolean {
  switch (alg) {
    // RFC 9421 gives ECDSA signatures as r||s; pawaPay's own Node example signs DER (crypto's createSign): both are accepted.
    case 'ecdsa-p256-sha256':
      return ecdsaVerify('sha256', data, key, sig);
    case 'ecdsa-p384-sha384':
      return ecdsaVerify('sha384', data, key, sig);
    case 'rsa-pss-sha512':
      return verify('sha512', data, { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }, sig);
    case 'rsa-v1_5-sha256':
      return verify('sha256', data, key, sig);
    case 'ed25519':
      return verify(null, data, key, sig);
    default:
      throw new Error(`unsupported signature algorithm ${alg}`);
  }
}

/**
 * Verifies a request's `Content-Digest`, `Signature-Input` and `Signature` against `publicKeysPem`
 * (one or more PEM public keys, e.g. the current and the next during a rotation; a signature by
 * any verifies). The covered components must include `content-digest` (so the body is signed),
 * and `expires`, when present, must not be past (`nowSeconds`, with 5 minutes of tolerance).
 * Errors: INVALID_SIGNATURE (401) naming what failed; the body is trusted only after this returns.
 */
export function verifyHttpMessageSignature(req: SignedRequest, publicKeysPem: string[], nowSeconds = Date.now() / 1000): void {
  const rejected = (why: string) => new DomainError('INVALID_SIGNATURE', `HTTP message signature rejected: ${why}.`);
  const digest = req.headers['content-digest'];
  const input = req.headers['signature-input'];
  const signature = req.headers.signature;
  if (!digest || !input || !signature) throw rejected('Content-Digest, Signature-Input and Signature are required');
  const d = /(sha-512|sha-256)=:([A-Za-z0-9+/=]+):/.exec(digest);
  if (!d) throw rejected('Content-Digest has no sha-512 or sha-256 member');
  if (contentDigest(req.body, d[1] as 'sha-512' | 'sha-256') !== `${d[1]}=:${d[2]}:`)
    throw rejected('Content-Digest does not match the body');
  let params: SignatureParams;
  try {
    params = parseSignatureInput(input);
  } catch (err) {
    throw rejected((err as Error).message);
  }
  if (!params.components.includes('content-digest')) throw rejected('the signature does not cover content-digest');
  if (params.expires !== undefined && params.expires + 300 < nowSeconds) throw rejected('the signature expired');
  const s = new RegExp(`(?:^|,)\\s*${params.label.replace(/[.*]/g, '\\$&')}=:([A-Za-z0-9+/=]+):`).exec(signature);
  if (!s) throw rejected(`Signature has no member ${params.label}`);
  let base: string;
  try {
    base = signatureBase(req, params.components, params.serialised);
  } catch (err) {
    throw rejected((err as Error).message);
  }
  const sig = Buffer.from(s[1]!, 'base64');
  for (const pem of publicKeysPem) {
    const key = createPublicKey(pem);
    try {
      if (verifyWith(algorithmOf(params.alg, key), key, Buffer.from(base, 'utf8'), sig)) return;
    } catch (err) {
      if ((err as Error).message.startsWith('unsupported')) throw rejected((err as Error).message);
    }
  }
  throw rejected('no configured key verifies it');
}

/**
 * Signs a request as pawaPay signs (ecdsa-p256-sha256 with a P-256 private key, DER), for
 * the local sandbox and tests: the `Content-Digest`, `Signature-Date`, `Signature-Input` and `Signature` headers to add.
 */
export function signHttpMessage(
  req: Omit<SignedRequest, 'headers'> & { headers: Record<string, string> },
  privateKeyPem: string,
  keyid: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const headers: Record<string, string> = {
    ...req.headers,
    'content-digest': contentDigest(req.body),
    'signature-date': new Date(nowSeconds * 1000).toISOString(),
  };
  const components = ['@method', '@authority', '@path', 'signature-date', 'content-digest', 'content-type'];
  const serialised = `(${components.map((c) => `"${c}"`).join(' ')});alg="ecdsa-p256-sha256";keyid="${keyid}";created=${nowSeconds};expires=${nowSeconds + 60}`;
  const base = signatureBase({ ...req, headers }, components, serialised);
  // DER, as pawaPay's published Node example signs (crypto's createSign); the verifier takes r||s too.
  const sig = sign('sha256', Buffer.from(base, 'utf8'), { key: privateKeyPem, dsaEncoding: 'der' }).toString('base64');
  return {
    'content-digest': headers['content-digest']!,
    'signature-date': headers['signature-date']!,
    'signature-input': `sig-pp=${serialised}`,
    signature: `sig-pp=:${sig}:`,
  };
}
