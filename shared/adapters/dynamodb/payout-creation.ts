import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DomainError, PayoutSequenceConflict } from '../../domain/errors';
import type { Payout } from '../../domain/records';
import type { PayoutCreationLimits } from '../../domain/payout-limits';
import { microToUsdc } from '../../domain/money';
import { keys } from './keys';
import { cancellationCodes, documentClient, isTransactionCanceled, tableName } from './table';

/**
 * Creates a PENDING payout and its (batch, reason) guard in one transaction; the batch's payout
 * sequence advances on the condition that it is still `expectedSeq`. With `limits.batch_value_ugx`
 * the batch's `farmer_payouts_ugx` grows by `payout.counted_ugx` on the condition that it stays
 * within the value; with `payout.manual_day` and `limits.daily_limit_usd_micro` the cooperative's
 * total of that day grows by the payout's micro-USDC on the condition that it stays within the cap.
 * Conditions, not reads: two concurrent creations cannot pass a limit together.
 * Errors: DUPLICATE_PAYOUT (409) when a payout for the batch and reason exists (also when a
 * concurrent transaction cancelled ours and the guard is there by now);
 * DAILY_PAYOUT_LIMIT_REACHED (422); PAYOUT_EXCEEDS_BATCH_VALUE (422) when the batch's sequence
 * was still `expectedSeq`; `PayoutSequenceConflict` when a payout for another reason took the
 * sequence number, or a concurrent transaction cancelled ours before any guard existed (retry).
 */
export async function createPendingPayout(payout: Payout, expectedSeq: number, limits: PayoutCreationLimits = {}): Promise<void> {
  const counted = limits.batch_value_ugx !== undefined ? (payout.counted_ugx ?? 0) : 0;
  const room = limits.batch_value_ugx !== undefined ? limits.batch_value_ugx - counted : undefined;
  if (room !== undefined && room < 0) throw exceedsBatchValue(payout, limits.batch_value_ugx!);
  const daily =
    payout.manual_day && limits.daily_limit_usd_micro !== undefined ? limits.daily_limit_usd_micro - payout.amount_usd_micro : undefined;
  if (daily !== undefined && daily < 0) throw dailyLimitReached(payout, limits.daily_limit_usd_micro!);
  const batchValues: Record<string, unknown> = { ':seq': expectedSeq, ':next': expectedSeq + 1 };
  let batchUpdate = 'SET payout_seq = :next';
  let batchCondition = 'payout_seq = :seq';
  if (room !== undefined) {
    batchUpdate += ' ADD farmer_payouts_ugx :counted';
    batchCondition += ' AND (attribute_not_exists(farmer_payouts_ugx) OR farmer_payouts_ugx <= :room)';
    Object.assign(batchValues, { ':counted': counted, ':room': room });
  }
  // The batch's net coffee payment now exists: it leaves the awaiting-payout index.
  if (payout.reason === 'NET_COFFEE_PAYMENT') batchUpdate += ' REMOVE GSI2PK, GSI2SK';
  try {
    await documentClient().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...keys.payoutGuard(payout.batch_id, payout.reason),
                entity: 'PAYOUT_GUARD',
                payment_id: payout.payment_id,
                created_at: payout.created_at,
              },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          {
            Update: {
              TableName: tableName(),
              Key: keys.batch(payout.batch_id),
              UpdateExpression: batchUpdate,
              ConditionExpression: batchCondition,
              ExpressionAttributeValues: batchValues,
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...keys.payment(payout.payment_id),
                ...keys.paymentGsi(payout.batch_id, payout.created_at, payout.payment_id),
                ...keys.openPayoutGsi(payout.created_at, payout.payment_id),
                entity: 'PAYMENT',
                ...payout,
              },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          ...(daily !== undefined
            ? [
                {
                  Update: {
                    TableName: tableName(),
                    Key: keys.manualPayoutDay(payout.cooperative_id, payout.manual_day!),
                    UpdateExpression:
                      'ADD total_usd_micro :amt, payouts :one SET entity = :e, cooperative_id = :c, #day = :d, expires_at_epoch = :exp',
                    ConditionExpression: 'attribute_not_exists(total_usd_micro) OR total_usd_micro <= :room',
                    ExpressionAttributeNames: { '#day': 'day' },
                    ExpressionAttributeValues: {
                      ':amt': payout.amount_usd_micro,
                      ':one': 1,
                      ':e': 'MANUAL_PAYOUT_DAY',
                      ':c': payout.cooperative_id,
                      ':d': payout.manual_day!,
                      ':exp': Math.floor(Date.parse(`${payout.manual_day!}T00:00:00Z`) / 1000) + MANUAL_PAYOUT_DAY_TTL_S,
                      ':room': daily,
                    },
                  },
                },
              ]
            : []),
        ],
      }),
    );
  } catch (err) {
    if (!isTransactionCanceled(err)) throw err;
    const codes = cancellationCodes(err);
    const duplicate = () => new DomainError('DUPLICATE_PAYOUT', `A ${payout.reason} payout for batch ${payout.batch_id} already exists.`);
    if (codes[0] === 'ConditionalCheckFailed') throw duplicate();
    if (codes[3] === 'ConditionalCheckFailed') throw dailyLimitReached(payout, limits.daily_limit_usd_micro!);
    if (codes[1] === 'ConditionalCheckFailed' || codes[2] === 'ConditionalCheckFailed' || codes.includes('TransactionConflict')) {
      // A conflicting transaction cancels ours before the guard's condition is evaluated: when
      // the guard exists by now, an identical request won (409), not the sequence (retry).
      const guard = await documentClient().send(
        new GetCommand({
          TableName: tableName(),
          Key: keys.payoutGuard(payout.batch_id, payout.reason),
          ProjectionExpression: 'PK',
          ConsistentRead: true,
        }),
      );
      if (guard.Item) throw duplicate();
      if (codes[1] === 'ConditionalCheckFailed' && room !== undefined) {
        // The batch's condition failed with its sequence still `expectedSeq`: the value is what stopped it
        // (the running total only grows with the sequence, and shrinks only when a payout is discarded).
        const old = (
          await documentClient().send(
            new GetCommand({
              TableName: tableName(),
              Key: keys.batch(payout.batch_id),
              ProjectionExpression: 'payout_seq, farmer_payouts_ugx',
              ConsistentRead: true,
            }),
          )
        ).Item;
        if (old && Number(old.payout_seq) === expectedSeq && Number(old.farmer_payouts_ugx ?? 0) > room) {
          throw exceedsBatchValue(payout, limits.batch_value_ugx!, Number(old.farmer_payouts_ugx ?? 0));
        }
      }
      throw new PayoutSequenceConflict();
    }
    throw err;
  }
}

