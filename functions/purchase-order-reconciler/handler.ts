import { orderWorkSweepDeps } from '../../shared/composition/batches';
import { envOr } from '../../shared/config';
import { instrumented } from '../../shared/runtime/instrument';
import { requeueStalledOrderWork } from '../../shared/use-cases/order-work-sweep';

/**
 * Scheduled reconciliation of large purchase orders (EventBridge, every 5 minutes;
 * docs/api/batches-and-custody.md#resuming-stalled-orders): an order whose creation, confirmation
 * or settlement work has not moved for RECONCILE_AFTER_SECONDS (default 300) — its order-work
 * message lost before it was queued, or dead-lettered — gets the message queued again for the
 * order worker, which continues from the progress recorded on the order.
 */
export const handler = instrumented(async (): Promise<{ orderWorkRequeued: number }> => {
  const staleAfterSeconds = Number(envOr('RECONCILE_AFTER_SECONDS', '300'));
  return { orderWorkRequeued: await requeueStalledOrderWork(orderWorkSweepDeps(), staleAfterSeconds) };
});
