import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { buildAuditEntry } from '../../domain/audit';
import { StoreUnavailableError } from '../../domain/errors';
import type { AuditEntry } from '../../domain/records';
import { auditPut } from './batch-repo';
import { keys } from './keys';
import { cancellationCodes, documentClient, isTransactionCanceled, tableName } from './table';

export type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

/** Thrown when one of the caller's own items failed its condition; `index` is its position. */
export class TransactionConditionError extends Error {
  constructor(
    readonly index: number,
    readonly codes: string[],
  ) {
    super(`transaction item ${index} failed its condition`);
    this.name = 'TransactionConditionError';
  }
}

/**
 * Applies `items` and appends one audit entry to the batch's hash-chained stream, all in one
 * DynamoDB transaction: the entry is put with attribute_not_exists and the batch's `audit_seq` /
 * `audit_head_hash` advance on the condition that they are still what was read. A concurrent
 * append makes that condition fail, and the whole thing is retried with the new head (no
 * read-then-write without a condition). `batchSet` adds SET clauses to the batch update. The same
 * transaction writes the append's pending-anchor marker, so the next periodic anchor commits the
 * batch's new head (docs/api/anchoring.md#anchoring-of-the-audit-log).
 * Errors: TransactionConditionError for a failed condition in `items` while the head was intact
 * (a failure alongside a moved head is retried); StoreUnavailableError (503) when concurrent
 * transactions keep conflicting after 12 attempts.
 */
export async function transactWithAudit(input: {
  batchId: string;
  /** The caller's items; a function receives the entry being appended (its sequence number and hash). */
  items: TransactItem[] | ((entry: AuditEntry, head: Record<string, unknown>) => TransactItem[]);
  entry: { type: string; at: string; actor: string; payload: Record<string, unknown> };
  batchSet?:
    | { expression: string; values: Record<string, unknown> }
    | ((entry: AuditEntry, head: Record<string, unknown>) => { expression: string; values: Record<string, unknown> });
  /** An extra condition on the batch item, e.g. its current stage. */
  batchCondition?: { expression: string; values: Record<string, unknown> };
  /** Runs on every read of the batch (before the transaction); throws to stop, e.g. a stage that moved. */
  checkHead?: (head: Record<string, unknown>) => void;
  /**
   * The batch item as the caller just read it (a batched read): the first attempt uses it instead
   * of reading it again; when it is stale the head's condition fails and the batch is read anew.
   */
  knownHead?: Record<string, unknown>;
}): Promise<AuditEntry> {
  for (let tries = 0; ; tries++) {
    const head =
      tries === 0 && input.knownHead
        ? { Item: input.knownHead }
        : await documentClient().send(
            new GetCommand({
              TableName: tableName(),
              Key: keys.batch(input.batchId),
              ConsistentRead: true,
            }),
          );
    if (!head.Item) throw new Error(`batch ${input.batchId} not found for audit append`);
    input.checkHead?.(head.Item);
    const seq = Number(head.Item.audit_seq);
    const entry = buildAuditEntry({ batchId: input.batchId, seq: seq + 1, prevHash: String(head.Item.audit_head_hash), ...input.entry });
    const items = typeof input.items === 'function' ? input.items(entry, head.Item) : input.items;
    const batchSet = typeof input.batchSet === 'function' ? input.batchSet(entry, head.Item) : input.batchSet;
    const batchUpdate: TransactItem = {
      Update: {
        TableName: tableName(),
        Key: keys.batch(input.batchId),
        UpdateExpression: `SET audit_seq = :next, audit_head_hash = :hash, updated_at = :at${batchSet ? `, ${batchSet.expression}` : ''}`,
        ConditionExpression: `audit_seq = :seq${input.batchCondition ? ` AND (${input.batchCondition.expression})` : ''}`,
        ExpressionAttributeValues: {
          ':seq': seq,
          ':next': seq + 1,
          ':hash': entry.hash,
          ':at': input.entry.at,
          ...(batchSet?.values ?? {}),
          ...(input.batchCondition?.values ?? {}),
        },
      },
    };
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [...items, batchUpdate, auditPut(entry), anchorMarkerPut(markerIdOf(entry), [input.batchId], entry.at)],
        }),
      );
      return entry;
    } catch (err) {
      if (!isTransactionCanceled(err)) throw err;
      const codes = cancellationCodes(err);
      // DynamoDB reports every item's reason. When the head (or the batch's own condition) failed
      // too, the caller's items were built from a stale head (e.g. an id made of the sequence
      // number that a concurrent append has taken): re-read and retry, so checkHead can report
      // what really happened. Only a failure with the head intact is the caller's own.
      const headMoved = codes[items.length] === 'ConditionalCheckFailed' || codes.includes('TransactionConflict');
      const own = codes.slice(0, items.length).indexOf('ConditionalCheckFailed');
      if (own >= 0 && !headMoved) throw new TransactionConditionError(own, codes);
      if (!headMoved) throw err;
      if (tries >= MAX_APPEND_TRIES) throw contentionError(err, codes);
      await backoff(tries);
    }
  }
}

/** The marker of an append: named after its (first) entry, `<batch>#<sequence number>`, unique as the entry is. */
function markerIdOf(entry: AuditEntry): string {
  return `${entry.batch_id}#${entry.sequence_number}`;
}

/** Attempts of one append before contention on the batch is reported as 503. */
const MAX_APPEND_TRIES = 12;