/** How long a cooperative's daily manual-payout total is kept after its day began (TTL): 8 days. */
const MANUAL_PAYOUT_DAY_TTL_S = 8 * 86_400;

function exceedsBatchValue(payout: Payout, valueUgx: number, paidUgx = 0): DomainError {
  return new DomainError(
    'PAYOUT_EXCEEDS_BATCH_VALUE',
    `This payout (${payout.counted_ugx ?? 0} UGX at the quoted rate) would take the farmer payouts of batch ${payout.batch_id} (${paidUgx} UGX so far) above the batch's value of ${valueUgx} UGX; nothing was created.`,
    {
      details: {
        batch_id: payout.batch_id,
        batch_value_ugx: valueUgx,
        paid_ugx: paidUgx,
        payout_ugx: payout.counted_ugx ?? 0,
        exchange_rate: payout.exchange_rate,
      },
    },
  );
}

function dailyLimitReached(payout: Payout, limitMicro: number): DomainError {
  return new DomainError(
    'DAILY_PAYOUT_LIMIT_REACHED',
    `This payout of ${microToUsdc(payout.amount_usd_micro)} USDC would take cooperative ${payout.cooperative_id}'s manual payouts of ${payout.manual_day} (UTC) above the daily limit of ${microToUsdc(limitMicro)} USDC; nothing was created.`,
    {
      details: {
        cooperative_id: payout.cooperative_id,
        day: payout.manual_day,
        daily_limit_usdc: microToUsdc(limitMicro),
        requested_usdc: microToUsdc(payout.amount_usd_micro),
      },
    },
  );
}
