import { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { secp256k1 } from '@noble/curves/secp256k1';
import { mockClient } from 'aws-sdk-client-mock';
import { hashMessage, keccak256, parseTransaction, recoverMessageAddress, recoverTransactionAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { kmsLedgerAccount, parseDerSignature, SECP256K1_N, uncompressedPoint } from '../../shared/adapters/ledger/kms-signer';

/**
 * The KMS ledger signer's adapter (KMS mocked): the SPKI public key gives the address, KMS's DER
 * signature is parsed, a high s is normalised to low-s, and v is recovered against the key's
 * address, so what it signs recovers to that address and the chain accepts it (EIP-2).
 */

const PRIV = secp256k1.utils.randomPrivateKey();
const ADDRESS = privateKeyToAccount(`0x${Buffer.from(PRIV).toString('hex')}`).address;
const KEY_ID = 'arn:aws:kms:eu-west-1:123456789012:key/ledger-signer';
/** X.509 SubjectPublicKeyInfo of a secp256k1 point, as KMS GetPublicKey answers it. */
const SPKI_PREFIX = Buffer.from('3056301006072a8648ce3d020106052b8104000a034200', 'hex');
const spki = (point: Uint8Array) => new Uint8Array(Buffer.concat([SPKI_PREFIX, Buffer.from(point)]));

/** DER `SEQUENCE { INTEGER r, INTEGER s }` (minimal, with a 0 byte before a set top bit). */
function der(r: bigint, s: bigint): Uint8Array {
  const int = (x: bigint) => {
    let b = Buffer.from(x.toString(16).padStart(64, '0'), 'hex');
    while (b.length > 1 && b[0] === 0 && !(b[1]! & 0x80)) b = b.subarray(1);
    if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
    return Buffer.concat([Buffer.from([0x02, b.length]), b]);
  };
  const body = Buffer.concat([int(r), int(s)]);
  return new Uint8Array(Buffer.concat([Buffer.from([0x30, body.length]), body]));
}

describe('KMS ledger signer (DER parsing, low-s, v recovery)', () => {
  const kms = mockClient(KMSClient);
  /** 'high': answer the high-s twin of each signature, as KMS may; 'low': the low-s one. */
  let mode: 'high' | 'low' = 'high';
  const signed: bigint[] = [];
  beforeEach(() => {
    kms.reset();
    signed.length = 0;
    kms.on(GetPublicKeyCommand).resolves({
      KeyId: KEY_ID,
      KeySpec: 'ECC_SECG_P256K1',
      KeyUsage: 'SIGN_VERIFY',
      PublicKey: spki(secp256k1.getPublicKey(PRIV, false)),
    });
    kms.on(SignCommand).callsFake((input: { Message: Uint8Array }) => {
      const sig = secp256k1.sign(input.Message, PRIV, { lowS: true });
      const s = mode === 'high' ? SECP256K1_N - sig.s : sig.s;
      signed.push(s);
      return { KeyId: KEY_ID, Signature: der(sig.r, s), SigningAlgorithm: 'ECDSA_SHA_256' };
    });
  });
  afterAll(() => kms.restore());

  it('derives the address from the SPKI public key', async () => {
    const account = await kmsLedgerAccount(KEY_ID, new KMSClient({ region: 'eu-west-1' }));
    expect(account.address).toBe(ADDRESS);
    expect(kms.commandCalls(GetPublicKeyCommand)[0]!.args[0].input).toEqual({ KeyId: KEY_ID });
  });

  it('signs the digest with KMS (DIGEST, ECDSA_SHA_256) and normalises a high s', async () => {
    const account = await kmsLedgerAccount(KEY_ID, new KMSClient({ region: 'eu-west-1' }));
    const sigs: Hex[] = [];
    for (const message of ['one', 'two', 'three', 'four', 'five', 'six']) {
      const sig = await account.signMessage({ message });
      sigs.push(sig);
      expect(await recoverMessageAddress({ message, signature: sig })).toBe(ADDRESS);
      const call = kms.commandCalls(SignCommand).at(-1)!.args[0].input;
      expect(call).toMatchObject({ KeyId: KEY_ID, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
      expect(Buffer.from(call.Message!).toString('hex')).toBe(hashMessage(message).slice(2));
      const s = BigInt(`0x${sig.slice(66, 130)}`);
      expect(s <= SECP256K1_N / 2n).toBe(true);
    }
    // KMS answered a high s every time; every signature passed on is low-s with v 27 or 28.
    expect(signed.length).toBe(6);
    expect(signed.every((s) => s > SECP256K1_N / 2n)).toBe(true);
    expect(sigs.every((x) => ['1b', '1c'].includes(x.slice(130)))).toBe(true);
  });

  it("signs a transaction that recovers to the key's address, with a low s", async () => {
    const account = await kmsLedgerAccount(KEY_ID, new KMSClient({ region: 'eu-west-1' }));
    for (const m of ['high', 'low'] as const) {
      mode = m;
      const raw = await account.signTransaction!({
        type: 'eip1559',
        chainId: 31337,
        nonce: 7,
        to: '0x000000000000000000000000000000000000dEaD',
        value: 1n,
        gas: 21000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1n,
      });
      expect(await recoverTransactionAddress({ serializedTransaction: raw as Hex & `0x02${string}` })).toBe(ADDRESS);
      const tx = parseTransaction(raw);
      expect(BigInt(tx.s!) <= SECP256K1_N / 2n).toBe(true);
      expect(keccak256(raw)).toMatch(/^0x[0-9a-f]{64}$/);
    }
    mode = 'high';
  });

  it('refuses malformed DER and public keys', () => {
    expect(() => parseDerSignature(new Uint8Array([0x30, 0x02, 0x02, 0x00]))).toThrow(RangeError);
    expect(() => parseDerSignature(der(0n, 1n))).toThrow(/out of range/);
    expect(() => parseDerSignature(der(1n, SECP256K1_N))).toThrow(/out of range/);
    const good = der(5n, SECP256K1_N - 3n);
    expect(parseDerSignature(good)).toEqual({ r: 5n, s: 3n });
    expect(() => parseDerSignature(new Uint8Array([...good, 0]))).toThrow(RangeError);
    expect(() => uncompressedPoint(new Uint8Array(33))).toThrow(RangeError);
    const point = secp256k1.getPublicKey(PRIV, false);
    expect(uncompressedPoint(spki(point))).toEqual(point);
  });

  it('refuses a key that is not secp256k1', async () => {
    kms.on(GetPublicKeyCommand).resolves({ KeyId: KEY_ID, KeySpec: 'ECC_NIST_P256', PublicKey: spki(secp256k1.getPublicKey(PRIV, false)) });
    await expect(kmsLedgerAccount(KEY_ID, new KMSClient({ region: 'eu-west-1' }))).rejects.toThrow(/not ECC_SECG_P256K1/);
  });

  it('fails when the signature recovers to another address (a wrong key behind the id)', async () => {
    const other = secp256k1.utils.randomPrivateKey();
    kms.on(SignCommand).callsFake((input: { Message: Uint8Array }) => {
      const sig = secp256k1.sign(input.Message, other);
      return { Signature: der(sig.r, sig.s) };
    });
    const account = await kmsLedgerAccount(KEY_ID, new KMSClient({ region: 'eu-west-1' }));
    await expect(account.signMessage({ message: 'x' })).rejects.toThrow(/does not recover/);
  });
});
