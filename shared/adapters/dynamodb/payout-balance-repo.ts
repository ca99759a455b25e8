import type { PayoutBalanceAlarmStore } from '../../domain/ports/payouts';
import { keys } from './keys';
import { conditionalUpdate } from './table';

/**
 * The low-balance alarm state of each payout provider (docs/operations.md#merchant-balance-alarm):
 * one item `PAYOUT_BALANCE#<provider>` whose `alarm_state` (LOW or OK) changes only by conditioned
 * updates, so a crossing is recorded (and notified) exactly once however many monitors read the
 * balance at the same time.
 */
export class PayoutBalanceAlarmRepository implements PayoutBalanceAlarmStore {
  /** OK or never recorded → LOW since `at`; false when it was LOW already. */
  markLow(provider: string, at: string, balanceUsdMicro: number): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.payoutBalance(provider),
      UpdateExpression: 'SET entity = :e, #prov = :p, alarm_state = :low, low_since = :at, updated_at = :at, balance_usd_micro = :b',
      ConditionExpression: 'attribute_not_exists(alarm_state) OR alarm_state <> :low',
      ExpressionAttributeNames: { '#prov': 'provider' },
      ExpressionAttributeValues: { ':e': 'PAYOUT_BALANCE', ':p': provider, ':low': 'LOW', ':at': at, ':b': balanceUsdMicro },
    });
  }

  /** LOW since `at` → OK (only that crossing: a later one is left alone). */
  async undoLow(provider: string, at: string): Promise<void> {
    await conditionalUpdate({
      Key: keys.payoutBalance(provider),
      UpdateExpression: 'SET alarm_state = :ok REMOVE low_since',
      ConditionExpression: 'alarm_state = :low AND low_since = :at',
      ExpressionAttributeValues: { ':ok': 'OK', ':low': 'LOW', ':at': at },
    });
  }

  /** LOW → OK at `at`; false when it was not LOW. */
  markOk(provider: string, at: string, balanceUsdMicro: number): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.payoutBalance(provider),
      UpdateExpression: 'SET alarm_state = :ok, updated_at = :at, balance_usd_micro = :b REMOVE low_since',
      ConditionExpression: 'alarm_state = :low',
      ExpressionAttributeValues: { ':ok': 'OK', ':low': 'LOW', ':at': at, ':b': balanceUsdMicro },
    });
  }
}
