import { createHash } from 'node:crypto';
import { BaseError, ContractFunctionRevertedError, createPublicClient, createWalletClient, http, type Abi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { fundAccount } from '../../infra/ledger/deploy';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { buildAnchorTree } from '../../shared/domain/anchor-tree';
import { anchorLeafHash, type AuditHead } from '../../shared/domain/anchoring';
import { localStack } from '../support/api';

/**
 * The AuditAnchor contract (docs/api/anchoring.md#anchoring-of-the-audit-log) on the local stack's hardhat node, with a deployment of
 * its own made by a fresh key: the trees built by shared/domain/anchoring.ts verify on chain with
 * OpenZeppelin's MerkleProof, a rewritten head does not, and a root is anchored once, by the
 * anchorer role only.
 */
const CHAIN_ID = 31337;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('AuditAnchor on the local chain', () => {
  let rpcUrl: string;
  let address: Hex;
  let abi: Abi;
  let anchorerKey: Hex;
  const client = () => createPublicClient({ chain: ledgerChain(CHAIN_ID, rpcUrl), transport: http(rpcUrl), pollingInterval: 100 });
  const wallet = (key: Hex) =>
    createWalletClient({ account: privateKeyToAccount(key), chain: ledgerChain(CHAIN_ID, rpcUrl), transport: http(rpcUrl) });
  const isAnchoredHead = (root: Hex, proof: Hex[], h: AuditHead) =>
    client().readContract({
      address,
      abi,
      functionName: 'isAnchoredHead',
      args: [root, proof, h.batch_id, BigInt(h.sequence_number), `0x${h.hash}`],
    });
  /** The custom error name a call reverts with. */
  const revertOf = async (key: Hex, root: Hex, count: number): Promise<string | undefined> => {
    try {
      await client().simulateContract({ account: privateKeyToAccount(key), address, abi, functionName: 'anchor', args: [root, count] });
      return undefined;
    } catch (err) {
      const reverted = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null;
      return reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : String(err);
    }
  };

  beforeAll(async () => {
    rpcUrl = localStack().endpoints.ledger!;
    anchorerKey = generatePrivateKey();
    await fundAccount(rpcUrl, privateKeyToAccount(anchorerKey).address, 10n ** 20n);
    const artifact = (await compileContracts()).AuditAnchor;
    abi = artifact.abi as Abi;
    const hash = await wallet(anchorerKey).deployContract({ abi, bytecode: artifact.bytecode });
    const receipt = await client().waitForTransactionReceipt({ hash });
    address = receipt.contractAddress!;
  });

  it('anchors one root for 50 batches; every head verifies on chain with its proof, a rewritten one does not', async () => {
    const heads: AuditHead[] = Array.from({ length: 50 }, (_, i) => ({
      batch_id: `BATCH-2026-${String(i + 1).padStart(6, '0')}`,
      sequence_number: (i % 6) + 2,
      hash: sha(`head ${i}`),
    }));
    const tree = buildAnchorTree(heads);
    const first = heads[0]!;
    expect(await isAnchoredHead(tree.root, tree.proofs.get(first.batch_id)!.proof, first)).toBe(false); // not anchored yet

    const hash = await wallet(anchorerKey).writeContract({ address, abi, functionName: 'anchor', args: [tree.root, heads.length] });
    const receipt = await client().waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    process.stdout.write(`anchor of ${heads.length} heads: ${receipt.gasUsed} gas (${Number(receipt.gasUsed) / heads.length} per head)\n`);
    expect(await client().readContract({ address, abi, functionName: 'anchoredAtBlock', args: [tree.root] })).toBe(receipt.blockNumber);

    for (const h of heads) expect(await isAnchoredHead(tree.root, tree.proofs.get(h.batch_id)!.proof, h)).toBe(true);
    const p = tree.proofs.get(heads[7]!.batch_id)!.proof;
    expect(await isAnchoredHead(tree.root, p, { ...heads[7]!, hash: sha('a rewritten payout entry') })).toBe(false);
    expect(await isAnchoredHead(tree.root, p, { ...heads[7]!, sequence_number: heads[7]!.sequence_number + 1 })).toBe(false);
    expect(
      await client().readContract({
        address,
        abi,
        functionName: 'headLeaf',
        args: [first.batch_id, BigInt(first.sequence_number), `0x${first.hash}`],
      }),
    ).toBe(anchorLeafHash(first));
  });

  it('a root is anchored once, never empty, and only by the anchorer role', async () => {
    const tree = buildAnchorTree([{ batch_id: 'BATCH-2026-999001', sequence_number: 2, hash: sha('once') }]);
    await client().waitForTransactionReceipt({
      hash: await wallet(anchorerKey).writeContract({ address, abi, functionName: 'anchor', args: [tree.root, 1] }),
    });
    expect(await revertOf(anchorerKey, tree.root, 1)).toBe('AlreadyAnchored');
    expect(await revertOf(anchorerKey, `0x${'00'.repeat(32)}`, 1)).toBe('EmptyAnchor');
    const stranger = generatePrivateKey();
    expect(await revertOf(stranger, buildAnchorTree([{ batch_id: 'BATCH-2026-999002', sequence_number: 2, hash: sha('x') }]).root, 1)).toBe(
      'AccessControlUnauthorizedAccount',
    );
  });
});
