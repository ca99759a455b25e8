import { PayoutWorkflow } from './adapters/aws/payout-workflow';
import { mintQueue, payoutRequestQueue } from './adapters/aws/queues';
import { SnsNotifier } from './adapters/aws/sns-notifier';
import { BatchRepository } from './adapters/dynamodb/batch-repo';
import { PayoutRepository } from './adapters/dynamodb/payout-repo';
import { RegistryRepository } from './adapters/dynamodb/registry-repo';
import { BundledAlertAreasForestCheck } from './adapters/forest-check/bundled-alert-areas';
import { createEvmLedgerFromEnv } from './adapters/ledger/evm-ledger';
import { HttpPayoutProvider } from './adapters/payout-provider/http-payout-provider';
import { requireEnv, secret } from './config';
import type { Ledger, PayoutProvider } from './domain/ports';
import type { BatchDeps } from './use-cases/batches';
import type { PayoutDeps } from './use-cases/payouts';

/**
 * The one composition module: builds the adapters from configuration and hands use cases their
 * ports. Clients are created once per container (module scope, lazily); endpoints come from the
 * environment, so the same code reaches AWS or the local stack.
 */

const now = () => new Date();
let registry: RegistryRepository | undefined;
let batches: BatchRepository | undefined;
let payouts: PayoutRepository | undefined;
let workflow: PayoutWorkflow | undefined;
let ledgerP: Promise<Ledger> | undefined;
let providerP: Promise<PayoutProvider> | undefined;

export const registryRepo = () => (registry ??= new RegistryRepository());
export const batchRepo = () => (batches ??= new BatchRepository());
export const payoutRepo = () => (payouts ??= new PayoutRepository());
export const payoutWorkflow = () => (workflow ??= new PayoutWorkflow());
export const forestCheck = () => new BundledAlertAreasForestCheck(now);
export const notifier = () => new SnsNotifier();

/** The EVM ledger; the signer key comes from LEDGER_SIGNER_KEY or its Secrets Manager secret. */
export function ledger(): Promise<Ledger> {
  ledgerP ??= secret('LEDGER_SIGNER_KEY').then((key) => createEvmLedgerFromEnv({ ...process.env, LEDGER_SIGNER_KEY: key.trim() }));
  ledgerP.catch(() => (ledgerP = undefined));
  return ledgerP;
}

/**
 * The payout provider's HTTP API at PAYOUT_PROVIDER_URL; credentials are the JSON
 * `{api_key, api_secret}` in PAYOUT_PROVIDER_CREDENTIALS or its Secrets Manager secret.
 */
export function payoutProvider(): Promise<PayoutProvider> {
  providerP ??= secret('PAYOUT_PROVIDER_CREDENTIALS').then((raw) => {
    const creds = JSON.parse(raw) as { api_key?: string; api_secret?: string };
    if (!creds.api_key || !creds.api_secret) throw new Error('PAYOUT_PROVIDER_CREDENTIALS must be JSON {"api_key","api_secret"}');
    return new HttpPayoutProvider({ baseUrl: requireEnv('PAYOUT_PROVIDER_URL'), apiKey: creds.api_key, apiSecret: creds.api_secret });
  });
  providerP.catch(() => (providerP = undefined));
  return providerP;
}

export async function payoutDeps(): Promise<PayoutDeps> {
  return { registry: registryRepo(), batches: batchRepo(), payouts: payoutRepo(), provider: await payoutProvider(), workflow: payoutWorkflow(), now };
}

export async function batchDeps(): Promise<BatchDeps> {
  return { registry: registryRepo(), batches: batchRepo(), ledger: await ledger(), mintQueue: mintQueue(), payoutQueue: payoutRequestQueue(), now };
}

export { now };
