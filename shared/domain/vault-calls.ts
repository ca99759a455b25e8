import type { StoredVaultCall } from './records';

/**
 * A write to the lending vault (LendingVault.sol), signed and landed by the single ledger writer
 * like mints and trace-log records (one signer, so one writer keeps the nonces in order). `ref` is
 * the service's id of what the write is for (LOAN-…, DEP-…, PO-…), at most 32 ASCII bytes,
 * carried on chain as a right-zero-padded bytes32 so events name it readably.
 *  - VAULT_DEPOSIT: the treasury (the signer) deposits `assetsUsdMicro` USDC it received from the
 *    on-ramp, shares to the MFI's shareholder address (`vaultShareholder(mfiId)`);
 *  - VAULT_REVERSE_DEPOSIT: an on-ramp reversal — the deposit's shares are redeemed back to the treasury;
 *  - LOCK_COLLATERAL: the BatchToken moves from the custodian into the vault, the loan is recorded
 *    and its principal leaves the vault to the treasury that funds the payout provider (reverts if
 *    the token is locked already or the vault lacks the liquidity);
 *  - CANCEL_LOAN: the disbursement was never sent — principal back, token unlocked;
 *  - WRITE_OFF_LOAN: a loan unpaid long past its due date is written off — DEFAULTED in the vault,
 *    its principal no longer counted in total assets (the token stays with the vault);
 *  - REPAY_LOAN: the loan repaid from the purchase order's buyer payment (principal + interest),
 *    the token unlocked back to the custodian;
 *  - REPAY_LOANS: many REPAY_LOANs of purchase order `ref` in one transaction (`repayLoans`): each
 *    loan repaid as REPAY_LOAN would, with its own LoanRepaid event; one the vault would refuse is
 *    skipped with a RepaymentSkipped event and never blocks the others (at most
 *    REPAY_LOANS_CHUNK repayments per call, so the transaction stays within a block's gas);
 *  - RELEASE_REMAINDER: what is left of a buyer payment after its loans, to the cooperative's address;
 *  - REFUND_PAYMENT: an unapplied buyer payment (`paymentTxHash`/`paymentLogIndex`) back to its
 *    payer `to` from the purchase order's escrow; `ref` is the refund id (`refundIdOf`), once per payment.
 */
export type VaultCall =
  | { kind: 'VAULT_DEPOSIT'; ref: string; mfiId: string; assetsUsdMicro: bigint }
  | { kind: 'VAULT_REVERSE_DEPOSIT'; ref: string; mfiId: string; shares: bigint }
  | { kind: 'LOCK_COLLATERAL'; ref: string; tokenId: bigint; principalUsdMicro: bigint }
  | { kind: 'CANCEL_LOAN'; ref: string }
  | { kind: 'WRITE_OFF_LOAN'; ref: string }
  | { kind: 'REPAY_LOAN'; ref: string; purchaseOrderRef: string; amountUsdMicro: bigint }
  | { kind: 'REPAY_LOANS'; ref: string; repayments: { loanRef: string; amountUsdMicro: bigint }[] }
  | { kind: 'RELEASE_REMAINDER'; ref: string; cooperativeId: string; amountUsdMicro: bigint }
  | {
      kind: 'REFUND_PAYMENT';
      ref: string;
      purchaseOrderRef: string;
      to: string;
      amountUsdMicro: bigint;
      paymentTxHash: string;
      paymentLogIndex: number;
    };

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
    case 'REPAY_LOANS':
      return {
        kind: call.kind,
        ref: call.ref,
        repayments: call.repayments.map((r) => ({ loanRef: r.loanRef, amountUsdMicro: r.amountUsdMicro.toString() })),
      };
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
    case 'REPAY_LOANS':
      return {
        kind: stored.kind,
        ref: stored.ref,
        repayments: stored.repayments.map((r) => ({ loanRef: r.loanRef, amountUsdMicro: BigInt(r.amountUsdMicro) })),
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

/**
 * The most loan repayments in one REPAY_LOANS call. A repayment in `repayLoans` (the loan closed,
 * the escrow taken, the token transferred back, its event) stays below 100,000 gas on the local
 * chain (test/integration/vault-batch.int.test.ts checks it), so a full chunk needs under 10
 * million gas: well inside a block of Base or of the local chain (30 million), with room for the
 * block's other transactions.
 */
export const REPAY_LOANS_CHUNK = 100;
