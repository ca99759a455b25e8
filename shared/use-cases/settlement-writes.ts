import type { LoanStore, SettlementStore } from '../domain/ports/lending';
import { forEachLimited, ORDER_STEP_CONCURRENCY } from '../domain/purchase-order-limits';
import type { StoredVaultCall } from '../domain/records';
import { logger } from '../runtime/logger';
import { BUYER_PAYMENT_ALARM } from './settlement';
import type { VaultWriteHandler } from './vault-writes';

/**
 * The outcomes of a settlement's vault writes (docs/api/settlement.md#settlement), told by the
 * single ledger writer once each write is mined or refused.
 */

/** The ports of the ledger writer's settlement handlers. */
export interface SettlementWriteDeps {
  loans: Pick<LoanStore, 'transition'>;
  settlements: Pick<SettlementStore, 'recordRepayment' | 'recordRemainder' | 'recordRefund'>;
  now: () => Date;
}

/**
 * The ledger writer's handlers of REPAY_LOAN, REPAY_LOANS and RELEASE_REMAINDER writes. Repayment
 * mined: the loan REPAID (repaid amount, tx, the purchase order; its guard released, LOAN_REPAID
 * audit entry) and the settlement's repayment REPAID; refused: the repayment REFUSED (alarm; the
 * loan stays ACTIVE). A REPAY_LOANS write settles each of its loans from its own event: LoanRepaid
 * → repaid as above, RepaymentSkipped (or no event of it) → refused as above, a reverted
 * transaction → every one of them refused. Remainder mined: RELEASED with its tx; refused: REFUSED. The settlement completes when
 * nothing is outstanding. Refund of an unapplied payment mined: the payment REFUNDED with its tx
 * (PAYMENT_REFUNDED audit entry); refused: REFUND_REFUSED (alarm; an ADMIN may ask again). Idempotent.
 */
export function settlementWriteHandlers(deps: SettlementWriteDeps): {
  REPAY_LOAN: VaultWriteHandler<Extract<StoredVaultCall, { kind: 'REPAY_LOAN' }>>;
  REPAY_LOANS: VaultWriteHandler<Extract<StoredVaultCall, { kind: 'REPAY_LOANS' }>>;
  RELEASE_REMAINDER: VaultWriteHandler<Extract<StoredVaultCall, { kind: 'RELEASE_REMAINDER' }>>;
  REFUND_PAYMENT: VaultWriteHandler<Extract<StoredVaultCall, { kind: 'REFUND_PAYMENT' }>>;
} {
  return {
    REPAY_LOAN: {
      mined: (call, txHash) => repaid(deps, call.purchaseOrderRef, call.ref, call.amountUsdMicro, txHash),
      refused: (call, reason) => repaymentRefused(deps, call.purchaseOrderRef, call.ref, reason),
    },
    REPAY_LOANS: {
      async mined(call, txHash, result) {
        const outcomes = new Map((result?.repayments ?? []).map((r) => [r.loanId, r]));
        await forEachLimited(call.repayments, ORDER_STEP_CONCURRENCY, async (r) => {
          const outcome = outcomes.get(r.loanRef);
          if (outcome?.repaid) await repaid(deps, call.ref, r.loanRef, r.amountUsdMicro, txHash);
          else
            await repaymentRefused(
              deps,
              call.ref,
              r.loanRef,
              outcome ? `skipped by repayLoans in ${txHash}: ${outcome.reason ?? 'skipped'}` : `no repayment log of it in ${txHash}`,
            );
        });
      },
      async refused(call, reason) {
        await forEachLimited(call.repayments, ORDER_STEP_CONCURRENCY, (r) => repaymentRefused(deps, call.ref, r.loanRef, reason));
      },
    },
    RELEASE_REMAINDER: {
      async mined(call, txHash) {
        await deps.settlements.recordRemainder(call.ref, { status: 'RELEASED', tx_hash: txHash }, deps.now().toISOString());
      },
      async refused(call, reason) {
        logger.error('release of a buyer payment remainder refused by the vault', {
          alarm: BUYER_PAYMENT_ALARM,
          purchase_order_id: call.ref,
          reason,
        });
        await deps.settlements.recordRemainder(call.ref, { status: 'REFUSED' }, deps.now().toISOString());
      },
    },
    REFUND_PAYMENT: {
      async mined(call, txHash) {
        await deps.settlements.recordRefund(
          call.purchaseOrderRef,
          call.paymentTxHash,
          call.paymentLogIndex,
          { status: 'REFUNDED', tx_hash: txHash },
          deps.now().toISOString(),
        );
      },
      async refused(call, reason) {
        logger.error('refund of an unapplied buyer payment refused by the vault', {
          alarm: BUYER_PAYMENT_ALARM,
          purchase_order_id: call.purchaseOrderRef,
          refund_id: call.ref,
          reason,
        });
        await deps.settlements.recordRefund(
          call.purchaseOrderRef,
          call.paymentTxHash,
          call.paymentLogIndex,
          { status: 'REFUND_REFUSED' },
          deps.now().toISOString(),
        );
      },
    },
  };
}

/** One loan of a settlement repaid by `txHash`: the loan REPAID, then the settlement's repayment REPAID (both conditioned: idempotent). */
async function repaid(deps: SettlementWriteDeps, purchaseOrderId: string, loanId: string, amount: string, txHash: string): Promise<void> {
  const at = deps.now().toISOString();
  await deps.loans.transition(
    loanId,
    ['PENDING', 'ACTIVE'],
    'REPAID',
    { repaid_usd_micro: Number(amount), repay_tx_hash: txHash, repaid_at: at, repaid_by_purchase_order_id: purchaseOrderId },
    at,
  );
  await deps.settlements.recordRepayment(purchaseOrderId, loanId, { status: 'REPAID', tx_hash: txHash }, at);
}

/** One loan's repayment refused by the vault: alarm, the settlement's repayment REFUSED (the loan stays ACTIVE). */
async function repaymentRefused(deps: SettlementWriteDeps, purchaseOrderId: string, loanId: string, reason: string): Promise<void> {
  logger.error('loan repayment refused by the vault: the loan stays ACTIVE', {
    alarm: BUYER_PAYMENT_ALARM,
    loan_id: loanId,
    purchase_order_id: purchaseOrderId,
    reason,
  });
  await deps.settlements.recordRepayment(purchaseOrderId, loanId, { status: 'REFUSED' }, deps.now().toISOString());
}
