import { StepFunctionsPayoutWorkflow } from '../adapters/aws/payout-workflow';
import { readMintedBatch } from '../adapters/dynamodb/batch-repo';
import { PayoutResolutionRepository } from '../adapters/dynamodb/payout-resolution-repo';
import { PayoutBalanceAlarmRepository } from '../adapters/dynamodb/payout-balance-repo';
import { PayoutReceiptRepository } from '../adapters/dynamodb/payout-receipt-repo';
import { readCooperative, readFarmer } from '../adapters/dynamodb/registry-repo';
import { HttpPayoutOrderReader } from '../adapters/payout-provider/http-order-reader';
import { HttpPayoutProvider } from '../adapters/payout-provider/http-payout-provider';
import { FailoverPayoutProvider, type NamedPayoutProvider } from '../adapters/payout-provider/failover';
import { PawaPayProvider } from '../adapters/payout-provider/pawapay';
import { envOr, requireEnv, secret } from '../config';
import { decimalStringToMicro } from '../domain/money';
import { DEFAULT_PAYOUT_BALANCE_ALARM_USD } from '../domain/payout-balance';
import { DEFAULT_MANUAL_PAYOUT_DAILY_LIMIT_USDC } from '../domain/payout-limits';
import type {
  MerchantBalanceReader,
  PayoutBalanceAlarmStore,
  PayoutOrderReader,
  PayoutProvider,
  PayoutReceiptStore,
  PayoutResolutionStore,
  PayoutWorkflow,
} from '../domain/ports/payouts';
import type { ManualReviewDeps } from '../use-cases/manual-review';
import type { MonitoredProvider, PayoutBalanceMonitorDeps } from '../use-cases/payout-balance';
import type { PayoutReceiptDeps } from '../use-cases/payout-receipt';
import { metrics } from '../runtime/metrics';
import type { PayoutWebhookDeps } from '../use-cases/payout-webhook';
import type { PayoutCreationDeps, PayoutDeps } from '../use-cases/payouts';
import { once, onFirstUse } from './once';
import { batchRepo, notifier, now, payoutRepo, registryRepo, webhookReceipts } from './platform';

/**
 * Farmer payouts: creation (POST /payments/farmer-payout and the batch payouts the ledger writer
 * requests), the payout state machine's tasks, reconciliation, the payout provider's webhook and
 * manual review (docs/api/payouts.md). The provider's configuration and credentials are read when
 * the provider is first called, so a request that a rule refuses never needs them.
 */

/** The payout state machine's client (Step Functions, PAYOUT_STATE_MACHINE_ARN). */
const payoutWorkflow = (): PayoutWorkflow => once(payoutWorkflow, () => new StepFunctionsPayoutWorkflow());

/**
 * Where and how to reach the payout provider: PAYOUT_PROVIDER_URL and the JSON
 * `{api_key, api_secret}` in PAYOUT_PROVIDER_CREDENTIALS or its Secrets Manager secret.
 * Errors: when the secret is missing or not that JSON.
 */
async function payoutProviderAccess(): Promise<{ baseUrl: string; apiKey: string; apiSecret: string }> {
  const creds = JSON.parse(await secret('PAYOUT_PROVIDER_CREDENTIALS')) as { api_key?: string; api_secret?: string };
  if (!creds.api_key || !creds.api_secret) throw new Error('PAYOUT_PROVIDER_CREDENTIALS must be JSON {"api_key","api_secret"}');
  return { baseUrl: requireEnv('PAYOUT_PROVIDER_URL'), apiKey: creds.api_key, apiSecret: creds.api_secret };
}

/** The payout providers the service can speak, by their PAYOUT_PROVIDERS name. */
const PAYOUT_PROVIDER_NAMES = ['provider-api', 'pawapay'] as const;
type PayoutProviderName = (typeof PAYOUT_PROVIDER_NAMES)[number];

/**
 * PAYOUT_PROVIDERS: the configured providers in order, primary first, comma-separated (default
 * `provider-api`, today's single provider). Throws naming the variable on an unknown or repeated name.
 */
function configuredPayoutProviders(): PayoutProviderName[] {
  const raw = envOr('PAYOUT_PROVIDERS', 'provider-api');
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const bad = names.filter((n) => !(PAYOUT_PROVIDER_NAMES as readonly string[]).includes(n));
  if (!names.length || bad.length || new Set(names).size !== names.length)
    throw new Error(`PAYOUT_PROVIDERS must list distinct names of ${PAYOUT_PROVIDER_NAMES.join(', ')}, got ${JSON.stringify(raw)}`);
  return names as PayoutProviderName[];
}

