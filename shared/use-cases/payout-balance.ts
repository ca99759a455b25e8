import { microToDecimalString } from '../domain/money';
import { balanceUsdMicro } from '../domain/payout-balance';
import type { Notifier } from '../domain/ports/messaging';
import type { MerchantBalanceReader, PayoutBalanceAlarmStore, PayoutProvider } from '../domain/ports/payouts';
import { logger } from '../runtime/logger';
import type { MetricsRecorder } from '../runtime/metrics';

/** One payout provider the monitor reads, by the name its metric and alarm state carry. */
export interface MonitoredProvider {
  name: string;
  provider: MerchantBalanceReader;
}

/** The ports of the merchant balance monitor. */
export interface PayoutBalanceMonitorDeps {
  /** Every configured payout provider, primary first. */
  providers: readonly MonitoredProvider[];
  /** The service's USD→UGX rate source (the primary provider's quote), asked only when a balance is held in UGX. */
  rates: Pick<PayoutProvider, 'quote'>;
  alarms: PayoutBalanceAlarmStore;
  /** The managers'/ops topic (`publish`). */
  notifier: Pick<Notifier, 'publish'>;
  metrics: MetricsRecorder;
  now: () => Date;
}

/** What the monitor found for one provider: its balance in micro-USD (null when it could not be read) and what it did. */
export interface BalanceReading {
  provider: string;
  balance_usd_micro: number | null;
  /** BELOW/ABOVE the threshold, or UNREADABLE (logged; the next run reads again). */
  state: 'BELOW' | 'ABOVE' | 'UNREADABLE';
  /** An ops notification was published by this run (the first reading below after one above). */
  notified: boolean;
}

/** The event attribute of the ops notification (a subscription can filter on it). */
export const BALANCE_LOW_EVENT = 'payout.balance_low';

/**
 * The scheduled merchant balance check (docs/operations.md#merchant-balance-alarm). For each
 * provider: its merchant balance (`merchantBalance`), in micro-USD (UGX converted at the rate
 * source's current rate, rounded down), is recorded as the metric PayoutMerchantBalanceUsd in USD
 * (dimension `provider`, and once more without it, whose Minimum is the lowest provider's, for the
 * CloudWatch alarm). Below `thresholdUsdMicro`, the provider's alarm state moves OK → LOW in one
 * conditioned write and only the run that made that change publishes the ops notification (event
 * `payout.balance_low`): once per crossing, not at every reading; a publish that fails puts the
 * state back, so the next run notifies. At or above the threshold the state moves back to OK
 * (the next crossing notifies again). A provider that cannot be read is logged and skipped; the
 * others are still read. Never throws for one provider's failure.
 */
export async function monitorPayoutBalances(
  deps: PayoutBalanceMonitorDeps,
  opts: { thresholdUsdMicro: number },
): Promise<BalanceReading[]> {
  let rate: Promise<string> | undefined;
  const ugxPerUsd = () => (rate ??= deps.rates.quote({}).then((q) => q.rate));
  const out: BalanceReading[] = [];
  for (const { name, provider } of deps.providers) {
    let usdMicro: number;
    try {
      usdMicro = await balanceUsdMicro(await provider.merchantBalance(), ugxPerUsd);
    } catch (err) {
      logger.warn('merchant balance could not be read; the next run tries again', { provider: name, error: err as Error });
      out.push({ provider: name, balance_usd_micro: null, state: 'UNREADABLE', notified: false });
      continue;
    }
    const usd = Number(microToDecimalString(usdMicro));
    deps.metrics.count('PayoutMerchantBalanceUsd', { provider: name }, usd);
    deps.metrics.count('PayoutMerchantBalanceUsd', {}, usd);
    const at = deps.now().toISOString();
    if (usdMicro >= opts.thresholdUsdMicro) {
      try {
        if (await deps.alarms.markOk(name, at, usdMicro))
          logger.info('merchant balance back above the alarm threshold', { provider: name, balance_usd: usd });
      } catch (err) {
        logger.warn('merchant balance above the threshold, but its alarm state could not be recorded; the next run tries again', {
          provider: name,
          error: err as Error,
        });
      }
      out.push({ provider: name, balance_usd_micro: usdMicro, state: 'ABOVE', notified: false });
      continue;
    }
    let notified = false;
    try {
      if (await deps.alarms.markLow(name, at, usdMicro)) {
        await notifyLow(deps, name, usdMicro, opts.thresholdUsdMicro, at);
        notified = true;
      }
    } catch (err) {
      logger.error('merchant balance below the alarm threshold, but the ops notification failed; the next run tries again', {
        provider: name,
        balance_usd: usd,
        error: err as Error,
      });
    }
    out.push({ provider: name, balance_usd_micro: usdMicro, state: 'BELOW', notified });
  }
  return out;
}

/** Publishes the ops notification of one crossing; on failure the LOW mark of `at` is taken back (then rethrows). */
async function notifyLow(
  deps: PayoutBalanceMonitorDeps,
  name: string,
  usdMicro: number,
  thresholdUsdMicro: number,
  at: string,
): Promise<void> {
  const balance = microToDecimalString(usdMicro);
  const threshold = microToDecimalString(thresholdUsdMicro);
  try {
    await deps.notifier.publish({
      subject: `Payout provider ${name}: merchant balance ${balance} USD is below ${threshold} USD`,
      message: [
        `The merchant balance at payout provider ${name} is ${balance} USD (UGX converted at the current rate), below the alarm threshold of ${threshold} USD (PAYOUT_BALANCE_ALARM_USD).`,
        'Payouts fail with INSUFFICIENT_BALANCE once it cannot cover them: top up the merchant account with the provider.',
        'This notice is sent once per crossing; the next one comes after the balance has been back at or above the threshold.',
      ].join('\n'),
      attributes: { event: BALANCE_LOW_EVENT, provider: name, balance_usd: balance, threshold_usd: threshold },
    });
  } catch (err) {
    await deps.alarms.undoLow(name, at);
    throw err;
  }
  logger.warn('merchant balance below the alarm threshold; ops notified', {
    provider: name,
    balance_usd: Number(balance),
    threshold_usd: Number(threshold),
  });
}
