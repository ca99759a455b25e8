import type { MintConfirmationMessage } from '../../shared/adapters/aws/queues';
import { batchDeps } from '../../shared/composition';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { finishSlowMint } from '../../shared/use-cases/batches';

/** Mint-queue consumer: finishes batches whose mint receipt was slow (waits up to 60 s per try). */
export const handler = sqsConsumer<MintConfirmationMessage>(async (msg) => {
  await finishSlowMint(batchDeps(), msg, 60_000);
});
