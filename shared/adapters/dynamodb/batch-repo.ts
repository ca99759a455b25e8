import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchStore } from '../../domain/ports/batches';
import { batchGetItems, itemKey } from './batch-get';
import { ledgerTxItem, type LedgerTx } from './ledger-tx';
import type { AuditEntry, Batch, Job, StageHistoryEntry } from '../../domain/records';
import { AWAITING_PAYOUT, BATCH_PREFIX, keys, fromItem } from './keys';

/** Most GSI1 pages (1 MB each) one `listByFarmer` reads. */
export const FARMER_BATCH_SCAN_PAGES = 20;
import { documentClient, isConditionalCheckFailed, isTransactionCanceled, nextCounterValue, tableName } from './table';

/** Audit entries are kept for good: no TTL, no update, no delete. */
export function auditPut(entry: AuditEntry) {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.audit(entry.batch_id, entry.sequence_number), entity: 'AUDIT', ...entry },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

/**
 * Batches, their audit streams and submission jobs (docs/api/conventions.md#identifiers-money-and-time, docs/api/batches-and-custody.md#custody-trail).
 */
export class BatchRepository implements BatchStore {
  /** The next batch number of `year` from the atomic counter (1, 2, 3, …). */
  async nextBatchNumber(year: number): Promise<number> {
    return nextCounterValue(keys.batchCounter(year));
  }

