import { parseTransaction, type Hex, type TransactionSerializable } from 'viem';
import { REPLACEMENT_FEE_BUMP_PERCENT } from '../../domain/ledger-batching';

/**
 * The replacement of a stuck kept transaction (docs/ledger.md#recovery-of-a-sent-transaction): the
 * same call (to, data, value, gas, nonce, chain) as the signed `rawTx`, with fees
 * `REPLACEMENT_FEE_BUMP_PERCENT` above its own, or the chain's current ones when those are higher
 * (`current`, wei). Legacy-priced transactions get a bumped `gasPrice`. Errors: RangeError when
 * `rawTx` is not a signed transaction with a nonce.
 */
export function replacementOf(
  rawTx: Hex,
  current: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint; gasPrice?: bigint },
): TransactionSerializable {
  const old = parseTransaction(rawTx);
  if (old.nonce === undefined || old.chainId === undefined)
    throw new RangeError('replacement: the kept transaction has no nonce or chain id');
  const bump = (fee: bigint | undefined, now: bigint | undefined): bigint => {
    const raised = ((fee ?? 0n) * BigInt(100 + REPLACEMENT_FEE_BUMP_PERCENT) + 99n) / 100n;
    return now !== undefined && now > raised ? now : raised;
  };
  const chainId: number = old.chainId;
  const base = { to: old.to, data: old.data, value: old.value, gas: old.gas, nonce: old.nonce, chainId };
  if (old.type === 'legacy' || old.type === 'eip2930' || old.gasPrice !== undefined)
    return { ...base, type: 'legacy', gasPrice: bump(old.gasPrice, current.gasPrice ?? current.maxFeePerGas) };
  return {
    ...base,
    type: 'eip1559',
    maxFeePerGas: bump(old.maxFeePerGas, current.maxFeePerGas),
    maxPriorityFeePerGas: bump(old.maxPriorityFeePerGas, current.maxPriorityFeePerGas),
  };
}
