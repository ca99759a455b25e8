import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditEntry } from '../../domain/records';
import { forEachLimited, ORDER_STEP_CONCURRENCY, ORDER_TRANSACTION_MAX_BATCHES } from '../../domain/purchase-order-limits';
import { TransactionConditionError, transactWithAudit, transactWithAudits, type TransactItem } from './audit-append';
import { keys } from './keys';
import { cancellationCodes, documentClient, isTransactionCanceled, tableName } from './table';

/** An audit entry's content, appended to each batch of an order. */
export type OrderAuditEntry = { type: string; at: string; actor: string; payload: Record<string, unknown> };

/**
 * Appends `entry` to one batch's audit log once per `eventKey`: the append's transaction also puts
 * the event's mark for the batch (`keys.orderEventMark`) with attribute_not_exists, so a repeated
 * call (a resumed step, a redelivered message) appends nothing. `batchSet` / `batchCondition` as in
 * `transactWithAudit` (a check that must hold goes in `checkHead`, which throws); `knownHead` the
 * batch item as just read (a batched read), used instead of reading it again (stale: read anew).
 * Returns the entry when appended now, null when it was already. Errors: what `checkHead` throws;
 * StoreUnavailableError (503) under contention.
 */
export async function appendOrderEventOnce(input: {
  batchId: string;
  eventKey: string;
  entry: OrderAuditEntry;
  batchSet?: { expression: string; values: Record<string, unknown> };
  batchCondition?: { expression: string; values: Record<string, unknown> };
  checkHead?: (head: Record<string, unknown>) => void;
  knownHead?: Record<string, unknown>;
}): Promise<AuditEntry | null> {
  const mark: TransactItem = {
    Put: {
      TableName: tableName(),
      Item: { ...keys.orderEventMark(input.eventKey, input.batchId), entity: 'ORDER_EVENT_MARK', at: input.entry.at },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
  try {
    return await transactWithAudit({
      batchId: input.batchId,
      items: [mark],
      entry: input.entry,
      ...(input.batchSet ? { batchSet: input.batchSet } : {}),
      ...(input.batchCondition ? { batchCondition: input.batchCondition } : {}),
      ...(input.checkHead ? { checkHead: input.checkHead } : {}),
      ...(input.knownHead ? { knownHead: input.knownHead } : {}),
    });
  } catch (err) {
    if (err instanceof TransactionConditionError && err.index === 0) return null;
    throw err;
  }
}

/**
 * Appends `entry` once per `eventKey` to every batch of `batchIds` (each its own idempotent write,
 * `appendOrderEventOnce`), at most ORDER_STEP_CONCURRENCY at a time. Safe to call again after a
 * crash: batches already carrying the event are skipped.
 */
export async function fanOutOrderEvent(batchIds: readonly string[], eventKey: string, entry: OrderAuditEntry): Promise<void> {
  await forEachLimited(batchIds, ORDER_STEP_CONCURRENCY, async (batchId) => {
    await appendOrderEventOnce({ batchId, eventKey, entry });
  });
}

/** Whether an order of `batchCount` batches writes its audit entries in the order's own transaction. */
export function fitsOneTransaction(batchCount: number): boolean {
  return batchCount <= ORDER_TRANSACTION_MAX_BATCHES;
}

/**
 * `items` and `entry` in the audit log of every batch of `batchIds`. Up to ORDER_TRANSACTION_MAX_BATCHES
 * batches: one transaction (`transactWithAudits`). Above: `items` in one transaction, then the
 * entries batch by batch, once per `eventKey` (`fanOutOrderEvent`; the caller resumes an
 * interrupted fan-out by calling `fanOutOrderEvent` again). Without batches, the items alone.
 * Errors: TransactionConditionError (index in `items`) when one of their conditions fails.
 */
export async function writeOrderAudited(
  items: TransactItem[],
  batchIds: string[],
  eventKey: string,
  entry: OrderAuditEntry,
): Promise<void> {
  if (batchIds.length > 0 && fitsOneTransaction(batchIds.length)) {
    await transactWithAudits({ items, batches: batchIds.map((batchId) => ({ batchId, entry })) });
    return;
  }
  try {
    await documentClient().send(new TransactWriteCommand({ TransactItems: items }));
  } catch (err) {
    if (!isTransactionCanceled(err)) throw err;
    const codes = cancellationCodes(err);
    const i = codes.indexOf('ConditionalCheckFailed');
    if (i >= 0) throw new TransactionConditionError(i, codes);
    throw err;
  }
  if (batchIds.length > 0) await fanOutOrderEvent(batchIds, eventKey, entry);
}
