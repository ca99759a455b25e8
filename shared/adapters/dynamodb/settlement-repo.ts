import { GetCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { BuyerPayment, Settlement } from '../../domain/lending';
import { microToUsdc } from '../../domain/money';
import type { SettlementStore } from '../../domain/ports/lending';
import type { SettleRequest } from '../../domain/records';
import { TransactionConditionError, type TransactItem } from './audit-append';
import { fanOutOrderEvent, fitsOneTransaction, type OrderAuditEntry, writeOrderAudited } from './order-fan-out';
import { fromItem, keys } from './keys';
import { settleWorkMark } from './order-work-index';
import { conditionalUpdate, documentClient, isConditionalCheckFailed, tableName } from './table';

/** The once-per-batch key of a buyer payment's audit entry (`BUYER_PAYMENT_RECEIVED`). */
function paymentEventKey(p: Pick<BuyerPayment, 'purchase_order_id' | 'tx_hash' | 'log_index'>): string {
  return `BUYER_PAYMENT_RECEIVED#${p.purchase_order_id}#${p.tx_hash}#${p.log_index}`;
}

/** The SETTLEMENT_STARTED audit entry of a settlement (every batch of its order). */
function startedEntry(settlement: Settlement, actor: string): OrderAuditEntry {
  return {
    type: 'SETTLEMENT_STARTED',
    at: settlement.created_at,
    actor,
    payload: {
      purchase_order_id: settlement.purchase_order_id,
      paid_usdc: microToUsdc(settlement.amount_usd_micro),
      amount_due_usdc: settlement.amount_due_usd_micro == null ? null : microToUsdc(settlement.amount_due_usd_micro),
      short_payment: settlement.short_payment ?? false,
      payment_tx_hashes: (settlement.payments ?? []).map((p) => p.tx_hash),
    },
  };
}

/** The BUYER_PAYMENT_RECEIVED audit entry of a buyer payment (every batch of its order). */
function paymentEntry(p: BuyerPayment): OrderAuditEntry {
  return { type: 'BUYER_PAYMENT_RECEIVED', at: p.received_at, actor: 'system:lending-vault', payload: paymentPayload(p) };
}

/** The audit payload of a buyer payment (what it is and whether it counts toward the order). */
function paymentPayload(p: BuyerPayment): Record<string, unknown> {
  return {
    purchase_order_id: p.purchase_order_id,
    tx_hash: p.tx_hash,
    log_index: p.log_index,
    payer: p.payer,
    amount_usdc: microToUsdc(p.amount_usd_micro),
    counted: p.status === 'COUNTED',
    unapplied_reason: p.unapplied_reason ?? null,
  };
}

/**
 * Settlements (SETTLEMENT#<purchase_order_id>) and buyer payments (BUYER_PAYMENT#<purchase_order_id>).
 * A payment is kept once per log (attribute_not_exists); a counted one adds to the order's
 * `paid_usd_micro` in the same transaction, on condition that the order is not settled. A
 * settlement is created once with attribute_not_exists, in one transaction with the order's
 * `settled_at` on condition that the counted sum is still the settlement's amount, so a purchase
 * order is settled exactly once however often its buyer payments are reported; each
 * repayment and the remainder change by conditional updates (REQUESTED → REPAID/REFUSED), and the
 * settlement completes when nothing is REQUESTED any more.
 */
export class SettlementRepository implements SettlementStore {
  async start(settlement: Settlement, batchIds: string[], actor: string): Promise<boolean> {
    const items: TransactItem[] = [
      {
        Put: {
          TableName: tableName(),
          Item: { ...keys.settlement(settlement.purchase_order_id), entity: 'SETTLEMENT', ...settlement },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: keys.purchaseOrder(settlement.purchase_order_id),
          UpdateExpression: 'SET settled_at = :at',
          ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(settled_at) AND paid_usd_micro = :paid',
          ExpressionAttributeValues: { ':at': settlement.created_at, ':paid': settlement.amount_usd_micro },
        },
      },
    ];
    try {
      await writeOrderAudited(items, batchIds, `SETTLEMENT_STARTED#${settlement.purchase_order_id}`, startedEntry(settlement, actor));
      return true;
    } catch (err) {
      if (err instanceof TransactionConditionError) return false;
      throw err;
    }
  }

  async completeOrderAudits(purchaseOrderId: string, batchIds: string[]): Promise<void> {
    if (fitsOneTransaction(batchIds.length)) return;
    for (const p of await this.payments(purchaseOrderId)) {
      if (p.audit_complete) continue;
      await fanOutOrderEvent(batchIds, paymentEventKey(p), paymentEntry(p));
      await conditionalUpdate({
        Key: keys.buyerPayment(p.purchase_order_id, p.tx_hash, p.log_index),
        UpdateExpression: 'SET audit_complete = :t',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':t': true },
      });
    }
    const settlement = await this.get(purchaseOrderId);
    if (!settlement || settlement.start_audit_complete) return;
    await fanOutOrderEvent(
      batchIds,
      `SETTLEMENT_STARTED#${purchaseOrderId}`,
      startedEntry(settlement, settlement.settled_by ?? 'system:lending-vault'),
    );
    await this.conditional(purchaseOrderId, {
      UpdateExpression: 'SET start_audit_complete = :t',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':t': true },
    });
  }

  async markWritesRequested(purchaseOrderId: string): Promise<void> {
    await this.conditional(purchaseOrderId, {
      UpdateExpression: 'SET writes_requested = :t',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':t': true },
    });
  }

  claimRun(purchaseOrderId: string, runId: string, now: string, until: string): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.settlement(purchaseOrderId),
      UpdateExpression: 'SET run_id = :r, run_until = :u',
      ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(run_until) OR run_until < :now OR run_id = :r)',
      ExpressionAttributeValues: { ':r': runId, ':u': until, ':now': now },
    });
  }

  async releaseRun(purchaseOrderId: string, runId: string): Promise<void> {
    await conditionalUpdate({
      Key: keys.settlement(purchaseOrderId),
      UpdateExpression: 'REMOVE run_id, run_until',
      ConditionExpression: 'run_id = :r',
      ExpressionAttributeValues: { ':r': runId },
    });
  }

  recordSettledProgress(purchaseOrderId: string, from: number, to: number): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.settlement(purchaseOrderId),
      UpdateExpression: 'SET settled_batch_count = :to',
      ConditionExpression:
        from === 0 ? 'attribute_not_exists(settled_batch_count) OR settled_batch_count = :from' : 'settled_batch_count = :from',
      ExpressionAttributeValues: { ':to': to, ':from': from },
    });
  }

  async recordPayment(payment: BuyerPayment, batchIds: string[]): Promise<{ payment: BuyerPayment; created: boolean }> {
    const key = keys.buyerPayment(payment.purchase_order_id, payment.tx_hash, payment.log_index);
    const put = (p: BuyerPayment): TransactItem => ({
      Put: { TableName: tableName(), Item: { ...key, entity: 'BUYER_PAYMENT', ...p }, ConditionExpression: 'attribute_not_exists(PK)' },
    });
    const existing = async () => {
      const stored = (await this.getPayment(payment.purchase_order_id, payment.tx_hash, payment.log_index))!;
      // A redelivered payment event resumes a large order's audit fan-out (each batch once).
      if (!fitsOneTransaction(batchIds.length) && !stored.audit_complete)
        await fanOutOrderEvent(batchIds, paymentEventKey(stored), paymentEntry(stored));
      return { payment: stored, created: false };
    };
    if (payment.status === 'COUNTED') {
      const count: TransactItem = {
        Update: {
          TableName: tableName(),
          Key: keys.purchaseOrder(payment.purchase_order_id),
          UpdateExpression: 'ADD paid_usd_micro :a',
          ConditionExpression: 'attribute_exists(PK) AND #s = :confirmed AND attribute_not_exists(settled_at)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':a': payment.amount_usd_micro, ':confirmed': 'CONFIRMED' },
        },
      };
      try {
        await writeOrderAudited([put(payment), count], batchIds, paymentEventKey(payment), paymentEntry(payment));
        return { payment, created: true };
      } catch (err) {
        if (!(err instanceof TransactionConditionError)) throw err;
        if (err.index === 0) return existing();
        // Settled meanwhile: the payment stays in escrow, unapplied.
        payment = { ...payment, status: 'UNAPPLIED', unapplied_reason: 'AFTER_SETTLEMENT' };
      }
    }
    try {
      await writeOrderAudited([put(payment)], batchIds, paymentEventKey(payment), paymentEntry(payment));
      return { payment, created: true };
    } catch (err) {
      if (err instanceof TransactionConditionError) return existing();
      throw err;
    }
  }

  async payments(purchaseOrderId: string): Promise<BuyerPayment[]> {
    const out: BuyerPayment[] = [];
    const pages = paginateQuery(
      { client: documentClient() },
      {
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.buyerPayments(purchaseOrderId) },
        ConsistentRead: true,
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) out.push(fromItem<BuyerPayment>(item));
    return out;
  }

  async getPayment(purchaseOrderId: string, txHash: string, logIndex: number): Promise<BuyerPayment | null> {
    const r = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.buyerPayment(purchaseOrderId, txHash, logIndex), ConsistentRead: true }),
    );
    return r.Item ? fromItem<BuyerPayment>(r.Item) : null;
  }

  async recordAmountDue(purchaseOrderId: string, amountDueUsdMicro: number): Promise<void> {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.purchaseOrder(purchaseOrderId),
          UpdateExpression: 'SET amount_due_usd_micro = :d',
          ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(amount_due_usd_micro)',
          ExpressionAttributeValues: { ':d': amountDueUsdMicro },
        }),
      );
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }

  requestSettlement(purchaseOrderId: string, request: SettleRequest): Promise<boolean> {
    // The SETTLE work is marked in the order-work index in the same write (docs/api/batches-and-custody.md#resuming-stalled-orders).
    const mark = settleWorkMark(purchaseOrderId, request.requested_at);
    return conditionalUpdate({
      Key: keys.purchaseOrder(purchaseOrderId),
      UpdateExpression: `SET settle_request = if_not_exists(settle_request, :r), ${mark.set} ADD ${mark.add}`,
      ConditionExpression: 'attribute_exists(PK) AND #s = :confirmed AND attribute_not_exists(settled_at)',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':r': request, ':confirmed': 'CONFIRMED', ...mark.values },
    });
  }

  async requestRefund(
    payment: BuyerPayment,
    refund: { refund_id: string; refund_requested_by: string; refund_requested_at: string },
    batchIds: string[],
  ): Promise<boolean> {
    const update: TransactItem = {
      Update: {
        TableName: tableName(),
        Key: keys.buyerPayment(payment.purchase_order_id, payment.tx_hash, payment.log_index),
        UpdateExpression: 'SET #s = :req, refund_id = :id, refund_requested_by = :by, refund_requested_at = :at',
        ConditionExpression: '#s IN (:unapplied, :refused)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':req': 'REFUND_REQUESTED',
          ':id': refund.refund_id,
          ':by': refund.refund_requested_by,
          ':at': refund.refund_requested_at,
          ':unapplied': 'UNAPPLIED',
          ':refused': 'REFUND_REFUSED',
        },
      },
    };
    try {
      const key = `PAYMENT_REFUND_REQUESTED#${payment.purchase_order_id}#${payment.tx_hash}#${payment.log_index}#${refund.refund_requested_at}`;
      await writeOrderAudited([update], batchIds, key, {
        type: 'PAYMENT_REFUND_REQUESTED',
        at: refund.refund_requested_at,
        actor: refund.refund_requested_by,
        payload: { ...paymentPayload(payment), refund_id: refund.refund_id },
      });
      return true;
    } catch (err) {
      if (err instanceof TransactionConditionError) return false;
      throw err;
    }
  }

  async recordRefund(
    purchaseOrderId: string,
    txHash: string,
    logIndex: number,
    outcome: { status: 'REFUNDED' | 'REFUND_REFUSED'; tx_hash?: string },
    at: string,
  ): Promise<void> {
    const payment = await this.getPayment(purchaseOrderId, txHash, logIndex);
    if (payment?.status !== 'REFUND_REQUESTED') return;
    const update: TransactItem = {
      Update: {
        TableName: tableName(),
        Key: keys.buyerPayment(purchaseOrderId, txHash, logIndex),
        UpdateExpression: `SET #s = :s${outcome.tx_hash ? ', refund_tx_hash = :h, refunded_at = :at' : ''}`,
        ConditionExpression: '#s = :req',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':s': outcome.status,
          ':req': 'REFUND_REQUESTED',
          ...(outcome.tx_hash ? { ':h': outcome.tx_hash, ':at': at } : {}),
        },
      },
    };
    const po = await documentClient().send(
      new GetCommand({
        TableName: tableName(),
        Key: keys.purchaseOrder(purchaseOrderId),
        ProjectionExpression: 'batch_ids',
        ConsistentRead: true,
      }),
    );
    const batchIds = outcome.status === 'REFUNDED' ? ((po.Item?.batch_ids as string[] | undefined) ?? []) : [];
    try {
      await writeOrderAudited([update], batchIds, `PAYMENT_REFUNDED#${purchaseOrderId}#${txHash}#${logIndex}`, {
        type: 'PAYMENT_REFUNDED',
        at,
        actor: 'system:lending-vault',
        payload: { ...paymentPayload(payment), refund_id: payment.refund_id ?? null, refund_tx_hash: outcome.tx_hash ?? null },
      });
    } catch (err) {
      if (!(err instanceof TransactionConditionError)) throw err; // recorded already
    }
  }

  async get(purchaseOrderId: string): Promise<Settlement | null> {
    const r = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.settlement(purchaseOrderId), ConsistentRead: true }),
    );
    return r.Item ? fromItem<Settlement>(r.Item) : null;
  }

  async recordRepayment(
    purchaseOrderId: string,
    loanId: string,
    outcome: { status: 'REPAID' | 'REFUSED'; tx_hash?: string },
    at: string,
  ): Promise<void> {
    await this.conditional(purchaseOrderId, {
      UpdateExpression: `SET repayments.#l.#st = :s, updated_at = :at${outcome.tx_hash ? ', repayments.#l.repay_tx_hash = :h' : ''}`,
      ConditionExpression: 'repayments.#l.#st = :req',
      ExpressionAttributeNames: { '#l': loanId, '#st': 'status' },
      ExpressionAttributeValues: {
        ':s': outcome.status,
        ':at': at,
        ':req': 'REQUESTED',
        ...(outcome.tx_hash ? { ':h': outcome.tx_hash } : {}),
      },
    });
    await this.completeIfDone(purchaseOrderId, at);
  }

  async recordRemainder(purchaseOrderId: string, outcome: { status: 'RELEASED' | 'REFUSED'; tx_hash?: string }, at: string): Promise<void> {
    await this.conditional(purchaseOrderId, {
      UpdateExpression: `SET remainder_status = :s, updated_at = :at${outcome.tx_hash ? ', remainder_tx_hash = :h' : ''}`,
      ConditionExpression: 'remainder_status = :req',
      ExpressionAttributeValues: {
        ':s': outcome.status,
        ':at': at,
        ':req': 'REQUESTED',
        ...(outcome.tx_hash ? { ':h': outcome.tx_hash } : {}),
      },
    });
    await this.completeIfDone(purchaseOrderId, at);
  }

  /** STARTED → COMPLETED once no repayment and not the remainder is still REQUESTED. */
  private async completeIfDone(purchaseOrderId: string, at: string): Promise<void> {
    const s = await this.get(purchaseOrderId);
    if (s?.status !== 'STARTED') return;
    if (Object.values(s.repayments).some((r) => r.status === 'REQUESTED') || s.remainder_status === 'REQUESTED') return;
    await this.conditional(purchaseOrderId, {
      UpdateExpression: 'SET #st = :c, completed_at = :at, updated_at = :at',
      ConditionExpression: '#st = :started',
      ExpressionAttributeNames: { '#st': 'status' },
      ExpressionAttributeValues: { ':c': 'COMPLETED', ':at': at, ':started': 'STARTED' },
    });
  }

  /** An update that is a no-op when its condition fails (already applied). */
  private async conditional(
    purchaseOrderId: string,
    update: {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeNames?: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
    },
  ): Promise<void> {
    try {
      await documentClient().send(new UpdateCommand({ TableName: tableName(), Key: keys.settlement(purchaseOrderId), ...update }));
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }
}
