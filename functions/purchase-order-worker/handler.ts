import { orderWorkDeps } from '../../shared/composition/lending';
import type { OrderWorkMessage } from '../../shared/domain/ports/batches';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { runOrderWork } from '../../shared/use-cases/order-work';

/**
 * Order work queue consumer (docs/api/batches-and-custody.md#purchase-orders-of-many-batches): binds,
 * confirms and settles the batches of a purchase order above one transaction, step by step from the
 * progress recorded on the order and its settlement; what a run's time budget leaves is queued
 * again. A failed message is redelivered (and continues where the last run stopped), then dead-lettered.
 */
export const handler = sqsConsumer<OrderWorkMessage>(async (msg) => {
  await runOrderWork(orderWorkDeps(), msg);
});
