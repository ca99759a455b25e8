import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { BindStepResult, CustodyStore } from '../../domain/ports/batches';
import { DomainError } from '../../domain/errors';
import { StageConflictError } from '../../domain/errors';
import type { AuditEntry, Batch, Job, PurchaseOrder, PurchaseOrderCreationError, Stage, StageHistoryEntry } from '../../domain/records';
import { transactWithAudit, transactWithAudits, TransactionConditionError, type TransactItem } from './audit-append';
import { pinJobPut } from './evidence-pin-repo';
import {
  beginLargeConfirmation,
  beginLargeCreation,
  bindLargeOrderStep,
  confirmLargeOrderBatch,
  createdEntry,
  failLargeCreation,
  recordLargeConfirmation,
  releaseLargeOrder,
} from './large-order-repo';
import { fitsOneTransaction } from './order-fan-out';
import { keys, fromItem, OPEN_LEDGER_TX } from './keys';
import { ledgerTxItem, type LedgerTx } from './ledger-tx';
import type { BatchLedgerTx } from '../../domain/records';

import { documentClient, isConditionalCheckFailed, isTransactionCanceled, tableName } from './table';

/**
 * The custody trail's writes (docs/api/batches-and-custody.md#custody-trail): a stage change is one DynamoDB transaction — the
 * batch's stage and history, its audit entry (hash chain) and the intent to write the trace log —
 * conditional on the stage it moves from; the ledger write follows and is retried until it lands.
 */
