import {
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  encodeFunctionData,
  getAddress,
  http,
  keccak256,
  parseEventLogs,
  toHex,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../infra/ledger/compile';
import { deployContracts, fundAccount, type DeployedContracts } from '../../infra/ledger/deploy';
import { startHardhatNode, type HardhatNode } from '../../infra/local/hardhat-node';
import { batchTokenAbi, lendingVaultAbi } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { formatBatchId, tokenIdForBatch } from '../../shared/domain/ids';

/**
 * BatchToken's storage (docs/ledger.md#batchtoken-storage) on a hardhat node of its own: minted
 * ids are bits, the tokens of a chunk of 256 ids minted to its first recipient store no owner of
 * their own, and the batch id is derived from the token id. ERC-721 must behave exactly as before:
 * owners and balances across a chunk boundary, approvals and transfers with OpenZeppelin's checks
 * and errors, a token minted to another address inside a chunk, a contract recipient asked per
 * token, replays refused.
 */

const CHAIN_ID = 31337;
const YEAR = 2030;
const hash = (s: string): Hex => keccak256(toHex(s));

let node: HardhatNode;
let contracts: DeployedContracts;
/** The minter (deployer); B, C, D: plain accounts. */
const keys = { minter: generatePrivateKey(), b: generatePrivateKey(), c: generatePrivateKey(), d: generatePrivateKey() };
const address = (k: keyof typeof keys) => privateKeyToAccount(keys[k]).address;

beforeAll(async () => {
  node = await startHardhatNode();
  try {
    const artifacts = await compileContracts();
    for (const k of Object.keys(keys) as Array<keyof typeof keys>) await fundAccount(node.rpcUrl, address(k), 10n ** 21n);
    contracts = await deployContracts({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, deployerKey: keys.minter, artifacts });
  } catch (err) {
    await node.stop();
    throw err;
  }
}, 90_000);

afterAll(async () => {
  await node?.stop();
});

const chain = () => ledgerChain(CHAIN_ID, node.rpcUrl);
const reader = () => createPublicClient({ chain: chain(), transport: http(node.rpcUrl), pollingInterval: 50 });
const errorsAbi = batchTokenAbi;

/** Sends `data` to the BatchToken from `from`; the automining node refuses a reverting transaction at once. */
async function send(from: keyof typeof keys, data: Hex): Promise<TransactionReceipt> {
  const wallet = createWalletClient({ account: privateKeyToAccount(keys[from]), chain: chain(), transport: http(node.rpcUrl) });
  const tx = await wallet.sendTransaction({ to: contracts.batchTokenAddress, data, gas: 5_000_000n });
  return reader().waitForTransactionReceipt({ hash: tx });
}
/**
 * The error a transaction was refused with, decoded with the BatchToken's and the vault's ABIs from
 * the node's answer (the automining node refuses a reverting transaction before mining it).
 */
async function refusal(sent: Promise<unknown>): Promise<{ errorName: string; args?: readonly unknown[] }> {
  const err = await sent.then(
    () => {
      throw new Error('the transaction was not refused');
    },
    (e: Error) => e,
  );
  const data = /return data: (0x[0-9a-fA-F]*)/.exec(err.message)?.[1];
  if (!data) throw err;
  const { errorName, args } = decodeErrorResult({ abi: [...batchTokenAbi, ...lendingVaultAbi], data: data as Hex });
  return { errorName, args };
}
const read = <F extends 'ownerOf' | 'balanceOf' | 'getApproved' | 'batchIdOf'>(functionName: F, arg: bigint | Hex) =>
  reader().readContract({ address: contracts.batchTokenAddress, abi: batchTokenAbi, functionName, args: [arg] as never });
const record = (tokenId: bigint) => ({ tokenId, batchId: batchIdOf(tokenId), auditHash: hash(String(tokenId)) });
/** The batch id `tokenId` stands for (shared/domain/ids.ts, the other way round). */
const batchIdOf = (tokenId: bigint) => formatBatchId(Number(tokenId / 10n ** 12n), Number(tokenId % 10n ** 12n));
const mintBatch = (to: Hex, tokenIds: bigint[]) =>
  send('minter', encodeFunctionData({ abi: batchTokenAbi, functionName: 'mintBatch', args: [to, tokenIds.map(record)] }));
const mintOne = (to: Hex, tokenId: bigint) =>
  send('minter', encodeFunctionData({ abi: batchTokenAbi, functionName: 'mint', args: [to, tokenId, batchIdOf(tokenId), hash('one')] }));

/** The first token id of a chunk (a multiple of 256) among the batches of YEAR, `k` chunks on. */
function chunkStart(k: number): bigint {
  const base = tokenIdForBatch(YEAR, 0);
  return base + ((256n - (base % 256n)) % 256n) + 256n * BigInt(k);
}

describe('owners and balances across a chunk boundary (ids 256k - 1 and 256k)', () => {
  it('ownerOf, balanceOf, approve and transfers work on both sides as ERC-721; a transfer leaves the chunk to its owner', async () => {
    const boundary = chunkStart(1);
    const last = boundary - 1n; // last id of the chunk before
    const [a, b, c] = [address('minter'), address('b'), address('c')];
    const before = await read('balanceOf', a);
    const mined = await mintBatch(a, [last, boundary, boundary + 1n]);
    expect(parseEventLogs({ abi: batchTokenAbi, eventName: 'Transfer', logs: mined.logs }).map((l) => l.args)).toEqual(
      [last, boundary, boundary + 1n].map((tokenId) => ({ from: '0x0000000000000000000000000000000000000000', to: a, tokenId })),
    );
    expect(await read('ownerOf', last)).toBe(a);
    expect(await read('ownerOf', boundary)).toBe(a);
    expect(await read('balanceOf', a)).toBe(before + 3n);

    // approve + transferFrom by the approved account: the approval is cleared, balances move by one.
    await send('minter', encodeFunctionData({ abi: batchTokenAbi, functionName: 'approve', args: [b, last] }));
    expect(await read('getApproved', last)).toBe(b);
    const moved = await send('b', encodeFunctionData({ abi: batchTokenAbi, functionName: 'transferFrom', args: [a, c, last] }));
    expect(parseEventLogs({ abi: batchTokenAbi, eventName: 'Transfer', logs: moved.logs }).map((l) => l.args)).toEqual([
      { from: a, to: c, tokenId: last },
    ]);
    expect(await read('ownerOf', last)).toBe(c);
    expect(await read('getApproved', last)).toBe('0x0000000000000000000000000000000000000000');
    expect(await read('ownerOf', boundary)).toBe(a);
    expect(await read('balanceOf', a)).toBe(before + 2n);
    expect(await read('balanceOf', c)).toBe(1n);

    // safeTransferFrom by the owner across the boundary; the other tokens of the chunk stay the chunk owner's.
    await send('minter', encodeFunctionData({ abi: batchTokenAbi, functionName: 'safeTransferFrom', args: [a, c, boundary] }));
    expect(await read('ownerOf', boundary)).toBe(c);
    expect(await read('ownerOf', boundary + 1n)).toBe(a);
    expect(await read('balanceOf', c)).toBe(2n);

    // OpenZeppelin's checks, unchanged: a stranger, the old owner, a wrong `from`, the zero address.
    expect(
      await refusal(send('b', encodeFunctionData({ abi: batchTokenAbi, functionName: 'transferFrom', args: [c, b, boundary] }))),
    ).toMatchObject({ errorName: 'ERC721InsufficientApproval' });
    expect(
      await refusal(send('minter', encodeFunctionData({ abi: batchTokenAbi, functionName: 'transferFrom', args: [a, b, boundary] }))),
    ).toMatchObject({ errorName: 'ERC721InsufficientApproval' });
    expect(
      await refusal(send('c', encodeFunctionData({ abi: batchTokenAbi, functionName: 'transferFrom', args: [a, b, boundary] }))),
    ).toMatchObject({ errorName: 'ERC721IncorrectOwner' });
    expect(
      await refusal(
        send(
          'c',
          encodeFunctionData({
            abi: batchTokenAbi,
            functionName: 'transferFrom',
            args: [c, '0x0000000000000000000000000000000000000000', boundary],
          }),
        ),
      ),
    ).toMatchObject({ errorName: 'ERC721InvalidReceiver' });

    // An operator for all of C's tokens moves one back to A; A's chunk ownership is as before.
    await send('c', encodeFunctionData({ abi: batchTokenAbi, functionName: 'setApprovalForAll', args: [b, true] }));
    await send('b', encodeFunctionData({ abi: batchTokenAbi, functionName: 'transferFrom', args: [c, a, boundary] }));
    expect(await read('ownerOf', boundary)).toBe(a);
    expect([await read('balanceOf', a), await read('balanceOf', c)]).toEqual([before + 2n, 1n]);

    // A later mint into the chunk goes to its owner without an owner record of its own.
    await mintOne(a, boundary + 2n);
    expect(await read('ownerOf', boundary + 2n)).toBe(a);
    expect(await read('balanceOf', a)).toBe(before + 3n);
  });

  it('an id never minted has no owner (ERC721NonexistentToken), even inside an owned chunk', async () => {
    const start = chunkStart(1);
    await expect(read('ownerOf', start + 200n)).rejects.toThrow(/ERC721NonexistentToken/);
    await expect(read('getApproved', start + 200n)).rejects.toThrow(/ERC721NonexistentToken/);
    expect(
      await refusal(
        send('minter', encodeFunctionData({ abi: batchTokenAbi, functionName: 'approve', args: [address('b'), start + 200n] })),
      ),
    ).toMatchObject({ errorName: 'ERC721NonexistentToken' });
  });
});

describe('a token minted to another address inside a chunk', () => {
  it('has an owner of its own; the chunk keeps its owner; balances count each', async () => {
    const start = chunkStart(3);
    const [a, d] = [address('minter'), address('d')];
    const beforeA = await read('balanceOf', a);
    await mintBatch(a, [start, start + 1n]); // A owns the chunk
    const mixed = await mintBatch(d, [start + 2n, start + 3n]); // D inside A's chunk (batched)
    expect(parseEventLogs({ abi: batchTokenAbi, eventName: 'Transfer', logs: mixed.logs }).map((l) => l.args.to)).toEqual([d, d]);
    await mintOne(d, start + 4n); // and alone
    await mintOne(a, start + 5n);
    expect(await Promise.all([0n, 1n, 2n, 3n, 4n, 5n].map((i) => read('ownerOf', start + i)))).toEqual([a, a, d, d, d, a]);
    expect(await read('balanceOf', a)).toBe(beforeA + 3n);
    expect(await read('balanceOf', d)).toBe(3n);

    // D's token moves like any other; the chunk's other tokens do not.
    await send('d', encodeFunctionData({ abi: batchTokenAbi, functionName: 'transferFrom', args: [d, a, start + 2n] }));
    expect(await Promise.all([1n, 2n, 3n].map((i) => read('ownerOf', start + i)))).toEqual([a, a, d]);
    expect([await read('balanceOf', a), await read('balanceOf', d)]).toEqual([beforeA + 4n, 2n]);
  });

  it('a contract that does not accept ERC-721 tokens reverts the whole call; a contract recipient is asked for each token', async () => {
    const start = chunkStart(5);
    // The TraceLog has no onERC721Received.
    expect(await refusal(mintBatch(contracts.traceLogAddress, [start, start + 1n]))).toMatchObject({ errorName: 'ERC721InvalidReceiver' });
    expect(await refusal(mintOne(contracts.traceLogAddress, start))).toMatchObject({ errorName: 'ERC721InvalidReceiver' });
    // The LendingVault refuses tokens it did not pull itself (UnexpectedToken).
    expect(await refusal(mintBatch(contracts.lendingVaultAddress, [start + 2n]))).toMatchObject({ errorName: 'UnexpectedToken' });
    expect(await read('batchIdOf', start)).toBe('');
    expect(await refusal(mintBatch('0x0000000000000000000000000000000000000000', [start]))).toMatchObject({
      errorName: 'ERC721InvalidReceiver',
    });

    // A receiver that accepts even token ids only: an odd one anywhere in the call reverts it all.
    const receiver = await deployEvenReceiver();
    const even = start % 2n === 0n ? start : start + 1n;
    expect(await refusal(mintBatch(receiver, [even, even + 1n]))).toEqual({ errorName: 'ERC721InvalidReceiver', args: [receiver] });
    expect(await read('batchIdOf', even)).toBe('');
    const accepted = await mintBatch(receiver, [even, even + 2n]);
    expect(parseEventLogs({ abi: batchTokenAbi, eventName: 'BatchMinted', logs: accepted.logs })).toHaveLength(2);
    expect([await read('ownerOf', even), await read('ownerOf', even + 2n), await read('balanceOf', receiver)]).toEqual([
      receiver,
      receiver,
      2n,
    ]);
    expect(await refusal(mintOne(receiver, even + 3n))).toEqual({ errorName: 'ERC721InvalidReceiver', args: [receiver] });
  });
});

/**
 * Deploys a minimal ERC-721 receiver (hand-assembled EVM code): `onERC721Received(operator, from,
 * tokenId, data)` returns its selector when `tokenId` (the third word of the arguments) is even and
 * reverts without data when it is odd (which OpenZeppelin reports as `ERC721InvalidReceiver`).
 */
async function deployEvenReceiver(): Promise<Hex> {
  const runtime =
    '6044' +
    '35' +
    '6001' +
    '16' +
    '6019' +
    '57' + // tokenId & 1 → jump to the revert
    '63150b7a02' +
    '60e0' +
    '1b' +
    '6000' +
    '52' +
    '6020' +
    '6000' +
    'f3' + // return onERC721Received.selector
    '5b' +
    '6000' +
    '80' +
    'fd'; // revert(0, 0)
  const init = '601e' + '80' + '600b' + '6000' + '39' + '6000' + 'f3'; // copy the 30-byte runtime and return it
  const wallet = createWalletClient({ account: privateKeyToAccount(keys.minter), chain: chain(), transport: http(node.rpcUrl) });
  const tx = await wallet.sendTransaction({ data: `0x${init}${runtime}`, gas: 100_000n });
  const { contractAddress } = await reader().waitForTransactionReceipt({ hash: tx });
  return getAddress(contractAddress!);
}

describe('replays and batch ids', () => {
  it('a replayed id is skipped in mintBatch and refused by mint; the token keeps its owner', async () => {
    const start = chunkStart(7);
    const [a, b] = [address('minter'), address('b')];
    await mintBatch(a, [start + 10n]);
    const replay = await mintBatch(b, [start + 10n, start + 11n]);
    const skipped = parseEventLogs({ abi: batchTokenAbi, eventName: 'MintSkipped', logs: replay.logs });
    expect(skipped.map((l) => [l.args.tokenId, decodeErrorResult({ abi: errorsAbi, data: l.args.reason })])).toEqual([
      [start + 10n, { abiItem: expect.anything(), errorName: 'ERC721InvalidSender', args: ['0x0000000000000000000000000000000000000000'] }],
    ]);
    expect(parseEventLogs({ abi: batchTokenAbi, eventName: 'BatchMinted', logs: replay.logs }).map((l) => l.args.tokenId)).toEqual([
      start + 11n,
    ]);
    expect(await refusal(mintOne(b, start + 10n))).toMatchObject({ errorName: 'ERC721InvalidSender' });
    expect(await refusal(mintOne(b, start + 11n))).toMatchObject({ errorName: 'ERC721InvalidSender' });
    expect(await read('ownerOf', start + 10n)).toBe(a);
    expect(await read('ownerOf', start + 11n)).toBe(b);
  });

  it('batchIdOf derives BATCH-<year>-<n> with at least 6 digits for a minted token, "" for an unknown one', async () => {
    const six = tokenIdForBatch(YEAR, 42);
    const seven = tokenIdForBatch(YEAR, 1_234_567);
    const edge = tokenIdForBatch(YEAR, 999_999);
    const twelve = tokenIdForBatch(2031, 999_999_999_999);
    await mintBatch(address('minter'), [six, seven, edge, twelve]);
    expect(await Promise.all([six, seven, edge, twelve].map((t) => read('batchIdOf', t)))).toEqual([
      'BATCH-2030-000042',
      'BATCH-2030-1234567',
      'BATCH-2030-999999',
      'BATCH-2031-999999999999',
    ]);
    expect(await read('batchIdOf', tokenIdForBatch(YEAR, 43))).toBe('');
    expect(await read('batchIdOf', 0n)).toBe('');
  });

  it("mint refuses a batch id other than the token's (BatchIdMismatch naming the expected one)", async () => {
    const tokenId = tokenIdForBatch(YEAR, 77);
    const mintAs = (batchId: string) =>
      send(
        'minter',
        encodeFunctionData({ abi: batchTokenAbi, functionName: 'mint', args: [address('minter'), tokenId, batchId, hash('x')] }),
      );
    for (const wrong of ['BATCH-2030-77', 'BATCH-2030-000078', 'BATCH-2030-000077 ']) {
      expect(await refusal(mintAs(wrong))).toEqual({ errorName: 'BatchIdMismatch', args: [tokenId, 'BATCH-2030-000077'] });
    }
    expect(await read('batchIdOf', tokenId)).toBe('');
    expect((await mintAs('BATCH-2030-000077')).status).toBe('success');
    expect(await read('batchIdOf', tokenId)).toBe('BATCH-2030-000077');
  });
});
