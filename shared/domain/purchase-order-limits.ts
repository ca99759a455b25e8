/**
 * Sizes of a purchase order (docs/api/batches-and-custody.md#purchase-orders-of-many-batches).
 *
 * An order holds up to {@link MAX_PURCHASE_ORDER_BATCHES} batches. Up to
 * {@link ORDER_TRANSACTION_MAX_BATCHES} its creation, confirmation, payments and settlement write
 * the order and every batch's audit entry in one DynamoDB transaction (100 items at most); above
 * that each batch's step is its own conditioned, idempotent write and the order records its
 * progress, so a crash half-way resumes where it stopped.
 */
export const MAX_PURCHASE_ORDER_BATCHES = 2_000;

/** The most batches whose order-level change and audit entries fit one DynamoDB transaction. */
export const ORDER_TRANSACTION_MAX_BATCHES = 40;

/**
 * Batches bound per step of a large order's creation (docs/api/batches-and-custody.md#purchase-orders-of-many-batches):
 * one DynamoDB transaction holds the order's progress, and each batch's binding and audit entry
 * (2 items a batch, one pending-anchor marker: 83 of 100 items).
 */
export const CREATION_STEP_BATCHES = 40;

/**
 * The order in which a large order's batches are bound: sorted by id. Two orders binding the same
 * batches in the same order, one all-or-nothing step after the other, meet first on the lowest
 * batch they share: exactly one of them binds it, and the other fails there before binding any
 * shared batch.
 */
export function bindingOrder(batchIds: readonly string[]): string[] {
  return [...batchIds].sort();
}

/**
 * Batches confirmed per step of a large order's confirmation (the step's batches are one batched
 * read: 100 keys); the order's progress is recorded after each step.
 */
export const CONFIRMATION_STEP_BATCHES = 100;

/**
 * Batches recorded SETTLED per step of a large order's settlement (the step's batches are one
 * batched read: 100 keys); the settlement's progress is recorded after each step.
 */
export const SETTLEMENT_STEP_BATCHES = 100;

/**
 * How long one run of the order worker works through a large order's steps (confirmation or
 * settlement) before it queues the rest as a new message: no step starts later, so the run ends
 * well within its function's 60-second limit.
 */
export const ORDER_WORK_BUDGET_MS = 40_000;

/**
 * How long a run of the order worker holds a large order's settlement (longer than a run's budget,
 * within its function's 60-second limit): a run that crashed holding it is followed by the next
 * after that at the latest.
 */
export const ORDER_RUN_HOLD_MS = 55_000;

/** A SETTLE message whose settlement another run holds is queued again this many seconds later. */
export const ORDER_RUN_RETRY_S = 5;

/** Per-batch writes of a large order run at most this many at a time. */
export const ORDER_STEP_CONCURRENCY = 16;

/**
 * Runs `fn` over `items`, at most `limit` at a time, in order of start; resolves when all are done
 * and rejects with the first failure (the others still run to their end).
 */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      try {
        await fn(items[i]!, i);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw (failure as { err: unknown }).err;
}

/** `fn` over `items`, at most `limit` at a time; the results in the order of `items`. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  await forEachLimited(items, limit, async (item, i) => {
    out[i] = await fn(item);
  });
  return out;
}