/**
 * pawaPay's access: PAWAPAY_API_URL, PAWAPAY_USD_UGX_RATE and the JSON `{api_token,
 * callback_public_keys}` in PAWAPAY_CREDENTIALS or its Secrets Manager secret (docs/operations.md#pawapay).
 * Errors: when the secret is missing or not that JSON.
 */
async function pawaPayAccess(): Promise<{ baseUrl: string; apiToken: string; usdUgxRate: string; callbackPublicKeys: string[] }> {
  const creds = JSON.parse(await secret('PAWAPAY_CREDENTIALS')) as { api_token?: string; callback_public_keys?: unknown };
  if (!creds.api_token) throw new Error('PAWAPAY_CREDENTIALS must be JSON {"api_token", "callback_public_keys": [PEM]}');
  const keys = Array.isArray(creds.callback_public_keys)
    ? creds.callback_public_keys.filter((k): k is string => typeof k === 'string')
    : [];
  return {
    baseUrl: requireEnv('PAWAPAY_API_URL'),
    apiToken: creds.api_token,
    usdUgxRate: requireEnv('PAWAPAY_USD_UGX_RATE'),
    callbackPublicKeys: keys,
  };
}

/** One provider's adapter, built from its configuration. */
async function buildProvider(name: PayoutProviderName): Promise<PayoutProvider & MerchantBalanceReader> {
  if (name === 'pawapay') return new PawaPayProvider(await pawaPayAccess());
  return new HttpPayoutProvider(await payoutProviderAccess());
}

/**
 * The configured payout providers as one port (docs/api/payouts.md#payout-providers-and-failover): PAYOUT_PROVIDERS in
 * order behind the failover rule of FailoverPayoutProvider; each provider's configuration and secret
 * are read at the first call.
 */
const payoutProvider = (): PayoutProvider => once(payoutProvider, () => new FailoverPayoutProvider(namedPayoutProviders()));

/**
 * Each provider of PAYOUT_PROVIDERS by its name, primary first; each adapter (its configuration and
 * secret) is built at its first call, so a provider no request reaches is never configured.
 */
const namedPayoutProviders = (): (NamedPayoutProvider & { provider: MerchantBalanceReader })[] =>
  once(namedPayoutProviders, () =>
    configuredPayoutProviders().map((name) => ({
      name,
      provider: onFirstUse<PayoutProvider & MerchantBalanceReader>(async () => buildProvider(name)),
    })),
  );

/**
 * The payout provider's orders, read with one attempt and no retry loop (its callers' senders
 * retry); same URL and credentials as {@link payoutProvider}, without its order creation and
 * retry policy, which the webhook's bundle then does not carry.
 */
const payoutOrderReader = (): PayoutOrderReader =>
  once(payoutOrderReader, () =>
    onFirstUse<PayoutOrderReader>(async () => {
      const reader = new HttpPayoutOrderReader(await payoutProviderAccess());
      // Its orders are the provider API's: a settlement it confirms records that provider on the payout.
      return {
        findOrderByReference: async (reference: string) => {
          const order = await reader.findOrderByReference(reference);
          return order && { ...order, provider: 'provider-api' };
        },
      };
    }),
  );

/** Ports of the payout use cases (state-machine tasks, batch payouts, reconciliation). */
export function payoutDeps(): PayoutDeps {
  return {
    registry: registryRepo(),
    batches: batchRepo(),
    payouts: payoutRepo(),
    provider: payoutProvider(),
    workflow: payoutWorkflow(),
    now,
  };
}

/** Ports of POST /payments/farmer-payout: point reads of farmers and batches (not their whole repositories), the payout store, provider and workflow. */
export function payoutCreationDeps(): PayoutCreationDeps {
  return {
    registry: { getFarmer: readFarmer, getCooperative: readCooperative },
    batches: { get: readMintedBatch },
    payouts: payoutRepo(),
    provider: payoutProvider(),
    workflow: payoutWorkflow(),
    now,
  };
}

/**
 * The cap on one cooperative's manual payouts per UTC day, in micro-USDC: `MANUAL_PAYOUT_DAILY_LIMIT_USDC`
 * (USDC, at most 6 decimals, > 0), default DEFAULT_MANUAL_PAYOUT_DAILY_LIMIT_USDC (10,000).
 * Throws naming the variable when it is not a positive amount.
 */
