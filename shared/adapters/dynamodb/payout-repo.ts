import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PayoutTransitionRejected } from '../../domain/errors';
import type { ApplyOutcome, PayoutStore, SettlementFacts } from '../../domain/ports/payouts';
import {
  allowedFrom,
  attemptNumber,
  isFinal,
  RETRY_WAIT_SECONDS,
  roundOf,
  statusAfter,
  type PayoutEvent,
} from '../../domain/payout-lifecycle';
import type { Payout, PayoutStatus } from '../../domain/records';
import type { PayoutCreationLimits } from '../../domain/payout-limits';
import type { PayoutFailure } from '../../domain/payout-failures';
import { transactWithAudit, TransactionConditionError, type TransactItem } from './audit-append';
import { decodePageToken, encodePageToken } from './page-token';
import { AWAITING_PAYOUT, OPEN_PAYOUTS, keys, fromItem, webhookReceiptItem } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';
import { createPendingPayout } from './payout-creation';

/**
 * Payouts (payment type FARMER_PAYOUT). Every status change is an update conditioned on the
 * statuses the pure transition function allows and on the attempt it concerns, so replays,
 * reordering and concurrent writers cannot pay twice or move a payout backwards.
 */
export class PayoutRepository implements PayoutStore {
  /**
   * Creates a PENDING payout with its guards in one transaction (see `createPendingPayout`).
   * Errors: DUPLICATE_PAYOUT (409), DAILY_PAYOUT_LIMIT_REACHED (422), PAYOUT_EXCEEDS_BATCH_VALUE
   * (422), `PayoutSequenceConflict`.
   */
  createPending(payout: Payout, expectedSeq: number, limits: PayoutCreationLimits = {}): Promise<void> {
    return createPendingPayout(payout, expectedSeq, limits);
  }

