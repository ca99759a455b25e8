import { PayoutTransitionRejected } from '../../domain/errors';
import type { PayoutEvent } from '../../domain/payout-lifecycle';
import type { PayoutResolutionStore } from '../../domain/ports/payouts';
import type { Payout } from '../../domain/records';
import { transactWithAudit, TransactionConditionError, type TransactItem } from './audit-append';
import { OPEN_PAYOUTS, keys } from './keys';
import { PayoutRepository, statusIn, targetOf } from './payout-repo';
import { tableName } from './table';

/**
 * Manual-review resolutions (docs/api/payouts.md#manual-review) on the payout items of PayoutRepository, kept apart
 * so that only the resolve route bundles them. Each is one transaction with its audit entry,
 * conditioned on the payout still being in MANUAL_REVIEW at the attempt read, so of concurrent
 * resolutions exactly one is applied.
 */
export class PayoutResolutionRepository implements PayoutResolutionStore {
  constructor(private readonly payouts: Pick<PayoutRepository, 'get'> = new PayoutRepository()) {}

  /**
   * MANUAL_REVIEW → COMPLETED, paid in cash at the cooperative office (docs/api/payouts.md#manual-review): the payout
   * (CASH_AT_OFFICE, receipt, paid_at, completed_at, elapsed_seconds), the holding balance less
   * the USDC (on the condition that it holds that much) and, for a NET_COFFEE_PAYMENT, the batch's
   * payment PAYMENT_CONFIRMED, with the PAYOUT_PAID_IN_CASH audit entry — one transaction.
   * Errors: PayoutTransitionRejected when the payout is no longer in MANUAL_REVIEW (a concurrent
   * resolution won); an Error when the holding balance does not hold the payout (an invariant broken).
   */
  async resolvePaidInCash(payout: Payout, cash: { receipt_number: string; paid_at: string; actor: string }, at: string): Promise<Payout> {
    const event: PayoutEvent = { type: 'CASH_PAID' };
    const cond = statusIn(event);
    const elapsed = Math.max(0, Math.floor((Date.parse(at) - Date.parse(payout.created_at)) / 1000));
    await this.resolve(
      payout,
      event,
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.payment(payout.payment_id),
            UpdateExpression:
              'SET #s = :to, settlement_channel = :ch, cash_receipt_number = :rn, cash_paid_at = :pa, completed_at = :at, elapsed_seconds = :el, resolved_by = :by, resolved_at = :at, updated_at = :at REMOVE task_token, GSI2PK, GSI2SK',
            ConditionExpression: `${cond.expression} AND attempt = :n`,
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':to': targetOf(event),
              ':ch': 'CASH_AT_OFFICE',
              ':rn': cash.receipt_number,
              ':pa': cash.paid_at,
              ':el': elapsed,
              ':by': cash.actor,
              ':at': at,
              ':n': payout.attempt,
              ...cond.values,
            },
          },
        },
        holdingRelease(payout, at),
      ],
      {
        type: 'PAYOUT_PAID_IN_CASH',
        at,
        actor: cash.actor,
        payload: {
          payment_id: payout.payment_id,
          reason: payout.reason,
          amount_usd_micro: payout.amount_usd_micro,
          settlement_channel: 'CASH_AT_OFFICE',
          receipt_number: cash.receipt_number,
          paid_at: cash.paid_at,
          status: targetOf(event),
        },
      },
      payout.reason === 'NET_COFFEE_PAYMENT' ? { expression: 'payment_status = :ps', values: { ':ps': 'PAYMENT_CONFIRMED' } } : undefined,
    );
    return (await this.payouts.get(payout.payment_id))!;
  }

  /**
   * MANUAL_REVIEW → PROCESSING for a new round of attempts (docs/api/payouts.md#manual-review): the payout at the
   * round's first attempt with the farmer's current phone, the holding balance less the USDC (it
   * leaves the office again), for a NET_COFFEE_PAYMENT the batch's payment INITIATED again, with
   * the PAYOUT_RETRY_REQUESTED audit entry — one transaction. manager_notified_at is removed, so
   * a new manual review notifies the manager again. Errors: as resolvePaidInCash.
   */
  async resolveRetry(
    payout: Payout,
    retry: { round: number; attempt: number; phone: string; recipient_name: string; actor: string },
    at: string,
  ): Promise<Payout> {
    const event: PayoutEvent = { type: 'RETRY_REQUESTED' };
    const cond = statusIn(event);
    await this.resolve(
      payout,
      event,
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.payment(payout.payment_id),
            UpdateExpression:
              'SET #s = :to, attempt = :next, retry_count = :zero, phone = :ph, recipient_name = :rn, resolution_round = :round, resolved_by = :by, resolved_at = :at, updated_at = :at, GSI2PK = :open, GSI2SK = :opensk REMOVE task_token, task_token_attempt, manager_notified_at, provider_order_id',
            ConditionExpression: `${cond.expression} AND attempt = :n`,
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':to': targetOf(event),
              ':next': retry.attempt,
              ':zero': 0,
              ':ph': retry.phone,
              ':rn': retry.recipient_name,
              ':round': retry.round,
              ':by': retry.actor,
              ':at': at,
              ':open': OPEN_PAYOUTS,
              ':opensk': keys.openPayoutSortKey(at, payout.payment_id),
              ':n': payout.attempt,
              ...cond.values,
            },
          },
        },
        holdingRelease(payout, at),
      ],
      {
        type: 'PAYOUT_RETRY_REQUESTED',
        at,
        actor: retry.actor,
        payload: {
          payment_id: payout.payment_id,
          reason: payout.reason,
          amount_usd_micro: payout.amount_usd_micro,
          round: retry.round,
          first_attempt: retry.attempt,
          previous_phone_last3: payout.phone.slice(-3),
          phone_last3: retry.phone.slice(-3),
          phone_changed: retry.phone !== payout.phone,
          status: targetOf(event),
        },
      },
      payout.reason === 'NET_COFFEE_PAYMENT' ? { expression: 'payment_status = :ps', values: { ':ps': 'INITIATED' } } : undefined,
    );
    return (await this.payouts.get(payout.payment_id))!;
  }

  /** A resolution's transaction; the payout item (index 0) failing its condition is PayoutTransitionRejected. */
  private async resolve(
    payout: Payout,
    event: PayoutEvent,
    items: TransactItem[],
    entry: { type: string; at: string; actor: string; payload: Record<string, unknown> },
    batchSet?: { expression: string; values: Record<string, unknown> },
  ): Promise<void> {
    try {
      await transactWithAudit({ batchId: payout.batch_id, items, entry, batchSet });
    } catch (err) {
      if (!(err instanceof TransactionConditionError)) throw err;
      if (err.index === 0) throw new PayoutTransitionRejected(payout.payment_id, event.type);
      throw new Error(
        `holding balance of cooperative ${payout.cooperative_id} does not hold payout ${payout.payment_id} (${payout.amount_usd_micro} micro-USDC)`,
      );
    }
  }
}

/** The holding-balance update that takes a payout's USDC out again (conditioned on the balance holding it). */
function holdingRelease(payout: Payout, at: string): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.holding(payout.cooperative_id),
      UpdateExpression: 'ADD held_usd_micro :minus, payouts_held :less SET updated_at = :at',
      ConditionExpression: 'held_usd_micro >= :amt AND payouts_held >= :one',
      ExpressionAttributeValues: { ':minus': -payout.amount_usd_micro, ':less': -1, ':amt': payout.amount_usd_micro, ':one': 1, ':at': at },
    },
  };
}
