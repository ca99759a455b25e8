import type { DepositStore, LoanStore, SettlementStore, VaultWriteQueue } from '../domain/ports/lending';
import type { WorkQueue } from '../domain/ports/messaging';
import type { PayoutRequestMessage } from '../domain/ports/payouts';
import { vaultDepositConfirmed, vaultReversalConfirmed } from './deposits';
import { collateralLockHandler, loanWriteOffHandler } from './loans';
import { settlementWriteHandlers } from './settlement-writes';
import type { VaultWriteHandlers } from './vault-writes';

/** The ports the handlers of settled vault writes need. */
export interface VaultWriteHandlerDeps {
  deposits: DepositStore;
  vaultWrites: VaultWriteQueue;
  loans: Pick<LoanStore, 'transition' | 'get'>;
  settlements: Pick<SettlementStore, 'recordRepayment' | 'recordRemainder' | 'recordRefund'>;
  payoutQueue: WorkQueue<PayoutRequestMessage>;
  now: () => Date;
}

/**
 * Which use case answers for each kind of vault write the single ledger writer lands:
 *  - VAULT_DEPOSIT: mined → the deposit COMPLETED with its shares; refused → FAILED (the USDC stays
 *    with the treasury; an operator refunds it);
 *  - VAULT_REVERSE_DEPOSIT: mined → REFUNDED; refused → stays COMPLETED (logged as an alarm);
 *  - LOCK_COLLATERAL: see `collateralLockHandler` (mined → disbursement; refused → loan CANCELLED);
 *  - WRITE_OFF_LOAN: see `loanWriteOffHandler` (mined → loan DEFAULTED with its loss; refused → repaid first, nothing);
 *  - REPAY_LOAN, REPAY_LOANS, RELEASE_REMAINDER, REFUND_PAYMENT: see `settlementWriteHandlers` (loan REPAID,
 *    settlement completed, unapplied buyer payment REFUNDED).
 */
export function vaultWriteHandlers(deps: VaultWriteHandlerDeps): VaultWriteHandlers {
  return {
    VAULT_DEPOSIT: {
      mined: (call, txHash, result) => vaultDepositConfirmed(deps, { payment_id: call.ref, tx_hash: txHash, shares: result?.shares ?? 0n }),
      refused: async (call, reason) => {
        const at = deps.now().toISOString();
        await deps.deposits.transition(call.ref, ['PROCESSING'], 'FAILED', { failure_reason: reason }, at);
      },
    },
    VAULT_REVERSE_DEPOSIT: {
      mined: (call, txHash, result) =>
        vaultReversalConfirmed(deps, { payment_id: call.ref, tx_hash: txHash, shares: result?.shares ?? BigInt(call.shares) }),
      refused: async () => undefined, // the deposit stays COMPLETED; outcomes.refused logged the alarm
    },
    LOCK_COLLATERAL: collateralLockHandler(deps),
    WRITE_OFF_LOAN: loanWriteOffHandler(deps),
    ...settlementWriteHandlers(deps),
  };
}