  /**
   * Removes a payout whose provider order could not be placed (provider unreachable), with its
   * guard, so the caller may simply retry (docs/api/payouts.md#creating-a-payout), and takes back what it counted against
   * its batch's value and its cooperative's day, in the same transaction. Only a PENDING payout can be removed.
   */
  async discardUnsent(payout: Payout): Promise<void> {
    const counted = payout.counted_ugx ?? 0;
    const batchSets: string[] = [];
    const batchValues: Record<string, unknown> = {};
    if (payout.reason === 'NET_COFFEE_PAYMENT') {
      // back into the awaiting-payout index, so reconciliation asks again
      batchSets.push('SET GSI2PK = :k, GSI2SK = :s');
      Object.assign(batchValues, { ':k': AWAITING_PAYOUT, ':s': keys.awaitingPayoutGsi(new Date().toISOString(), payout.batch_id).GSI2SK });
    }
    if (counted > 0) {
      batchSets.push('ADD farmer_payouts_ugx :back');
      batchValues[':back'] = -counted;
    }
    await documentClient().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Delete: {
              TableName: tableName(),
              Key: keys.payment(payout.payment_id),
              ConditionExpression: '#s = :p AND updated_at = :u',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':p': 'PENDING', ':u': payout.updated_at },
            },
          },
          {
            Delete: {
              TableName: tableName(),
              Key: keys.payoutGuard(payout.batch_id, payout.reason),
              ConditionExpression: 'payment_id = :id',
              ExpressionAttributeValues: { ':id': payout.payment_id },
            },
          },
          ...(batchSets.length
            ? [
                {
                  Update: {
                    TableName: tableName(),
                    Key: keys.batch(payout.batch_id),
                    UpdateExpression: batchSets.join(' '),
                    ConditionExpression: 'attribute_exists(PK)',
                    ExpressionAttributeValues: batchValues,
                  },
                },
              ]
            : []),
          ...(payout.manual_day
            ? [
                {
                  Update: {
                    TableName: tableName(),
                    Key: keys.manualPayoutDay(payout.cooperative_id, payout.manual_day),
                    UpdateExpression: 'ADD total_usd_micro :back, payouts :minus',
                    ConditionExpression: 'attribute_exists(total_usd_micro)',
                    ExpressionAttributeValues: { ':back': -payout.amount_usd_micro, ':minus': -1 },
                  },
                },
              ]
            : []),
        ],
      }),
    );
  }

  /** Marks a PENDING payout whose first order is unknown (the order call and its look-up both unreachable). */
  async markOrderUnknown(payout: Payout, at: string): Promise<Payout> {
    const r = await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.payment(payout.payment_id),
        UpdateExpression: 'SET order_unknown = :t, updated_at = :at',
        ConditionExpression: '#s = :p',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':t': true, ':at': at, ':p': 'PENDING' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return fromItem<Payout>(r.Attributes!);
  }

  /**
   * Claims the PENDING, order-unknown payout of (batch, reason) for one retry: one conditional
   * update removes the mark, so of concurrent retries exactly one resumes it. Null when none.
   */
  async claimOrderUnknown(batchId: string, reason: Payout['reason'], at: string): Promise<Payout | null> {
    const guard = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.payoutGuard(batchId, reason), ConsistentRead: true }),
    );
    const paymentId = guard.Item?.payment_id as string | undefined;
    if (!paymentId) return null;
    try {
      const r = await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.payment(paymentId),
          UpdateExpression: 'SET updated_at = :at REMOVE order_unknown',
          ConditionExpression: '#s = :p AND order_unknown = :t',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':t': true, ':at': at, ':p': 'PENDING' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return fromItem<Payout>(r.Attributes!);
    } catch (err) {
      if (isConditionalCheckFailed(err)) return null;
      throw err;
    }
  }

  /** PENDING → PROCESSING once the provider accepted the first order (audit: PAYOUT_PROCESSING). */
  async markProcessing(
    payout: Payout,
    order: { order_id: string; amount_ugx: number; exchange_rate: string; provider?: string },
    at: string,
  ): Promise<Payout> {
    return this.transition(
      payout,
      { type: 'ORDER_ACCEPTED' },
      1,
      {
        set: `provider_order_id = :o, amount_ugx = :ugx, estimated_ugx = :ugx, exchange_rate = :rate${order.provider ? ', provider = :prov' : ''}`,
        values: {
          ':o': order.order_id,
          ':ugx': order.amount_ugx,
          ':rate': order.exchange_rate,
          ...(order.provider ? { ':prov': order.provider } : {}),
        },
      },
      at,
      {
        type: 'PAYOUT_PROCESSING',
        payload: {
          provider_order_id: order.order_id,
          amount_usd_micro: payout.amount_usd_micro,
          estimated_ugx: order.amount_ugx,
          exchange_rate: order.exchange_rate,
          phone_last3: payout.phone.slice(-3),
        },
      },
    );
  }

  /** PENDING → FAILED when the provider rejected the first order at creation (audit: PAYOUT_FAILED). */
  async markFirstOrderRejected(payout: Payout, failure: PayoutFailure, at: string): Promise<Payout> {
    return this.transition(
      payout,
      { type: 'ORDER_FAILED' },
      1,
      { set: 'last_failure_reason = :r, failure_reason = :fr', values: { ':r': failure.detail, ':fr': failure.reason } },
      at,
      { type: 'PAYOUT_FAILED', payload: { failure_reason: failure.reason, provider_reason: failure.detail } },
    );
  }

  /**
   * Starts `attempt` and parks its task token on the payout (the webhook resumes the execution
   * with it), before the attempt's order is placed, so that whatever the provider answers next
   * finds the attempt and the token in place. Returns null when done, or the current payout when
   * its status no longer allows the attempt (e.g. it was settled or failed meanwhile).
   */
  async registerAttempt(payoutId: string, attempt: number, token: string, at: string): Promise<Payout | null> {
    const cond = statusIn({ type: 'ATTEMPT_STARTED', attempt });
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.payment(payoutId),
          // The attempt's provider is set again with its order (setAttemptOrder): a new attempt may fail over elsewhere.
          UpdateExpression: 'SET attempt = :n, task_token = :t, task_token_attempt = :n, updated_at = :at, GSI2SK = :open REMOVE provider',
          ConditionExpression: `${cond.expression} AND (attempt = :n OR attempt = :prev)`,
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':n': attempt,
            ':prev': attempt - 1,
            ':t': token,
            ':at': at,
            ':open': keys.openPayoutSortKey(at, payoutId),
            ...cond.values,
          },
        }),
      );
      return null;
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
      return this.get(payoutId);
    }
  }

  /** Records the provider order of the payout's current attempt (no-op if the attempt moved on). */
  async setAttemptOrder(payoutId: string, attempt: number, orderId: string, provider?: string): Promise<void> {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.payment(payoutId),
          UpdateExpression: `SET provider_order_id = :o${provider ? ', provider = :p' : ''}`,
          ConditionExpression: 'attempt = :n',
          ExpressionAttributeValues: { ':o': orderId, ':n': attempt, ...(provider ? { ':p': provider } : {}) },
        }),
      );
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }

  /**
   * Records a settlement durably (docs/api/inbound-webhooks.md#payout-provider-webhook): the payout becomes COMPLETED with completed_at,
   * elapsed_seconds, amount_ugx, exchange_rate and the mobile-money transaction id; for a
   * NET_COFFEE_PAYMENT the batch's payment becomes PAYMENT_CONFIRMED; a PAYMENT_CONFIRMED audit
   * entry is appended; the webhook id (if any) is remembered — all in one transaction.
   * A settlement for another attempt than the payout's current one, or for a payout already final,
   * changes nothing (IGNORED); a webhook id seen before is DUPLICATE_WEBHOOK.
   */
  async recordSettlement(payout: Payout, s: SettlementFacts, at: string, webhook?: { source: string; id: string }): Promise<ApplyOutcome> {
    // completed_at is when the service recorded the settlement (the payment is confirmed from then on);
    // the provider's own settlement time is kept beside it as settled_at.
    const elapsed = Math.max(0, Math.floor((Date.parse(at) - Date.parse(payout.created_at)) / 1000));
    const cond = statusIn({ type: 'SETTLED' });
    const items: TransactItem[] = [];
    if (webhook) items.push(webhookReceipt(webhook, at));
    items.push({
      Update: {
        TableName: tableName(),
        Key: keys.payment(payout.payment_id),
        UpdateExpression: `SET #s = :done, completed_at = :at, settled_at = :sat, elapsed_seconds = :el, amount_ugx = :ugx, exchange_rate = :rate, mobile_money_transaction_id = :mm, provider_order_id = :o, updated_at = :at${s.provider ? ', provider = :prov' : ''} REMOVE GSI2PK, GSI2SK`,
        ConditionExpression: `${cond.expression} AND attempt = :n`,
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':done': targetOf({ type: 'SETTLED' }),
          ':sat': s.settled_at,
          ':el': elapsed,
          ':ugx': s.amount_ugx,
          ':rate': s.exchange_rate,
          ':mm': s.mobile_money_transaction_id,
          ':o': s.order_id,
          ':at': at,
          ':n': s.attempt,
          ...(s.provider ? { ':prov': s.provider } : {}),
          ...cond.values,
        },
      },
    });
    return this.applyWithAudit(
      payout,
      items,
      webhook,
      {
        type: 'PAYMENT_CONFIRMED',
        at,
        actor: 'payout-provider',
        payload: {
          payment_id: payout.payment_id,
          reason: payout.reason,
          attempt: s.attempt,
          provider_order_id: s.order_id,
          amount_usd_micro: payout.amount_usd_micro,
          amount_ugx: s.amount_ugx,
          exchange_rate: s.exchange_rate,
          mobile_money_transaction_id: s.mobile_money_transaction_id,
          settled_at: s.settled_at,
        },
      },
      payout.reason === 'NET_COFFEE_PAYMENT' ? { expression: 'payment_status = :ps', values: { ':ps': 'PAYMENT_CONFIRMED' } } : undefined,
    );
  }

  /**
   * Records that the provider failed `attempt` (order.failed): the payout becomes FAILED, once.
   * Same replay and ordering rules as recordSettlement.
   */
  async recordFailure(
    payout: Payout,
    attempt: number,
    failure: PayoutFailure,
    at: string,
    webhook?: { source: string; id: string },
  ): Promise<ApplyOutcome> {
    const cond = statusIn({ type: 'ORDER_FAILED' });
    const items: TransactItem[] = [];
    if (webhook) items.push(webhookReceipt(webhook, at));
    items.push({
      Update: {
        TableName: tableName(),
        Key: keys.payment(payout.payment_id),
        UpdateExpression: 'SET #s = :failed, last_failure_reason = :r, failure_reason = :fr, updated_at = :at, GSI2SK = :open',
        ConditionExpression: `${cond.expression} AND attempt = :n`,
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':failed': targetOf({ type: 'ORDER_FAILED' }),
          ':r': failure.detail,
          ':fr': failure.reason,
          ':at': at,
          ':n': attempt,
          ':open': keys.openPayoutSortKey(at, payout.payment_id),
          ...cond.values,
        },
      },
    });
    return this.applyWithAudit(payout, items, webhook, {
      type: 'PAYOUT_FAILED',
      at,
      actor: webhook ? 'payout-provider' : 'payout-state-machine',
      payload: {
        payment_id: payout.payment_id,
        reason: payout.reason,
        attempt,
        failure_reason: failure.reason,
        provider_reason: failure.detail,
      },
    });
  }

  /** FAILED → RETRY_n (retry_count n) after attempt n definitively failed (audit: PAYOUT_RETRY_SCHEDULED). */
  async scheduleRetry(payout: Payout, retry: 1 | 2 | 3, at: string): Promise<Payout> {
    // `retry` is the step within the payout's round: the attempt that failed is that step of the current round.
    return this.transition(
      payout,
      { type: 'RETRY_SCHEDULED', retry },
      attemptNumber(roundOf(payout.attempt), retry),
      { set: 'retry_count = :rc', values: { ':rc': retry } },
      at,
      {
        type: 'PAYOUT_RETRY_SCHEDULED',
        payload: { retry, wait_seconds: RETRY_WAIT_SECONDS[retry - 1] },
      },
    );
  }

  /**
   * All retries exhausted: MANUAL_REVIEW; the USDC is added to the cooperative's holding balance;
   * for a NET_COFFEE_PAYMENT the batch's payment label becomes MANUAL_REVIEW; audit entry appended.
   * Returns false when the payout was already in MANUAL_REVIEW (a retried task).
   */
  async markManualReview(payout: Payout, at: string): Promise<boolean> {
    const cond = statusIn({ type: 'RETRIES_EXHAUSTED' });
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: keys.payment(payout.payment_id),
          UpdateExpression: 'SET #s = :mr, updated_at = :at REMOVE task_token, GSI2PK, GSI2SK',
          ConditionExpression: cond.expression,
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':mr': targetOf({ type: 'RETRIES_EXHAUSTED' }), ':at': at, ...cond.values },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: keys.holding(payout.cooperative_id),
          UpdateExpression: 'ADD held_usd_micro :amt, payouts_held :one SET cooperative_id = :c, updated_at = :at',
          ExpressionAttributeValues: { ':amt': payout.amount_usd_micro, ':one': 1, ':c': payout.cooperative_id, ':at': at },
        },
      },
    ];
    const outcome = await this.applyWithAudit(
      payout,
      items,
      undefined,
      {
        type: 'MANUAL_REVIEW',
        at,
        actor: 'payout-state-machine',
        payload: {
          payment_id: payout.payment_id,
          reason: payout.reason,
          amount_usd_micro: payout.amount_usd_micro,
          retry_count: payout.retry_count,
          last_failure_reason: payout.last_failure_reason ?? null,
        },
      },
      payout.reason === 'NET_COFFEE_PAYMENT' ? { expression: 'payment_status = :ps', values: { ':ps': 'MANUAL_REVIEW' } } : undefined,
    );
    return outcome === 'APPLIED';
  }

  /** Records that the cooperative manager was notified of the manual review. */
  async markManagerNotified(payoutId: string, at: string): Promise<void> {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.payment(payoutId),
        UpdateExpression: 'SET manager_notified_at = :at',
        ExpressionAttributeValues: { ':at': at },
      }),
    );
  }

  /** Payouts not yet final whose last activity is older than `before` (ISO), oldest first. */
  async openBefore(before: string, limit: number): Promise<Payout[]> {
    const r = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :before',
        ExpressionAttributeValues: { ':pk': OPEN_PAYOUTS, ':before': before },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) => fromItem<Payout>(i));
  }

  async get(payoutId: string): Promise<Payout | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.payment(payoutId), ConsistentRead: true }));
    return r.Item ? fromItem<Payout>(r.Item) : null;
  }

  /**
   * Payments of a batch, oldest first. `nextToken` is opaque (base64url of the last key).
   * Returns the page, the total count and the token of the next page (absent on the last page).
   */
  async listByBatch(batchId: string, limit: number, nextToken?: string): Promise<{ items: Payout[]; total: number; next_token?: string }> {
    const pk = keys.paymentsOfBatch(batchId);
    const start = nextToken ? decodePageToken(nextToken, pk) : undefined;
    const [page, count] = await Promise.all([
      documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      ),
      this.countByBatch(pk),
    ]);
    const items = (page.Items ?? []).map((i) => fromItem<Payout>(i));
    return { items, total: count, ...(page.LastEvaluatedKey ? { next_token: encodePageToken(page.LastEvaluatedKey)! } : {}) };
  }

  private async countByBatch(pk: string): Promise<number> {
    let total = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const r = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          Select: 'COUNT',
          ExclusiveStartKey: start,
        }),
      );
      total += r.Count ?? 0;
      start = r.LastEvaluatedKey;
    } while (start);
    return total;
  }

  /** Remembers a webhook id that changed nothing, so its replays are recognised. */
  async rememberWebhook(webhook: { source: string; id: string }, at: string): Promise<void> {
    try {
      await documentClient().send(new PutCommand(webhookReceipt(webhook, at).Put as ConstructorParameters<typeof PutCommand>[0]));
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }

  private async applyWithAudit(
    payout: Payout,
    items: TransactItem[],
    webhook: { source: string; id: string } | undefined,
    entry: { type: string; at: string; actor: string; payload: Record<string, unknown> },
    batchSet?: { expression: string; values: Record<string, unknown> },
  ): Promise<ApplyOutcome> {
    try {
      await transactWithAudit({ batchId: payout.batch_id, items, entry, batchSet });
      return 'APPLIED';
    } catch (err) {
      if (!(err instanceof TransactionConditionError)) throw err;
      if (webhook && err.index === 0) return 'DUPLICATE_WEBHOOK';
      if (webhook) await this.rememberWebhook(webhook, entry.at);
      return 'IGNORED';
    }
  }

  /**
   * Applies one event with its audit entry in one transaction, on the condition that the payout
   * is in a status the event allows and at `attempt`. Errors: PayoutTransitionRejected otherwise.
   */
  private async transition(
    payout: Payout,
    event: PayoutEvent,
    attempt: number,
    extra: { set: string; values: Record<string, unknown> },
    at: string,
    audit: { type: string; payload: Record<string, unknown> },
  ): Promise<Payout> {
    const cond = statusIn(event);
    const to = targetOf(event);
    const final = isFinal(to);
    try {
      await transactWithAudit({
        batchId: payout.batch_id,
        items: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.payment(payout.payment_id),
              UpdateExpression: `SET #s = :to, updated_at = :at, ${extra.set}${final ? ' REMOVE GSI2PK, GSI2SK' : ', GSI2SK = :open'}`,
              ConditionExpression: `${cond.expression} AND attempt = :n`,
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: {
                ':to': to,
                ':at': at,
                ':n': attempt,
                ...extra.values,
                ...(final ? {} : { ':open': keys.openPayoutSortKey(at, payout.payment_id) }),
                ...cond.values,
              },
            },
          },
        ],
        entry: {
          type: audit.type,
          at,
          actor: 'payout-service',
          payload: { payment_id: payout.payment_id, reason: payout.reason, attempt, status: to, ...audit.payload },
        },
      });
    } catch (err) {
      if (err instanceof TransactionConditionError) throw new PayoutTransitionRejected(payout.payment_id, event.type);
      throw err;
    }
    return (await this.get(payout.payment_id))!;
  }
}

/** The status `event` leads to (the domain's table); ATTEMPT_STARTED has none. */
export function targetOf(event: PayoutEvent): PayoutStatus {
  const to = statusAfter(event);
  if (!to) throw new Error(`${event.type} keeps the status`);
  return to;
}

/**
 * The condition "status is one of the statuses the event may be applied from", with its values
 * (placeholders :f0, :f1, …; the expression names status #s).
 */
export function statusIn(event: PayoutEvent): { expression: string; values: Record<string, string> } {
  const from = allowedFrom(event);
  return {
    expression: `#s IN (${from.map((_, i) => `:f${i}`).join(', ')})`,
    values: Object.fromEntries(from.map((st, i) => [`:f${i}`, st])),
  };
}

function webhookReceipt(webhook: { source: string; id: string }, at: string): TransactItem & { Put: NonNullable<TransactItem['Put']> } {
  return {
    Put: {
      TableName: tableName(),
      Item: webhookReceiptItem(webhook.source, webhook.id, at),
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}
