import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import {
  hashMessage,
  hashTypedData,
  keccak256,
  numberToHex,
  recoverAddress,
  serializeSignature,
  serializeTransaction,
  type Hex,
  type LocalAccount,
  type Signature,
} from 'viem';
import { publicKeyToAddress, toAccount } from 'viem/accounts';

/**
 * The ledger signer on a key that never leaves its key service (AWS KMS `ECC_SECG_P256K1`,
 * SIGN_VERIFY), as a viem account: transactions, messages and typed data are hashed here, the
 * 32-byte digest is signed by the key service (KMS `Sign`, MessageType DIGEST, ECDSA_SHA_256),
 * and the DER signature it answers is turned into an Ethereum one: r and s parsed, s normalised
 * to the lower half of the curve order (EIP-2: the chain refuses a high s), and the recovery id v
 * found by trying both against the key's own address.
 *
 * `digestSignerAccount` works on any `DigestSigner`: `KmsDigestSigner` in AWS; tests use a
 * secp256k1 key producing DER the same way.
 */

/** Signs 32-byte digests with one secp256k1 key held elsewhere. */
export interface DigestSigner {
  /** The public key: an X.509 SubjectPublicKeyInfo (DER, as KMS GetPublicKey answers) or the 65-byte uncompressed point. */
  publicKey(): Promise<Uint8Array>;
  /** An ECDSA signature of `digest` (32 bytes, not hashed again) as DER `SEQUENCE { INTEGER r, INTEGER s }`. */
  signDigest(digest: Uint8Array): Promise<Uint8Array>;
}

/** The order n of secp256k1. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N >> 1n;

/**
 * The uncompressed point (65 bytes, 0x04 ‖ X ‖ Y) of a secp256k1 public key given as SPKI DER or
 * as the point itself. Errors: RangeError when it holds no uncompressed point.
 */
export function uncompressedPoint(key: Uint8Array): Uint8Array {
  const point = key.length === 65 ? key : key.subarray(key.length - 65);
  // In SPKI the point is the BIT STRING's content: 03 42 00 04 ‖ X ‖ Y at the end.
  if (
    point.length !== 65 ||
    point[0] !== 0x04 ||
    (key.length !== 65 && (key[key.length - 66] !== 0x00 || key[key.length - 67] !== 0x42 || key[key.length - 68] !== 0x03))
  ) {
    throw new RangeError('The signer public key is not an uncompressed secp256k1 point');
  }
  return point;
}

/** Reads one DER INTEGER at `at`: its value and the offset after it. */
function derInteger(der: Uint8Array, at: number): { value: bigint; next: number } {
  if (der[at] !== 0x02) throw new RangeError('DER signature: INTEGER expected');
  const len = der[at + 1]!;
  if (len === 0 || len > 33 || at + 2 + len > der.length) throw new RangeError('DER signature: bad INTEGER length');
  const bytes = der.subarray(at + 2, at + 2 + len);
  if (bytes[0]! & 0x80) throw new RangeError('DER signature: negative INTEGER');
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  return { value, next: at + 2 + len };
}

/**
 * r and s of a DER ECDSA signature, s normalised to low-s (s > n/2 becomes n − s).
 * Errors: RangeError for anything but `30 len 02 r 02 s` with 0 < r, s < n.
 */
export function parseDerSignature(der: Uint8Array): { r: bigint; s: bigint } {
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) throw new RangeError('DER signature: SEQUENCE expected');
  const r = derInteger(der, 2);
  const s = derInteger(der, r.next);
  if (s.next !== der.length) throw new RangeError('DER signature: trailing bytes');
  for (const x of [r.value, s.value]) if (x <= 0n || x >= SECP256K1_N) throw new RangeError('DER signature: r or s out of range');
  return { r: r.value, s: s.value > HALF_N ? SECP256K1_N - s.value : s.value };
}

/**
 * A viem account whose signatures come from `signer`. The address is derived from the signer's
 * public key (read once, here). Errors: RangeError for a malformed key or signature; Error when
 * neither recovery id recovers the key's address; the signer's own errors (KMS access, throttling).
 */
export async function digestSignerAccount(signer: DigestSigner): Promise<LocalAccount> {
  const address = publicKeyToAddress(`0x${Buffer.from(uncompressedPoint(await signer.publicKey())).toString('hex')}`);
  const sign = async (hash: Hex): Promise<Signature> => {
    const { r, s } = parseDerSignature(await signer.signDigest(Buffer.from(hash.slice(2), 'hex')));
    const rHex = numberToHex(r, { size: 32 });
    const sHex = numberToHex(s, { size: 32 });
    for (const yParity of [0, 1] as const) {
      const candidate = { r: rHex, s: sHex, yParity };
      if ((await recoverAddress({ hash, signature: candidate })).toLowerCase() === address.toLowerCase())
        return { ...candidate, v: yParity ? 28n : 27n };
    }
    throw new Error("The signer's signature does not recover to its own address");
  };
  return toAccount({
    address,
    async signMessage({ message }) {
      return serializeSignature(await sign(hashMessage(message)));
    },
    async signTransaction(transaction, options) {
      const serializer = options?.serializer ?? serializeTransaction;
      // As viem's own local accounts: blobs are not part of what is signed.
      const signable = transaction.type === 'eip4844' ? { ...transaction, sidecars: false } : transaction;
      const signature = await sign(keccak256(await serializer(signable)));
      return serializer(transaction, signature);
    },
    async signTypedData(typedData) {
      return serializeSignature(await sign(hashTypedData(typedData)));
    },
  });
}

/** A KMS asymmetric key (`ECC_SECG_P256K1`, SIGN_VERIFY) as a DigestSigner: GetPublicKey and Sign (DIGEST, ECDSA_SHA_256). */
class KmsDigestSigner implements DigestSigner {
  constructor(
    private readonly keyId: string,
    private readonly kms: KMSClient = new KMSClient({}),
  ) {}

  async publicKey(): Promise<Uint8Array> {
    const r = await this.kms.send(new GetPublicKeyCommand({ KeyId: this.keyId }));
    if (r.KeySpec && r.KeySpec !== 'ECC_SECG_P256K1') throw new Error(`KMS key ${this.keyId} is ${r.KeySpec}, not ECC_SECG_P256K1`);
    if (!r.PublicKey) throw new Error(`KMS key ${this.keyId} returned no public key`);
    return r.PublicKey;
  }

  async signDigest(digest: Uint8Array): Promise<Uint8Array> {
    const r = await this.kms.send(
      new SignCommand({ KeyId: this.keyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }),
    );
    if (!r.Signature) throw new Error(`KMS key ${this.keyId} returned no signature`);
    return r.Signature;
  }
}

/** The ledger signer account on the KMS key `keyId` (LEDGER_SIGNER_KMS_KEY_ID). */
export function kmsLedgerAccount(keyId: string, kms?: KMSClient): Promise<LocalAccount> {
  return digestSignerAccount(new KmsDigestSigner(keyId, kms));
}
