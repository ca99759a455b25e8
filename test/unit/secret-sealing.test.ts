import { mkdtempSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { EnvelopeSealer, ensureLocalKeyFile, FileDataKeys, KmsDataKeys } from '../../shared/adapters/secrets/envelope-sealer';
import { secretSealerFromEnv } from '../../shared/composition/outbound-webhooks';
import { isSealedSecret } from '../../shared/domain/secret-sealing';

/** Envelope encryption of outbound webhook secrets: the local key file and KMS behind one sealer. */

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const dir = () => mkdtempSync(join(tmpdir(), 'seal-'));

describe('EnvelopeSealer over the local key file', () => {
  it('creates the key file 0600 once and seals/opens with the context', async () => {
    const path = ensureLocalKeyFile(join(dir(), 'k', 'outbound-secrets.key'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const before = statSync(path).mtimeMs;
    ensureLocalKeyFile(path);
    expect(statSync(path).mtimeMs).toBe(before);
    const sealer = new EnvelopeSealer(new FileDataKeys(path));
    const sealed = await sealer.seal(SECRET, 'whe_A');
    expect(isSealedSecret(sealed)).toBe(true);
    expect(sealed.key_ref).toBe('local');
    expect(JSON.stringify(sealed)).not.toContain(SECRET.slice(6));
    expect(await sealer.open(sealed, 'whe_A')).toBe(SECRET);
    // Two seals of the same secret differ (fresh data key and nonce).
    expect((await sealer.seal(SECRET, 'whe_A')).ciphertext).not.toBe(sealed.ciphertext);
  });

  it('refuses another context, a tampered ciphertext and another key file', async () => {
    const sealer = new EnvelopeSealer(new FileDataKeys(ensureLocalKeyFile(join(dir(), 'a.key'))));
    const sealed = await sealer.seal(SECRET, 'whe_A');
    await expect(sealer.open(sealed, 'whe_B')).rejects.toThrow();
    const ct = Buffer.from(sealed.ciphertext, 'base64');
    ct[0] = ct[0]! ^ 1;
    await expect(sealer.open({ ...sealed, ciphertext: ct.toString('base64') }, 'whe_A')).rejects.toThrow();
    const other = new EnvelopeSealer(new FileDataKeys(ensureLocalKeyFile(join(dir(), 'b.key'))));
    await expect(other.open(sealed, 'whe_A')).rejects.toThrow();
  });

  it('refuses a key file readable by others', async () => {
    const path = join(dir(), 'open.key');
    writeFileSync(path, randomBytes(32).toString('base64'));
    chmodSync(path, 0o644);
    await expect(new EnvelopeSealer(new FileDataKeys(path)).seal(SECRET, 'whe_A')).rejects.toThrow(/readable by others/);
  });

  it('the settings choose KMS or the key file; neither is a clear error', () => {
    expect(() => secretSealerFromEnv({})).toThrow(/OUTBOUND_SECRET_KMS_KEY_ID.*OUTBOUND_SECRET_KEY_FILE/);
    expect(secretSealerFromEnv({ OUTBOUND_SECRET_KEY_FILE: '/x' })).toBeInstanceOf(EnvelopeSealer);
    expect(secretSealerFromEnv({ OUTBOUND_SECRET_KMS_KEY_ID: 'arn:aws:kms:eu-west-1:1:key/k' })).toBeInstanceOf(EnvelopeSealer);
  });
});

describe('EnvelopeSealer over KMS (GenerateDataKey / Decrypt with the endpoint id as encryption context)', () => {
  const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555';
  const kms = mockClient(KMSClient);
  // A stand-in for KMS's own wrapping: the data key under a key only "KMS" holds, bound to the context.
  const kmsMaster = randomBytes(32);
  const wrap = (dk: Buffer, ctx: string) => {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', kmsMaster, iv);
    c.setAAD(Buffer.from(ctx));
    const ct = Buffer.concat([c.update(dk), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), ct]);
  };
  const unwrap = (blob: Buffer, ctx: string) => {
    const d = createDecipheriv('aes-256-gcm', kmsMaster, blob.subarray(0, 12));
    d.setAAD(Buffer.from(ctx));
    d.setAuthTag(blob.subarray(12, 28));
    return Buffer.concat([d.update(blob.subarray(28)), d.final()]);
  };
  beforeEach(() => {
    kms.reset();
    kms.on(GenerateDataKeyCommand).callsFake((input: { EncryptionContext: Record<string, string> }) => {
      const dk = randomBytes(32);
      return {
        Plaintext: new Uint8Array(dk),
        CiphertextBlob: new Uint8Array(wrap(dk, JSON.stringify(input.EncryptionContext))),
        KeyId: KEY,
      };
    });
    kms.on(DecryptCommand).callsFake((input: { CiphertextBlob: Uint8Array; EncryptionContext: Record<string, string> }) => ({
      Plaintext: new Uint8Array(unwrap(Buffer.from(input.CiphertextBlob), JSON.stringify(input.EncryptionContext))),
      KeyId: KEY,
    }));
  });
  afterAll(() => kms.restore());

  it('asks for an AES_256 data key and decrypts with the same key and context', async () => {
    const sealer = new EnvelopeSealer(new KmsDataKeys(KEY, new KMSClient({ region: 'eu-west-1' })));
    const sealed = await sealer.seal(SECRET, 'whe_01');
    expect(sealed.key_ref).toBe(KEY);
    expect(kms.commandCalls(GenerateDataKeyCommand)[0]!.args[0].input).toEqual({
      KeyId: KEY,
      KeySpec: 'AES_256',
      EncryptionContext: { endpoint_id: 'whe_01' },
    });
    expect(await sealer.open(sealed, 'whe_01')).toBe(SECRET);
    expect(kms.commandCalls(DecryptCommand)[0]!.args[0].input).toMatchObject({ KeyId: KEY, EncryptionContext: { endpoint_id: 'whe_01' } });
    await expect(sealer.open(sealed, 'whe_02')).rejects.toThrow();
  });
});
