import { encodeFunctionData, getAddress, hexToString, isAddress, keccak256, stringToHex, toHex, type Hex } from 'viem';
import type { VaultCall } from '../../domain/vault-calls';
import { lendingVaultAbi } from './abi';
import { revertReasonOf } from './revert';

/**
 * The vault side of the EVM ledger (LendingVault.sol): how the service's ids become on-chain
 * references and addresses, and how a `VaultCall` becomes the vault's calldata. The signing and
 * sending is `EvmLedger.vaultCallKept` (evm-ledger.ts: one signer, one nonce order for every write).
 */

/** The vault's loan status codes, by `LendingVault.LoanStatus` value. */
export const VAULT_LOAN_STATUSES = ['NONE', 'ACTIVE', 'REPAID', 'CANCELLED', 'DEFAULTED'] as const;
export type VaultLoanStatus = (typeof VAULT_LOAN_STATUSES)[number];

/**
 * A service id (LOAN-…, DEP-…, PO-…) as the vault's bytes32 reference: its ASCII bytes,
 * right-zero-padded. Throws RangeError for an empty id, a non-ASCII character or more than 32 bytes.
 */
export function vaultRef(id: string): Hex {
  // eslint-disable-next-line no-control-regex
  if (id.length === 0 || id.length > 32 || !/^[\x21-\x7e]+$/.test(id)) {
    throw new RangeError(`vault reference must be 1–32 printable ASCII characters: ${JSON.stringify(id)}`);
  }
  return stringToHex(id, { size: 32 });
}

/** The service id of a bytes32 reference (trailing zero bytes dropped). */
export function idOfVaultRef(ref: Hex): string {
  return hexToString(ref, { size: 32 });
}

/** Last 20 bytes of keccak256(text), checksummed. */
function derivedAddress(text: string): Hex {
  return getAddress(`0x${keccak256(toHex(text)).slice(-40)}`);
}

/**
 * The MFI's shareholder address in the vault: last 20 bytes of keccak256("coffee-trace:mfi:" + mfiId).
 * Keyless (nobody can sign for it), so only the operator moves its shares (`reverseDeposit`).
 */
export function vaultShareholder(mfiId: string): Hex {
  return derivedAddress(`coffee-trace:mfi:${mfiId}`);
}

/**
 * The cooperative's settlement address (what remains of a buyer payment after its loans):
 * last 20 bytes of keccak256("coffee-trace:cooperative:" + cooperativeId). Keyless: the USDC there
 * is the cooperative's balance as the chain shows it; paying it out is off chain.
 */
export function cooperativeSettlementAddress(cooperativeId: string): Hex {
  return derivedAddress(`coffee-trace:cooperative:${cooperativeId}`);
}

/** The vault function a call invokes and its calldata. Throws RangeError for a bad ref or amount. */
export function vaultCallData(call: VaultCall): { functionName: string; data: Hex } {
  const amount = (name: string, v: bigint) => {
    if (typeof v !== 'bigint' || v <= 0n || v >= 1n << 256n) throw new RangeError(`${call.kind}: ${name} must be a positive uint256`);
    return v;
  };
  switch (call.kind) {
    case 'VAULT_DEPOSIT':
      return {
        functionName: 'depositFor',
        data: encodeFunctionData({
          abi: lendingVaultAbi,
          functionName: 'depositFor',
          args: [vaultRef(call.ref), amount('assetsUsdMicro', call.assetsUsdMicro), vaultShareholder(call.mfiId)],
        }),
      };
    case 'VAULT_REVERSE_DEPOSIT':
      return {
        functionName: 'reverseDeposit',
        data: encodeFunctionData({
          abi: lendingVaultAbi,
          functionName: 'reverseDeposit',
          args: [vaultRef(call.ref), vaultShareholder(call.mfiId), amount('shares', call.shares)],
        }),
      };
    case 'LOCK_COLLATERAL':
      if (typeof call.tokenId !== 'bigint' || call.tokenId < 0n || call.tokenId >= 1n << 256n)
        throw new RangeError('LOCK_COLLATERAL: tokenId must be a uint256');
      return {
        functionName: 'openLoan',
        data: encodeFunctionData({
          abi: lendingVaultAbi,
          functionName: 'openLoan',
          args: [vaultRef(call.ref), call.tokenId, amount('principalUsdMicro', call.principalUsdMicro)],
        }),
      };
    case 'CANCEL_LOAN':
      return {
        functionName: 'cancelLoan',
        data: encodeFunctionData({ abi: lendingVaultAbi, functionName: 'cancelLoan', args: [vaultRef(call.ref)] }),
      };
    case 'WRITE_OFF_LOAN':
      return {
        functionName: 'writeOffLoan',
        data: encodeFunctionData({ abi: lendingVaultAbi, functionName: 'writeOffLoan', args: [vaultRef(call.ref)] }),
      };
    case 'REPAY_LOAN':
      return {
        functionName: 'repayLoan',
        data: encodeFunctionData({
          abi: lendingVaultAbi,
          functionName: 'repayLoan',
          args: [vaultRef(call.ref), vaultRef(call.purchaseOrderRef), amount('amountUsdMicro', call.amountUsdMicro)],
        }),
      };
    case 'REPAY_LOANS':
      if (call.repayments.length === 0) throw new RangeError('REPAY_LOANS: at least one repayment');
      return {
        functionName: 'repayLoans',
        data: encodeFunctionData({
          abi: lendingVaultAbi,
          functionName: 'repayLoans',
          args: [
            vaultRef(call.ref),
            call.repayments.map((r) => ({ loanRef: vaultRef(r.loanRef), amount: amount('amountUsdMicro', r.amountUsdMicro) })),
          ],
        }),
      };
    case 'RELEASE_REMAINDER':
      return {
        functionName: 'releaseRemainder',
        data: encodeFunctionData({
          abi: lendingVaultAbi,
          functionName: 'releaseRemainder',
          args: [vaultRef(call.ref), cooperativeSettlementAddress(call.cooperativeId), amount('amountUsdMicro', call.amountUsdMicro)],
        }),
      };
    case 'REFUND_PAYMENT':
      if (!isAddress(call.to, { strict: false })) throw new RangeError('REFUND_PAYMENT: to must be an address');
      return {
        functionName: 'refundPayment',
        data: encodeFunctionData({
          abi: lendingVaultAbi,
          functionName: 'refundPayment',
          args: [vaultRef(call.purchaseOrderRef), vaultRef(call.ref), getAddress(call.to), amount('amountUsdMicro', call.amountUsdMicro)],
        }),
      };
    default: {
      const unknown: never = call;
      throw new RangeError(`unknown vault call ${(unknown as { kind: string }).kind}`);
    }
  }
}

/**
 * The revert of a failed vault call, when `err` is one (see `revertReasonOf` in ./revert.ts): the
 * custom error's name (`TokenLocked`, `InsufficientLiquidity`, `AccessControlUnauthorizedAccount`, …),
 * the reason string of a `require`, or "reverted" without data. `undefined` when `err` is not a
 * revert (the RPC failed).
 */
export function vaultRevertReason(err: unknown): string | undefined {
  return revertReasonOf(err);
}