export function manualPayoutDailyLimitUsdMicro(): number {
  const raw = envOr('MANUAL_PAYOUT_DAILY_LIMIT_USDC', String(DEFAULT_MANUAL_PAYOUT_DAILY_LIMIT_USDC));
  let micro: number;
  try {
    micro = decimalStringToMicro(raw.trim());
  } catch {
    micro = 0;
  }
  if (!(micro > 0))
    throw new Error(`MANUAL_PAYOUT_DAILY_LIMIT_USDC must be a positive USDC amount (at most 6 decimals), got ${JSON.stringify(raw)}`);
  return micro;
}

/** Ports of the payout provider's webhook: the payout store, the provider's orders (to confirm each event), receipts, workflow. */
export function payoutWebhookDeps(): PayoutWebhookDeps {
  return { payouts: payoutRepo(), provider: payoutOrderReader(), receipts: webhookReceipts(), workflow: payoutWorkflow(), now };
}

/** pawaPay alone (its callbacks concern only its own orders), its orders tagged `pawapay`. */
const pawaPayOnly = (): FailoverPayoutProvider =>
  once(
    pawaPayOnly,
    () => new FailoverPayoutProvider([{ name: 'pawapay', provider: onFirstUse<PayoutProvider>(async () => buildProvider('pawapay')) }]),
  );

/** Ports of pawaPay's callback route: the payout store, pawaPay's orders (to confirm each callback), receipts, workflow. */
export function pawaPayCallbackDeps() {
  return { payouts: payoutRepo(), provider: pawaPayOnly(), receipts: webhookReceipts(), workflow: payoutWorkflow(), now };
}

/** pawaPay's callback signing keys (PEM), as JSON: the "secret" the callback route verifies signatures with. */
export async function pawaPayCallbackKeys(): Promise<string> {
  return JSON.stringify((await pawaPayAccess()).callbackPublicKeys);
}

/** Manual-review resolutions of payouts. */
const payoutResolutions = (): PayoutResolutionStore => once(payoutResolutions, () => new PayoutResolutionRepository());

/** The ports of a manual-review resolution (docs/api/payouts.md#manual-review): the table and the payout state machine. */
export function manualReviewDeps(): ManualReviewDeps {
  return { payouts: payoutRepo(), resolutions: payoutResolutions(), registry: registryRepo(), workflow: payoutWorkflow(), now };
}

/** The low-balance alarm state of each provider (the table). */
const payoutBalanceAlarms = (): PayoutBalanceAlarmStore => once(payoutBalanceAlarms, () => new PayoutBalanceAlarmRepository());

/** Every configured payout provider by its PAYOUT_PROVIDERS name, primary first (the balance monitor reads each). */
const payoutProviders = (): MonitoredProvider[] => namedPayoutProviders();

/**
 * The ports of the merchant balance monitor (docs/operations.md#merchant-balance-alarm): every
 * provider, the primary one's quotes as the rate source, the alarm state in the table, the
 * managers'/ops topic and the EMF metrics.
 */
export function payoutBalanceMonitorDeps(): PayoutBalanceMonitorDeps {
  return {
    providers: payoutProviders(),
    rates: payoutProvider(),
    alarms: payoutBalanceAlarms(),
    notifier: notifier(),
    metrics,
    now,
  };
}

/**
 * The merchant balance below which the ops are alerted, in micro-USD: `PAYOUT_BALANCE_ALARM_USD`
 * (USD, at most 6 decimals, ≥ 0), default DEFAULT_PAYOUT_BALANCE_ALARM_USD (1,000).
 * Throws naming the variable when it is not such an amount.
 */
export function payoutBalanceAlarmUsdMicro(): number {
  const raw = envOr('PAYOUT_BALANCE_ALARM_USD', String(DEFAULT_PAYOUT_BALANCE_ALARM_USD));
  let micro: number;
  try {
    micro = decimalStringToMicro(raw.trim());
  } catch {
    micro = -1;
  }
  if (!(micro >= 0)) throw new Error(`PAYOUT_BALANCE_ALARM_USD must be a USD amount ≥ 0 (at most 6 decimals), got ${JSON.stringify(raw)}`);
  return micro;
}

/** The SMS receipt marks on payouts (the table). */
const payoutReceipts = (): PayoutReceiptStore => once(payoutReceipts, () => new PayoutReceiptRepository());

/** The ports of the farmer's SMS receipt (docs/operations.md#sms-receipt-to-the-farmer): the marks and SNS SMS. */
export function payoutReceiptDeps(): PayoutReceiptDeps {
  return { receipts: payoutReceipts(), notifier: notifier(), now };
}
