import { loanDisbursementDeps } from '../../shared/composition/lending';
import { payoutDeps } from '../../shared/composition/payouts';
import type { PayoutRequestMessage } from '../../shared/domain/ports/payouts';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { startLoanDisbursement } from '../../shared/use-cases/loans';
import { startBatchPayout } from '../../shared/use-cases/payouts';

/**
 * Payout-request consumer: starts a submitted batch's NET_COFFEE_PAYMENT payout, or a loan's
 * LOAN_DISBURSEMENT once its BatchToken is locked in the vault (both idempotent).
 */
export const handler = sqsConsumer<PayoutRequestMessage>(async (msg) => {
  if (msg.loan_id !== undefined) await startLoanDisbursement(loanDisbursementDeps(), msg.loan_id);
  else await startBatchPayout(payoutDeps(), msg.batch_id);
});
