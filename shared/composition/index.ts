import { readMintedBatch } from '../adapters/dynamodb/batch-repo';
import { decimalStringToMicro } from '../domain/money';
import { DEFAULT_MANUAL_PAYOUT_DAILY_LIMIT_USDC } from '../domain/payout-limits';
import { readCooperative, readFarmer } from '../adapters/dynamodb/registry-repo';
import { createEvmLedgerFromEnv } from '../adapters/ledger/evm-ledger';
import { kmsLedgerAccount } from '../adapters/ledger/kms-signer';
import { createTraceLogReaderFromEnv } from '../adapters/ledger/trace-log-reader';
import { createVaultReaderFromEnv } from '../adapters/ledger/vault-reader';
import { HttpPayoutOrderReader } from '../adapters/payout-provider/http-order-reader';
import { HttpPayoutProvider } from '../adapters/payout-provider/http-payout-provider';
import { envOr, requireEnv, secret } from '../config';
import type { Ledger, TraceLogReader } from '../domain/ports/ledger';
import type { VaultLedger, VaultReader } from '../domain/ports/lending';
import type { PayoutOrderReader, PayoutProvider } from '../domain/ports/payouts';
import type { BatchDeps } from '../use-cases/batches';
import type { ChainEventDeps } from '../use-cases/chain-events';
import type { LedgerWriterDeps } from '../use-cases/ledger-writer';
import type { PayoutWebhookDeps } from '../use-cases/payout-webhook';
import type { PayoutCreationDeps, PayoutDeps } from '../use-cases/payouts';
import { vaultWriteHandlers } from '../use-cases/vault-write-handlers';
import { vaultWriteOutcomes } from '../use-cases/vault-writes';
import { anchorOutcomes } from './anchoring';
import { depositRepo, vaultWrites } from './deposits';
import { ledgerWriteQueue, payoutRequestQueue } from './queues';
import { batchRepo, custodyRepo, loanRepo, now, payoutRepo, registryRepo, settlementRepo, webhookReceipts } from './repos';
import { payoutWorkflow } from './workflow';

/**
 * Composition: builds the adapters from configuration and hands use cases their ports. Clients
 * are created once per container (module scope, lazily); endpoints come from the environment, so
 * the same code reaches AWS or the local stack. Split by outside system (./repos, ./queues,
 * ./workflow, ./registry, ./notifier, ./custody, ./audit, ./eudr, and this module for the ledger,
 * the payout provider and the use-case dependency sets) so each Lambda bundle carries only the
 * clients its handler uses.
 */

let ledgerP: Promise<Ledger & VaultLedger> | undefined;
let providerP: Promise<PayoutProvider> | undefined;

/**
 * The EVM ledger. The signer is chosen by the settings: with LEDGER_SIGNER_KMS_KEY_ID (AWS) the
 * KMS key signs (no private key in the function), else the private key LEDGER_SIGNER_KEY (locally
 * the key file of LOCAL_DATA_DIR) or its Secrets Manager secret.
 */
function ledger(): Promise<Ledger & VaultLedger> {
  const kmsKey = process.env.LEDGER_SIGNER_KMS_KEY_ID?.trim();
  ledgerP ??= kmsKey
    ? kmsLedgerAccount(kmsKey).then((account) => createEvmLedgerFromEnv(process.env, account))
    : secret('LEDGER_SIGNER_KEY').then((key) => createEvmLedgerFromEnv({ ...process.env, LEDGER_SIGNER_KEY: key.trim() }));
  ledgerP.catch(() => (ledgerP = undefined));
  return ledgerP;
}

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

/**
 * The payout provider's HTTP API at PAYOUT_PROVIDER_URL; credentials are the JSON
 * `{api_key, api_secret}` in PAYOUT_PROVIDER_CREDENTIALS or its Secrets Manager secret.
 */
function payoutProvider(): Promise<PayoutProvider> {
  providerP ??= payoutProviderAccess().then((access) => new HttpPayoutProvider(access));
  providerP.catch(() => (providerP = undefined));
  return providerP;
}

/**
 * An adapter whose construction (reading its secret) waits until a method is first called, so a
 * request that a rule refuses never needs the ledger's or the provider's configuration.
 */
