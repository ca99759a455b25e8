import { payoutBalanceAlarmUsdMicro, payoutBalanceMonitorDeps } from '../../shared/composition/payouts';
import { instrumented } from '../../shared/runtime/instrument';
import { monitorPayoutBalances, type BalanceReading } from '../../shared/use-cases/payout-balance';

/**
 * Scheduled merchant balance check (EventBridge, every 5 minutes; docs/operations.md#merchant-balance-alarm):
 * reads each payout provider's merchant balance, records it in USD as the metric
 * PayoutMerchantBalanceUsd (the CloudWatch alarm's input), and below PAYOUT_BALANCE_ALARM_USD
 * notifies the ops once per crossing.
 */
async function run(): Promise<{ balances: BalanceReading[] }> {
  return { balances: await monitorPayoutBalances(payoutBalanceMonitorDeps(), { thresholdUsdMicro: payoutBalanceAlarmUsdMicro() }) };
}

/** The task, its business metrics flushed (EMF) when it ends. */
export const handler = instrumented(run);