/** Jittered wait before retry `tries` (0-based), at most ~250 ms. */
function backoff(tries: number): Promise<void> {
  return new Promise((r) => setTimeout(r, 5 + Math.random() * Math.min(250, 20 * (tries + 1))));
}

/** Persistent transaction conflicts are the table being busy (503, retry), anything else stays as it is. */
function contentionError(err: unknown, codes: string[]): unknown {
  return codes.includes('TransactionConflict')
    ? new StoreUnavailableError('The audit log is busy with concurrent changes to this batch; retry shortly.', err)
    : err;
}

/**
 * The same for several batches at once: one transaction holding `items`, and for each batch its
 * audit entry and advanced head (plus `batchSet` / `batchCondition` on its item). Used for
 * purchase orders, whose creation and confirmation belong in the log of every batch they cover.
 * At most 40 batches (DynamoDB's 100 items per transaction); one pending-anchor marker names them all.
 * Errors: TransactionConditionError for a failed condition in `items` or in a batch's own
 * condition (index = position in `items`, or items.length + batch index); StoreUnavailableError
 * (503) when concurrent transactions keep conflicting.
 */
export async function transactWithAudits(input: {
  items: TransactItem[];
  batches: Array<{
    batchId: string;
    entry: { type: string; at: string; actor: string; payload: Record<string, unknown> };
    batchSet?: { expression: string; values: Record<string, unknown> };
    batchCondition?: { expression: string; values: Record<string, unknown> };
    /**
     * The batch as the caller just read it (a batched read): the first attempt builds on its
     * `audit_seq` / `audit_head_hash` instead of reading it again; stale, its condition fails and it is read anew.
     */
    knownHead?: { audit_seq: number; audit_head_hash: string } | null;
  }>;
}): Promise<AuditEntry[]> {
  if (input.batches.length > 40) throw new Error('transactWithAudits: at most 40 batches');
  for (let tries = 0; ; tries++) {
    const heads = await Promise.all(
      input.batches.map((b) =>
        tries === 0 && b.knownHead
          ? { Item: b.knownHead as Record<string, unknown> }
          : documentClient().send(
              new GetCommand({
                TableName: tableName(),
                Key: keys.batch(b.batchId),
                ProjectionExpression: 'audit_seq, audit_head_hash',
                ConsistentRead: true,
              }),
            ),
      ),
    );
    const entries = input.batches.map((b, i) => {
      const head = heads[i]!.Item;
      if (!head) throw new Error(`batch ${b.batchId} not found for audit append`);
      return buildAuditEntry({ batchId: b.batchId, seq: Number(head.audit_seq) + 1, prevHash: String(head.audit_head_hash), ...b.entry });
    });
    const updates: TransactItem[] = input.batches.map((b, i) => ({
      Update: {
        TableName: tableName(),
        Key: keys.batch(b.batchId),
        UpdateExpression: `SET audit_seq = :next, audit_head_hash = :hash, updated_at = :at${b.batchSet ? `, ${b.batchSet.expression}` : ''}`,
        ConditionExpression: `audit_seq = :seq${b.batchCondition ? ` AND (${b.batchCondition.expression})` : ''}`,
        ExpressionAttributeValues: {
          ':seq': entries[i]!.sequence_number - 1,
          ':next': entries[i]!.sequence_number,
          ':hash': entries[i]!.hash,
          ':at': b.entry.at,
          ...(b.batchSet?.values ?? {}),
          ...(b.batchCondition?.values ?? {}),
        },
      },
    }));
    try {
      const marker = anchorMarkerPut(
        markerIdOf(entries[0]!),
        input.batches.map((b) => b.batchId),
        entries[0]!.at,
      );
      await documentClient().send(
        new TransactWriteCommand({ TransactItems: [...input.items, ...updates, ...entries.map(auditPut), marker] }),
      );
      return entries;
    } catch (err) {
      if (!isTransactionCanceled(err)) throw err;
      const codes = cancellationCodes(err);
      const own = codes.slice(0, input.items.length).indexOf('ConditionalCheckFailed');
      if (own >= 0) throw new TransactionConditionError(own, codes);
      const failedBatch = codes.slice(input.items.length, input.items.length + updates.length).indexOf('ConditionalCheckFailed');
      if (failedBatch >= 0) {
        // Either another append moved the head (retry) or the batch's own condition failed (report).
        const head = await documentClient().send(
          new GetCommand({
            TableName: tableName(),
            Key: keys.batch(input.batches[failedBatch]!.batchId),
            ProjectionExpression: 'audit_seq',
            ConsistentRead: true,
          }),
        );
        if (Number(head.Item?.audit_seq) === entries[failedBatch]!.sequence_number - 1)
          throw new TransactionConditionError(input.items.length + failedBatch, codes);
      } else if (!codes.includes('TransactionConflict')) {
        throw err;
      }
      if (tries >= MAX_APPEND_TRIES) throw contentionError(err, codes);
      await backoff(tries);
    }
  }
}

/** The pending-anchor marker an audit append writes in its transaction: the batches it appended to. */
export function anchorMarkerPut(markerId: string, batchIds: string[], at: string): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.anchorMarker(markerId),
        ...keys.anchorMarkerGsi(at, markerId),
        entity: 'ANCHOR_MARKER',
        marker_id: markerId,
        batch_ids: batchIds,
        created_at: at,
      },
    },
  };
}