function lazy<T extends object>(load: () => Promise<T>): T {
  return new Proxy({} as T, {
    get: (_target, prop) =>
      prop === 'then'
        ? undefined
        : async (...args: unknown[]) => {
            const real = (await load()) as Record<PropertyKey, (...a: unknown[]) => unknown>;
            return real[prop]!(...args);
          },
  });
}

/** Ports of the payout use cases (creation, state-machine tasks, reconciliation). */
export function payoutDeps(): PayoutDeps {
  return {
    registry: registryRepo(),
    batches: batchRepo(),
    payouts: payoutRepo(),
    provider: lazy(payoutProvider),
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
    provider: lazy(payoutProvider),
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

let traceLogReaderV: TraceLogReader | undefined;

/**
 * The trace log read back from LEDGER_RPC_URL / LEDGER_CHAIN_ID / TRACE_LOG_ADDRESS (no signing
 * key), built on first use so a request refused before the ledger check needs no ledger configuration.
 */
function traceLogReader(): TraceLogReader {
  return { stageRecordedAt: (txHash, logIndex) => (traceLogReaderV ??= createTraceLogReaderFromEnv()).stageRecordedAt(txHash, logIndex) };
}

/** Ports of the chain-event webhook: those of payouts, the webhook receipts, and the trace log to check events against. */
export function chainEventDeps(): ChainEventDeps {
  return {
    ...payoutCreationDeps(),
    registry: { getFarmer: readFarmer, getCooperative: readCooperative },
    receipts: webhookReceipts(),
    traceLog: traceLogReader(),
  };
}

let orderReaderP: Promise<PayoutOrderReader> | undefined;

/**
 * The payout provider's orders, read with one attempt and no retry loop (its callers' senders
 * retry); same URL and credentials as {@link payoutProvider}, without its order creation and
 * retry policy, which the webhook's bundle then does not carry.
 */
function payoutOrderReader(): Promise<PayoutOrderReader> {
  orderReaderP ??= payoutProviderAccess().then((access) => new HttpPayoutOrderReader(access));
  orderReaderP.catch(() => (orderReaderP = undefined));
  return orderReaderP;
}

/** Ports of the payout provider's webhook: the payout store, the provider's orders (to confirm each event), receipts, workflow. */
export function payoutWebhookDeps(): PayoutWebhookDeps {
  return { payouts: payoutRepo(), provider: lazy(payoutOrderReader), receipts: webhookReceipts(), workflow: payoutWorkflow(), now };
}

/** Ports of batch submission. */
export function batchDeps(): BatchDeps {
  return { registry: registryRepo(), batches: batchRepo(), custody: custodyRepo(), ledgerQueue: ledgerWriteQueue(), now };
}

/**
 * Ports of the single ledger writer (the ledger's signer key is read on first use). With the
 * vault configured (need 'vault': LENDING_VAULT_ADDRESS), vault writes are landed by the same
 * signer instance and their outcomes handed to the deposit and loan use cases.
 */
export function ledgerWriterDeps(): LedgerWriterDeps {
  const base = {
    custody: custodyRepo(),
    ledger: lazy(ledger),
    batches: batchRepo(),
    payoutQueue: payoutRequestQueue(),
    now,
    ...(envOr('AUDIT_ANCHOR_ADDRESS', '') ? { anchors: anchorOutcomes() } : {}),
  };
  if (!envOr('LENDING_VAULT_ADDRESS', '')) return base;
  const handlers = vaultWriteHandlers({
    deposits: depositRepo(),
    vaultWrites: vaultWrites(),
    loans: loanRepo(),
    settlements: settlementRepo(),
    payoutQueue: payoutRequestQueue(),
    now,
  });
  return { ...base, vault: { ledger: lazy(ledger), reader: lazy(vaultReader), outcomes: vaultWriteOutcomes(handlers) } };
}

let vaultReaderP: Promise<VaultReader> | undefined;

/** The vault read back (no signing key): LEDGER_RPC_URL, LEDGER_CHAIN_ID, LENDING_VAULT_ADDRESS, VAULT_ASSET_ADDRESS. */
export function vaultReader(): Promise<VaultReader> {
  vaultReaderP ??= Promise.resolve().then(() => createVaultReaderFromEnv());
  vaultReaderP.catch(() => (vaultReaderP = undefined));
  return vaultReaderP;
}