export class CustodyRepository implements CustodyStore {
  /**
   * Commits a stage change. Errors: StageConflictError when the batch is no longer at `from` —
   * whichever of the transaction's conditions a concurrent change made fail (the batch's stage,
   * its audit head, or the ledger write whose id `<batch>-<seq>` the winner took).
   * Returns the audit entry and the ledger write to make.
   */
  async commitStage(input: {
    batchId: string;
    tokenId: string;
    from: Stage;
    to: Stage;
    at: string;
    actor: string;
    evidenceCid: string;
    payload: Record<string, unknown>;
    outturnKg?: number;
    head?: Batch;
  }): Promise<{ entry: AuditEntry; ledgerTx: BatchLedgerTx }> {
    let ledgerTx: BatchLedgerTx | undefined;
    const entry = await transactWithAudit({
      batchId: input.batchId,
      ...(input.head ? { knownHead: input.head as unknown as Record<string, unknown> } : {}),
      entry: {
        type: 'STAGE_CHANGED',
        at: input.at,
        actor: input.actor,
        payload: {
          ...input.payload,
          stage: input.to,
          previous_stage: input.from,
          token_id: input.tokenId,
          evidence_ipfs_cid: input.evidenceCid,
        },
      },
      checkHead: (head) => {
        if (head.stage !== input.from || head.mint_status !== 'CONFIRMED')
          throw new StageConflictError((head.stage as string | null) ?? null);
      },
      batchCondition: { expression: 'stage = :from', values: { ':from': input.from } },
      batchSet: (e, head) => {
        const history: StageHistoryEntry = {
          stage: input.to,
          at: input.at,
          actor: input.actor,
          chain_tx_hash: null,
          audit_log_sequence_number: String(e.sequence_number),
          evidence_ipfs_cid: input.evidenceCid,
          evidence_pin_status: 'PENDING',
        };
        void head;
        const outturn =
          input.outturnKg !== undefined
            ? { expression: ', outturn_kg = :outturn', values: { ':outturn': input.outturnKg } }
            : { expression: '', values: {} };
        return {
          expression: `stage = :to, stage_history = list_append(stage_history, :h)${outturn.expression}`,
          values: { ':to': input.to, ':h': [history], ...outturn.values },
        };
      },
      items: (e, head) => {
        ledgerTx = {
          ledger_tx_id: `${input.batchId}-${e.sequence_number}`,
          kind: 'TRACE_STAGE',
          batch_id: input.batchId,
          token_id: input.tokenId,
          stage: input.to,
          evidence_cid: input.evidenceCid,
          audit_hash: e.hash,
          audit_sequence_number: e.sequence_number,
          history_index: (head.stage_history as unknown[]).length,
          status: 'PENDING',
          created_at: input.at,
        };
        return [
          {
            Put: {
              TableName: tableName(),
              Item: ledgerTxItem(ledgerTx),
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          pinJobPut(
            { kind: 'STAGE', cid: input.evidenceCid, batch_id: input.batchId, stage: input.to, history_index: ledgerTx.history_index! },
            input.at,
          ),
        ];
      },
    }).catch(async (err: unknown) => {
      if (!(err instanceof TransactionConditionError)) throw err;
      // Only a concurrent change can make the ledger write's condition fail: report it as one.
      const now = await documentClient().send(
        new GetCommand({ TableName: tableName(), Key: keys.batch(input.batchId), ProjectionExpression: 'stage', ConsistentRead: true }),
      );
      throw new StageConflictError((now.Item?.stage as string | undefined) ?? null);
    });
    return { entry, ledgerTx: ledgerTx! };
  }

  async getLedgerTx(id: string): Promise<LedgerTx | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.ledgerTx(id), ConsistentRead: true }));
    return r.Item ? fromItem<LedgerTx>(r.Item) : null;
  }

  /** Keeps the signed transaction before it is broadcast (once: a second signing is refused). */
  async keepSigned(id: string, signed: { rawTx: string; txHash: string; nonce: number }, at: string): Promise<void> {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.ledgerTx(id),
        UpdateExpression: 'SET raw_tx = :r, tx_hash = :h, nonce = :n, #s = :sent, sent_at = :at',
        ConditionExpression: 'attribute_not_exists(raw_tx)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':r': signed.rawTx, ':h': signed.txHash, ':n': signed.nonce, ':sent': 'SENT', ':at': at },
      }),
    );
  }

  /**
   * The trace-log transaction is mined: the write is CONFIRMED, the batch's stage-history entry
   * gets its transaction hash, and the job (if any) completes — one transaction, idempotent.
   */
  async confirm(tx: LedgerTx, txHash: string, blockNumber: number, at: string): Promise<void> {
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: keys.ledgerTx(tx.ledger_tx_id),
          // tx_hash too: a member of a batched transaction has it only from here (its group kept the signed call).
          UpdateExpression: 'SET #s = :c, tx_hash = :h, block_number = :b, confirmed_at = :at REMOVE GSI2PK, GSI2SK, GSI1PK, GSI1SK',
          ConditionExpression: '#s <> :c',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':c': 'CONFIRMED', ':h': txHash, ':b': blockNumber, ':at': at },
        },
      },
    ];
    if (tx.kind === 'TRACE_STAGE') {
      items.push({
        Update: {
          TableName: tableName(),
          Key: keys.batch(tx.batch_id),
          UpdateExpression: `SET stage_history[${tx.history_index}].chain_tx_hash = :h`,
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':h': txHash },
        },
      });
    }
    const fresh = await this.getLedgerTx(tx.ledger_tx_id);
    if (fresh?.job_id) {
      items.push({
        Update: {
          TableName: tableName(),
          Key: keys.job(fresh.job_id),
          UpdateExpression: 'SET #s = :c, tx_hash = :h, completed_at = :at',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':c': 'COMPLETE', ':h': txHash, ':at': at },
        },
      });
    }
    try {
      await documentClient().send(new TransactWriteCommand({ TransactItems: items }));
    } catch (err) {
      if (!isTransactionCanceled(err)) throw err; // already confirmed: nothing to do
    }
  }

  /**
   * Attaches a job to a write that is not confirmed yet (the caller answers 202). Returns false
   * when the write got confirmed meanwhile (the caller can answer 200 instead).
   */
  async attachJob(tx: LedgerTx, job: Job): Promise<boolean> {
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: tableName(), Item: { ...keys.job(job.job_id), entity: 'JOB', ...job } } },
            {
              Update: {
                TableName: tableName(),
                Key: keys.ledgerTx(tx.ledger_tx_id),
                UpdateExpression: 'SET job_id = :j',
                ConditionExpression: '#s <> :c',
                ExpressionAttributeNames: { '#s': 'status' },
                ExpressionAttributeValues: { ':j': job.job_id, ':c': 'CONFIRMED' },
              },
            },
          ],
        }),
      );
      return true;
    } catch (err) {
      if (isTransactionCanceled(err)) return false;
      throw err;
    }
  }

  /** A write the chain refused (reverted): FAILED, out of the open index. */
  /**
   * The write was refused (or discarded): its job (if any, and still PENDING) FAILED with the
   * reason first, then the write FAILED and out of the open index — in this order, so a crash
   * between them is repaired by the retry, which finds the write still open. Idempotent.
   */
  async markFailed(id: string, reason: string, at: string): Promise<void> {
    const fresh = await this.getLedgerTx(id);
    if (fresh?.job_id) {
      try {
        await documentClient().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: keys.job(fresh.job_id),
            UpdateExpression: 'SET #s = :f, #e = :e, completed_at = :at',
            ConditionExpression: '#s = :p',
            ExpressionAttributeNames: { '#s': 'status', '#e': 'error' },
            ExpressionAttributeValues: {
              ':f': 'FAILED',
              ':p': 'PENDING',
              ':e': { code: 'LEDGER_UNAVAILABLE', message: reason.slice(0, 1000) },
              ':at': at,
            },
          }),
        );
      } catch (err) {
        if (!isConditionalCheckFailed(err)) throw err;
      }
    }
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.ledgerTx(id),
        UpdateExpression: 'SET #s = :f, failure = :r, failed_at = :at REMOVE GSI2PK, GSI2SK, GSI1PK, GSI1SK',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':f': 'FAILED', ':r': reason.slice(0, 1000), ':at': at },
      }),
    );
  }

  /** Ledger writes not confirmed since before `before` (ISO), oldest first. */
  async openLedgerTxsBefore(before: string, limit: number): Promise<LedgerTx[]> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :b',
        ExpressionAttributeValues: { ':pk': OPEN_LEDGER_TX, ':b': before },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) => fromItem<LedgerTx>(i));
  }

  // ------------------------------------------------------------------ purchase orders

  /**
   * Creates a DRAFT purchase order of at most ORDER_TRANSACTION_MAX_BATCHES batches, binds each
   * batch to it and writes PURCHASE_ORDER_CREATED in each batch's audit log, in one transaction: a
   * batch already on another purchase order makes it fail. `heads`: the batches as just read, in
   * `batch_ids` order, built on instead of read again (a stale one is read anew). A larger order is created CREATING and
   * bound step by step instead (`beginPurchaseOrderCreation`, `bindPurchaseOrderStep`).
   * Errors: VALIDATION_ERROR naming the batch.
   */
  async createPurchaseOrder(po: PurchaseOrder, heads?: readonly Batch[]): Promise<void> {
    if (!fitsOneTransaction(po.batch_ids.length))
      throw new Error(`createPurchaseOrder: ${po.batch_ids.length} batches do not fit one transaction (beginPurchaseOrderCreation)`);
    try {
      await transactWithAudits({
        items: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.purchaseOrder(po.purchase_order_id), entity: 'PO', ...po },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
        ],
        batches: po.batch_ids.map((b, i) => {
          const head = heads?.[i];
          return {
            batchId: b,
            entry: createdEntry(po),
            batchSet: { expression: 'purchase_order_id = :po', values: { ':po': po.purchase_order_id } },
            batchCondition: { expression: 'attribute_not_exists(purchase_order_id)', values: {} },
            ...(head?.batch_id === b ? { knownHead: { audit_seq: head.audit_seq, audit_head_hash: head.audit_head_hash } } : {}),
          };
        }),
      });
    } catch (err) {
      if (err instanceof TransactionConditionError && err.index >= 1) {
        const i = err.index - 1;
        throw new DomainError('VALIDATION_ERROR', `Batch ${po.batch_ids[i]} is already on another purchase order.`, {
          details: [{ path: `batch_ids.${i}`, message: 'already on another purchase order' }],
        });
      }
      throw err;
    }
  }

  beginPurchaseOrderCreation(po: PurchaseOrder): Promise<void> {
    return beginLargeCreation(po);
  }

  bindPurchaseOrderStep(
    po: PurchaseOrder,
    from: number,
    step: readonly string[],
    heads: readonly (Batch | null)[],
  ): Promise<BindStepResult> {
    return bindLargeOrderStep(po, from, step, heads);
  }

  failPurchaseOrderCreation(id: string, boundCount: number, error: PurchaseOrderCreationError): Promise<boolean> {
    return failLargeCreation(id, boundCount, error);
  }

  releasePurchaseOrderBatches(po: PurchaseOrder, bound: readonly string[]): Promise<void> {
    return releaseLargeOrder(po, bound);
  }

  async getPurchaseOrder(id: string): Promise<PurchaseOrder | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.purchaseOrder(id), ConsistentRead: true }));
    // A large order whose creation was undone (WITHDRAWN) is no order.
    return r.Item && r.Item.status !== 'WITHDRAWN' ? fromItem<PurchaseOrder>(r.Item) : null;
  }

  /**
   * DRAFT → CONFIRMED, with PURCHASE_ORDER_CONFIRMED in each batch's audit log, in one
   * transaction; returns false when it was confirmed already.
   */
  async confirmPurchaseOrder(po: PurchaseOrder, actor: string, at: string): Promise<boolean> {
    try {
      await transactWithAudits({
        items: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.purchaseOrder(po.purchase_order_id),
              UpdateExpression: 'SET #s = :c, confirmed_at = :at',
              ConditionExpression: '#s = :d',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':c': 'CONFIRMED', ':d': 'DRAFT', ':at': at },
            },
          },
        ],
        batches: po.batch_ids.map((b) => ({
          batchId: b,
          entry: { type: 'PURCHASE_ORDER_CONFIRMED', at, actor, payload: { purchase_order_id: po.purchase_order_id } },
        })),
      });
      return true;
    } catch (err) {
      if (err instanceof TransactionConditionError && err.index === 0) return false;
      throw err;
    }
  }

  beginPurchaseOrderConfirmation(po: PurchaseOrder, actor: string, at: string): Promise<PurchaseOrder> {
    return beginLargeConfirmation(po, actor, at);
  }

  confirmPurchaseOrderBatch(po: PurchaseOrder, batchId: string, head?: Batch): Promise<AuditEntry | null> {
    return confirmLargeOrderBatch(po, batchId, head);
  }

  recordConfirmationProgress(id: string, from: number, to: number, complete: boolean): Promise<boolean> {
    return recordLargeConfirmation(id, from, to, complete);
  }
}
