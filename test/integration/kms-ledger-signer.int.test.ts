import { secp256k1 } from '@noble/curves/secp256k1';
import { createPublicClient, http, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount } from '../../infra/ledger/deploy';
import { startHardhatNode, type HardhatNode } from '../../infra/local/hardhat-node';
import { EvmLedger, ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { digestSignerAccount, SECP256K1_N, type DigestSigner } from '../../shared/adapters/ledger/kms-signer';
import { tokenIdForBatch } from '../../shared/domain/ids';

/**
 * The ledger signer that signs with a key service (KMS in AWS), tested against a local signer
 * behind the same DigestSigner port: a secp256k1 key that, like KMS, signs bare digests and
 * answers DER signatures with whatever s ECDSA gives (high s half the time). The EvmLedger signs
 * through that account; a local hardhat chain must accept its transactions (EIP-2 refuses a high
 * s) and they must recover to the key's address.
 */

const CHAIN_ID = 31337;
/** The token of BATCH-2026-000077. */
const TOKEN = tokenIdForBatch(2026, 77);

/** DER `SEQUENCE { INTEGER r, INTEGER s }`, as KMS answers (noble's encoder). */
class LocalDigestSigner implements DigestSigner {
  highS = 0;
  constructor(private readonly key: Uint8Array) {}
  async publicKey() {
    return secp256k1.getPublicKey(this.key, false);
  }
  async signDigest(digest: Uint8Array) {
    const sig = secp256k1.sign(digest, this.key, { lowS: false });
    if (sig.s > SECP256K1_N / 2n) this.highS++;
    return sig.toDERRawBytes();
  }
}

describe('the KMS-signing ledger account on a local chain', () => {
  let node: HardhatNode;
  const key = secp256k1.utils.randomPrivateKey();
  const keyHex = toHex(key) as Hex;
  const expected = privateKeyToAccount(keyHex).address;
  const signer = new LocalDigestSigner(key);
  let ledger: EvmLedger;

  beforeAll(async () => {
    node = await startHardhatNode();
    try {
      await fundAccount(node.rpcUrl, expected, 10n ** 21n);
      // The contracts grant their roles to the deployer: the key whose digests the account signs.
      const addresses = await deployContracts({
        rpcUrl: node.rpcUrl,
        chainId: CHAIN_ID,
        deployerKey: keyHex,
        artifacts: await compileContracts(),
      });
      ledger = new EvmLedger({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, signerAccount: await digestSignerAccount(signer), ...addresses });
    } catch (err) {
      await node.stop();
      throw err;
    }
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
  });

  it("has the key's address and its transactions are mined and recover to it, high s or not", async () => {
    expect(ledger.signerAddress).toBe(expected);
    const client = createPublicClient({ chain: ledgerChain(CHAIN_ID, node.rpcUrl), transport: http(node.rpcUrl) });
    const { txHash: mint } = await ledger.mintBatchToken({
      tokenId: TOKEN,
      batchId: 'BATCH-2026-000077',
      auditHash: keccak256(toHex('kms')),
    });
    expect((await ledger.waitForReceipt(mint, 10_000))?.status).toBe('success');
    const hashes: Hex[] = [mint];
    // Enough signatures that the signer's raw s was high for some of them (each is, with probability 1/2).
    for (let i = 0; i < 12; i++) {
      const { txHash } = await ledger.recordStage({
        tokenId: TOKEN,
        stage: 'MILLED',
        evidenceCid: `cid-${i}`,
        auditHash: keccak256(toHex(`m${i}`)),
      });
      hashes.push(txHash);
    }
    for (const h of hashes) {
      const receipt = await ledger.waitForReceipt(h, 10_000);
      expect(receipt?.status).toBe('success');
      // `from` is the address the chain recovered from the signature.
      const tx = await client.getTransaction({ hash: h });
      expect(tx.from.toLowerCase()).toBe(expected.toLowerCase());
      expect(BigInt(tx.s) <= SECP256K1_N / 2n).toBe(true);
    }
    expect(signer.highS).toBeGreaterThan(0);
    expect(await ledger.batchIdOfToken(TOKEN)).toBe('BATCH-2026-000077');
  });
});
