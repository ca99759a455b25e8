import { payoutDeps } from '../../shared/composition';
import type { PayoutRequestMessage } from '../../shared/domain/ports';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { startBatchPayout } from '../../shared/use-cases/payouts';

/** Payout-request consumer: starts a submitted batch's NET_COFFEE_PAYMENT payout (idempotent). */
export const handler = sqsConsumer<PayoutRequestMessage>(async (msg) => {
  await startBatchPayout(payoutDeps(), msg.batch_id);
});
