import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import type { SealedSecret, SecretSealer } from '../../domain/secret-sealing';

/**
 * Envelope encryption of secrets at rest. `EnvelopeSealer` is the one code path: a fresh 256-bit
 * data key per secret encrypts it with AES-256-GCM here in the function (the context is the GCM
 * additional data too), and only the data key, wrapped by a master key, is stored beside the
 * ciphertext. The master key is behind a `DataKeyService`:
 * - `KmsDataKeys` (AWS): GenerateDataKey / Decrypt with the KMS key and the encryption context
 *   `{endpoint_id: <context>}` (so the key policy and CloudTrail see which record is opened);
 * - `FileDataKeys` (local): a 32-byte key in a file of LOCAL_DATA_DIR (mode 0600) wraps the data
 *   key with AES-256-GCM, the context as additional data.
 */

/** Wraps and unwraps data keys under a master key, bound to a context. */
export interface DataKeyService {
  /** The master key's reference stored with each sealed secret. */
  readonly keyRef: string;
  /** A fresh 32-byte data key and its wrapped form. */
  generate(context: string): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }>;
  /** The data key inside `wrapped`. Errors: throws on a wrong context or key. */
  unwrap(wrapped: Uint8Array, context: string): Promise<Uint8Array>;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64');

/** AES-256-GCM of `plaintext` under `key` with `aad`: `{iv, ciphertext, tag}`. */
function gcmSeal(key: Uint8Array, plaintext: Uint8Array, aad: string): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([c.update(plaintext), c.final()]);
  return { iv, ciphertext, tag: c.getAuthTag() };
}

/** The plaintext of an AES-256-GCM box. Errors: throws when the key, aad or box does not authenticate. */
function gcmOpen(key: Uint8Array, box: { iv: Buffer; ciphertext: Buffer; tag: Buffer }, aad: string): Buffer {
  const d = createDecipheriv('aes-256-gcm', key, box.iv);
  d.setAAD(Buffer.from(aad, 'utf8'));
  d.setAuthTag(box.tag);
  return Buffer.concat([d.update(box.ciphertext), d.final()]);
}

/** The envelope: one data key per secret, wrapped by `keys`; the context binds both layers. */
export class EnvelopeSealer implements SecretSealer {
  constructor(private readonly keys: DataKeyService) {}

  async seal(plaintext: string, context: string): Promise<SealedSecret> {
    const dk = await this.keys.generate(context);
    try {
      const box = gcmSeal(dk.plaintext, Buffer.from(plaintext, 'utf8'), context);
      return {
        alg: 'AES-256-GCM',
        key_ref: this.keys.keyRef,
        encrypted_key: b64(dk.wrapped),
        iv: b64(box.iv),
        ciphertext: b64(box.ciphertext),
        tag: b64(box.tag),
      };
    } finally {
      dk.plaintext.fill(0);
    }
  }

  async open(sealed: SealedSecret, context: string): Promise<string> {
    if (sealed.alg !== 'AES-256-GCM') throw new Error(`Unknown sealed-secret algorithm ${String(sealed.alg)}`);
    const key = await this.keys.unwrap(unb64(sealed.encrypted_key), context);
    try {
      return gcmOpen(key, { iv: unb64(sealed.iv), ciphertext: unb64(sealed.ciphertext), tag: unb64(sealed.tag) }, context).toString('utf8');
    } finally {
      key.fill(0);
    }
  }
}

/** The KMS encryption context of a sealed webhook secret. */
const encryptionContextOf = (context: string): Record<string, string> => ({ endpoint_id: context });

/** Data keys from AWS KMS (GenerateDataKey AES_256 / Decrypt), bound to the encryption context. */
export class KmsDataKeys implements DataKeyService {
  constructor(
    readonly keyRef: string,
    private readonly kms: KMSClient = new KMSClient({}),
  ) {}

  async generate(context: string): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }> {
    const r = await this.kms.send(
      new GenerateDataKeyCommand({ KeyId: this.keyRef, KeySpec: 'AES_256', EncryptionContext: encryptionContextOf(context) }),
    );
    if (!r.Plaintext || !r.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key');
    return { plaintext: r.Plaintext, wrapped: r.CiphertextBlob };
  }

  async unwrap(wrapped: Uint8Array, context: string): Promise<Uint8Array> {
    const r = await this.kms.send(
      new DecryptCommand({ KeyId: this.keyRef, CiphertextBlob: wrapped, EncryptionContext: encryptionContextOf(context) }),
    );
    if (!r.Plaintext) throw new Error('KMS Decrypt returned no key');
    return r.Plaintext;
  }
}

/**
 * Creates the local master key file (32 random bytes, base64) with mode 0600 unless it exists;
 * returns its path. Called by the local stack at start.
 */
export function ensureLocalKeyFile(path: string): string {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  }
  chmodSync(path, 0o600);
  return path;
}

/**
 * Data keys wrapped by a local master key file (32 bytes, base64). Errors: throws when the file is
 * missing, not 32 bytes, or readable by anyone but its owner (mode other than 0600/0400).
 */
export class FileDataKeys implements DataKeyService {
  readonly keyRef = 'local';
  private master: Buffer | undefined;

  constructor(private readonly path: string) {}

  private key(): Buffer {
    if (this.master) return this.master;
    const mode = statSync(this.path).mode & 0o077;
    if (mode !== 0) throw new Error(`The secret key file ${this.path} is readable by others (chmod 600 it)`);
    const key = Buffer.from(readFileSync(this.path, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`The secret key file ${this.path} does not hold a 32-byte base64 key`);
    this.master = key;
    return key;
  }

  async generate(context: string): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array }> {
    const plaintext = randomBytes(32);
    const box = gcmSeal(this.key(), plaintext, context);
    return { plaintext, wrapped: Buffer.concat([box.iv, box.tag, box.ciphertext]) };
  }

  async unwrap(wrapped: Uint8Array, context: string): Promise<Uint8Array> {
    const w = Buffer.from(wrapped);
    return gcmOpen(this.key(), { iv: w.subarray(0, 12), tag: w.subarray(12, 28), ciphertext: w.subarray(28) }, context);
  }
}
