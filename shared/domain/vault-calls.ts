import type { VaultCall } from './ports';
import type { StoredVaultCall } from './records';

/** Vault writes as the ledger writer keeps them: `VaultCall` (bigints) ↔ `StoredVaultCall` (decimal strings). */
/** A VaultCall as stored in its ledger write (bigints as decimal strings). */
export function storedVaultCall(call: VaultCall): StoredVaultCall {
  switch (call.kind) {
    case 'VAULT_DEPOSIT':
      return { kind: call.kind, ref: call.ref, mfiId: call.mfiId, assetsUsdMicro: call.assetsUsdMicro.toString() };
    case 'VAULT_REVERSE_DEPOSIT':
      return { kind: call.kind, ref: call.ref, mfiId: call.mfiId, shares: call.shares.toString() };
    case 'LOCK_COLLATERAL':
      return { kind: call.kind, ref: call.ref, tokenId: call.tokenId.toString(), principalUsdMicro: call.principalUsdMicro.toString() };
    case 'CANCEL_LOAN':
      return { kind: call.kind, ref: call.ref };
    case 'WRITE_OFF_LOAN':
      return { kind: call.kind, ref: call.ref };
    case 'REPAY_LOAN':
      return { kind: call.kind, ref: call.ref, purchaseOrderRef: call.purchaseOrderRef, amountUsdMicro: call.amountUsdMicro.toString() };
    case 'RELEASE_REMAINDER':
      return { kind: call.kind, ref: call.ref, cooperativeId: call.cooperativeId, amountUsdMicro: call.amountUsdMicro.toString() };
    case 'REFUND_PAYMENT':
      return {
        kind: call.kind,
        ref: call.ref,
        purchaseOrderRef: call.purchaseOrderRef,
        to: call.to,
        amountUsdMicro: call.amountUsdMicro.toString(),
        paymentTxHash: call.paymentTxHash,
        paymentLogIndex: call.paymentLogIndex,
      };
  }
}

/** The VaultCall of a stored ledger write. Errors: SyntaxError for a malformed amount. */
export function vaultCallOf(stored: StoredVaultCall): VaultCall {
  switch (stored.kind) {
    case 'VAULT_DEPOSIT':
      return { kind: stored.kind, ref: stored.ref, mfiId: stored.mfiId, assetsUsdMicro: BigInt(stored.assetsUsdMicro) };
    case 'VAULT_REVERSE_DEPOSIT':
      return { kind: stored.kind, ref: stored.ref, mfiId: stored.mfiId, shares: BigInt(stored.shares) };
    case 'LOCK_COLLATERAL':
      return { kind: stored.kind, ref: stored.ref, tokenId: BigInt(stored.tokenId), principalUsdMicro: BigInt(stored.principalUsdMicro) };
    case 'CANCEL_LOAN':
      return { kind: stored.kind, ref: stored.ref };
    case 'WRITE_OFF_LOAN':
      return { kind: stored.kind, ref: stored.ref };
    case 'REPAY_LOAN':
      return {
        kind: stored.kind,
        ref: stored.ref,
        purchaseOrderRef: stored.purchaseOrderRef,
        amountUsdMicro: BigInt(stored.amountUsdMicro),
      };
    case 'RELEASE_REMAINDER':
      return { kind: stored.kind, ref: stored.ref, cooperativeId: stored.cooperativeId, amountUsdMicro: BigInt(stored.amountUsdMicro) };
    case 'REFUND_PAYMENT':
      return {
        kind: stored.kind,
        ref: stored.ref,
        purchaseOrderRef: stored.purchaseOrderRef,
        to: stored.to,
        amountUsdMicro: BigInt(stored.amountUsdMicro),
        paymentTxHash: stored.paymentTxHash,
        paymentLogIndex: stored.paymentLogIndex,
      };
  }
}
