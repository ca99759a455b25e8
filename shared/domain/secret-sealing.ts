/**
 * Secrets kept at rest (outbound webhook signing secrets): sealed by envelope encryption before
 * they are stored, so an item read from the table does not reveal them. The domain sees a sealed
 * secret as an opaque record and seals or opens it through the `SecretSealer` port; the adapters
 * (shared/adapters/secrets) encrypt with a fresh data key per secret, under a KMS key in AWS and a
 * key file locally.
 */

/** One sealed secret as stored: every field base64 except `alg` and `key_ref`. */
export interface SealedSecret {
  /** `AES-256-GCM`: how `ciphertext` was made with the data key. */
  alg: 'AES-256-GCM';
  /** Which master key wrapped the data key: the KMS key ARN, or `local` for the key file. */
  key_ref: string;
  /** The data key, encrypted under the master key (for the same context). */
  encrypted_key: string;
  /** 12-byte GCM nonce. */
  iv: string;
  ciphertext: string;
  /** 16-byte GCM authentication tag. */
  tag: string;
}

/**
 * Seals and opens secrets bound to a context (for webhook secrets the endpoint id): a sealed
 * secret opens only with the same context, so a sealed value copied onto another record is refused.
 */
export interface SecretSealer {
  /** Seals `plaintext` for `context`. Errors: the key service's (unavailable, denied). */
  seal(plaintext: string, context: string): Promise<SealedSecret>;
  /** The plaintext of `sealed`. Errors: throws when the context, key or ciphertext does not match. */
  open(sealed: SealedSecret, context: string): Promise<string>;
}

/** True when `x` has the shape of a SealedSecret (a stored attribute map). */
export function isSealedSecret(x: unknown): x is SealedSecret {
  if (typeof x !== 'object' || x === null) return false;
  const s = x as Record<string, unknown>;
  return (
    s.alg === 'AES-256-GCM' && ['key_ref', 'encrypted_key', 'iv', 'ciphertext', 'tag'].every((k) => typeof s[k] === 'string' && s[k] !== '')
  );
}
