import { keccak256, parseTransaction, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { REPLACEMENT_FEE_BUMP_PERCENT } from '../../shared/domain/ledger-batching';
import { replacementOf } from '../../shared/adapters/ledger/replacement';

const account = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const call = { to: `0x${'22'.repeat(20)}` as Hex, data: '0xabcdef' as Hex, gas: 210_000n, nonce: 7, chainId: 31337 };

describe('replacement of a stuck kept transaction', () => {
  it('keeps the call, gas and nonce and raises both fees by the documented percentage', async () => {
    const raw = await account.signTransaction({ ...call, type: 'eip1559', maxFeePerGas: 1_000n, maxPriorityFeePerGas: 100n });
    const next = replacementOf(raw, { maxFeePerGas: 500n, maxPriorityFeePerGas: 50n });
    expect(next).toMatchObject({ ...call, type: 'eip1559' });
    expect(next.maxFeePerGas).toBe((1_000n * BigInt(100 + REPLACEMENT_FEE_BUMP_PERCENT)) / 100n);
    expect(next.maxPriorityFeePerGas).toBe((100n * BigInt(100 + REPLACEMENT_FEE_BUMP_PERCENT)) / 100n);
    const signed = await account.signTransaction(next);
    expect(keccak256(signed)).not.toBe(keccak256(raw));
    expect(parseTransaction(signed).nonce).toBe(7);
  });

  it('takes the chain’s current fees when they are above the bump', async () => {
    const raw = await account.signTransaction({ ...call, type: 'eip1559', maxFeePerGas: 1_000n, maxPriorityFeePerGas: 100n });
    expect(replacementOf(raw, { maxFeePerGas: 5_000n, maxPriorityFeePerGas: 900n })).toMatchObject({
      maxFeePerGas: 5_000n,
      maxPriorityFeePerGas: 900n,
    });
  });

  it('bumps a legacy gas price', async () => {
    const raw = await account.signTransaction({ ...call, type: 'legacy', gasPrice: 1_000n });
    expect(replacementOf(raw, {})).toMatchObject({ type: 'legacy', gasPrice: 1_250n, nonce: 7 });
  });
});