  /**
   * Stores a batch whose mint is under way (`mint_status: PENDING`; not visible to readers) with
   * the ledger write that mints its BatchToken and, for an asynchronous answer, its job — one
   * transaction.
   */
  async putPending(batch: Batch, mint: LedgerTx, job?: Job): Promise<void> {
    await documentClient().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.batch(batch.batch_id), ...keys.batchGsi(batch.cooperative_id, batch.batch_id), entity: 'BATCH', ...batch },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          { Put: { TableName: tableName(), Item: ledgerTxItem(mint), ConditionExpression: 'attribute_not_exists(PK)' } },
          ...(job ? [{ Put: { TableName: tableName(), Item: { ...keys.job(job.job_id), entity: 'JOB', ...job } } }] : []),
        ],
      }),
    );
  }

  /** Marks a mint that could not be sent or reverted; the batch stays invisible. */
  async markMintFailed(batchId: string, reason: string, jobId?: string, at = new Date().toISOString()): Promise<void> {
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [
      {
        Update: {
          TableName: tableName(),
          Key: keys.batch(batchId),
          UpdateExpression: 'SET mint_status = :f, mint_failure = :r, updated_at = :at',
          ConditionExpression: 'mint_status = :p',
          ExpressionAttributeValues: { ':f': 'FAILED', ':p': 'PENDING', ':r': reason, ':at': at },
        },
      },
    ];
    if (jobId) {
      items.push({
        Update: {
          TableName: tableName(),
          Key: keys.job(jobId),
          UpdateExpression: 'SET #s = :f, #e = :e, completed_at = :at',
          ConditionExpression: '#s = :p',
          ExpressionAttributeNames: { '#s': 'status', '#e': 'error' },
          ExpressionAttributeValues: { ':f': 'FAILED', ':p': 'PENDING', ':e': { code: 'LEDGER_UNAVAILABLE', message: reason }, ':at': at },
        },
      });
    }
    try {
      await documentClient().send(new TransactWriteCommand({ TransactItems: items }));
    } catch (err) {
      if (!isTransactionCanceled(err)) throw err;
    }
  }

  /**
   * Records a mined BatchToken in one transaction: the batch becomes DELIVERED with its token,
   * transaction hash and first stage-history entry; the first audit entry is appended; the job (if
   * any) becomes COMPLETE. Idempotent: returns false when the batch was already confirmed.
   */
  async confirmMint(input: {
    batchId: string;
    txHash: string;
    entry: AuditEntry;
    history: StageHistoryEntry;
    jobId?: string;
    at: string;
  }): Promise<boolean> {
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [
      {
        Update: {
          TableName: tableName(),
          Key: keys.batch(input.batchId),
          UpdateExpression:
            'REMOVE pending_audit_entry SET mint_status = :c, stage = :s, chain_tx_hash = :tx, stage_history = :h, audit_seq = :seq, audit_head_hash = :hash, updated_at = :at, GSI2PK = :await, GSI2SK = :awaitKey',
          ConditionExpression: 'mint_status = :p',
          ExpressionAttributeValues: {
            ':c': 'CONFIRMED',
            ':p': 'PENDING',
            ':s': 'DELIVERED',
            ':tx': input.txHash,
            ':h': [input.history],
            ':seq': input.entry.sequence_number,
            ':hash': input.entry.hash,
            ':at': input.at,
            ':await': AWAITING_PAYOUT,
            ':awaitKey': keys.awaitingPayoutGsi(input.at, input.batchId).GSI2SK,
          },
        },
      },
      auditPut(input.entry),
    ];
    if (input.jobId) {
      items.push({
        Update: {
          TableName: tableName(),
          Key: keys.job(input.jobId),
          UpdateExpression: 'SET #s = :c, tx_hash = :tx, completed_at = :at',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':c': 'COMPLETE', ':tx': input.txHash, ':at': input.at },
        },
      });
    }
    try {
      await documentClient().send(new TransactWriteCommand({ TransactItems: items }));
      return true;
    } catch (err) {
      if (isTransactionCanceled(err)) {
        const current = await this.getAny(input.batchId);
        if (current?.mint_status === 'CONFIRMED') return false;
      }
      throw err;
    }
  }

  /** A batch whatever its mint status (internal use). */
  async getAny(batchId: string): Promise<Batch | null> {
    return readAnyBatch(batchId);
  }

  /** A batch whose BatchToken is minted; null otherwise (no batch is visible without its token). */
  async get(batchId: string): Promise<Batch | null> {
    return readMintedBatch(batchId);
  }

  getMany(batchIds: readonly string[]): Promise<Array<Batch | null>> {
    return readMintedBatches(batchIds);
  }

  /** Sets the batch's payment label (e.g. NOT_PAYABLE when the farmer has no phone). */
  async setPaymentStatus(batchId: string, status: Batch['payment_status']): Promise<void> {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.batch(batchId),
          UpdateExpression: 'SET payment_status = :s, updated_at = :at REMOVE GSI2PK, GSI2SK',
          ConditionExpression: 'attribute_exists(PK) AND payment_status <> :confirmed',
          ExpressionAttributeValues: { ':s': status, ':confirmed': 'PAYMENT_CONFIRMED', ':at': new Date().toISOString() },
        }),
      );
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }

  /** The batch's audit entries in sequence order. */
  async auditEntries(batchId: string): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': keys.auditPartition(batchId) },
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      );
      for (const item of r.Items ?? []) out.push(fromItem<AuditEntry>(item));
      start = r.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /** Ids of confirmed batches still without their NET_COFFEE_PAYMENT payout since before `before`. */
  async awaitingPayoutBefore(before: string, limit: number): Promise<string[]> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :before',
        ExpressionAttributeValues: { ':pk': AWAITING_PAYOUT, ':before': before },
        Limit: limit,
        ProjectionExpression: 'batch_id',
      }),
    );
    return (r.Items ?? []).map((i) => String(i.batch_id));
  }

  /**
   * The farmer's confirmed batches, at most `limit`, in batch-id order. Batches are indexed by
   * cooperative only (GSI1 `COOP#<coop>` / `BATCH#<id>`), so this queries that cooperative's batch
   * range with a filter on `farmer_id` and `mint_status`: its cost grows with the cooperative's
   * batches, and it stops after FARMER_BATCH_SCAN_PAGES pages (1 MB each) even if `limit` is not
   * reached — a bound on one request's reads, documented with the credit score.
   */
  async listByFarmer(farmerId: string, cooperativeId: string, limit: number): Promise<Batch[]> {
    const out: Batch[] = [];
    let start: Record<string, unknown> | undefined;
    let pages = 0;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :b)',
          FilterExpression: 'farmer_id = :f AND mint_status = :c',
          ExpressionAttributeValues: {
            ':pk': keys.cooperativePartition(cooperativeId),
            ':b': BATCH_PREFIX,
            ':f': farmerId,
            ':c': 'CONFIRMED',
          },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of r.Items ?? []) if (out.length < limit) out.push(fromItem<Batch>(item));
      start = r.LastEvaluatedKey;
      pages++;
    } while (start && out.length < limit && pages < FARMER_BATCH_SCAN_PAGES);
    return out;
  }

  /** Stores a new job. */
  async putJob(job: Job): Promise<void> {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.job(job.job_id), entity: 'JOB', ...job },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  async getJob(jobId: string): Promise<Job | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.job(jobId) }));
    return r.Item ? fromItem<Job>(r.Item) : null;
  }
}

/** A batch in any mint state (consistent read), or null. Standalone, so a bundle that only reads batches does not carry the repository. */
async function readAnyBatch(batchId: string): Promise<Batch | null> {
  const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.batch(batchId), ConsistentRead: true }));
  return r.Item ? fromItem<Batch>(r.Item) : null;
}

/** A batch whose BatchToken is minted; null otherwise (no batch is visible without its token). */
export async function readMintedBatch(batchId: string): Promise<Batch | null> {
  const b = await readAnyBatch(batchId);
  return b && b.mint_status === 'CONFIRMED' ? b : null;
}

/** Minted batches of `batchIds` in their order, null where none (BatchGetItem, 100 keys a request; `table:batch-read`). */
export async function readMintedBatches(batchIds: readonly string[]): Promise<Array<Batch | null>> {
  const items = await batchGetItems(batchIds.map((b) => keys.batch(b)));
  return batchIds.map((b) => {
    const item = items.get(itemKey(keys.batch(b)));
    return item && item.mint_status === 'CONFIRMED' ? fromItem<Batch>(item) : null;
  });
}
