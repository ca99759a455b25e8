import { readMintedBatch, readMintedBatches } from '../adapters/dynamodb/batch-repo';
import { DepositRepository } from '../adapters/dynamodb/deposit-repo';
import { VaultWriteRepository } from '../adapters/dynamodb/ledger-tx';
import { createVaultReaderFromEnv } from '../adapters/ledger/vault-reader';
import { HttpOnRamp } from '../adapters/onramp/http-onramp';
import { FilePriceFeed } from '../adapters/price-feed/file-price-feed';
import { HttpPriceFeed } from '../adapters/price-feed/http-price-feed';
import { envOr, requireEnv, secret } from '../config';
import { DEFAULT_LOAN_APR } from '../domain/lending';
import { loanTermDays } from '../domain/loan-terms';
import type { Hex } from 'viem';
import type { DepositStore, LoanStore, OnRamp, PriceFeed, VaultReader, VaultWriteQueue, VaultWriteStore } from '../domain/ports/lending';
import type { CreditScoreDeps } from '../use-cases/credit-score';
import type { DepositDeps } from '../use-cases/deposits';
import type { LoanDeps } from '../use-cases/loans';
import type { OrderWorkDeps } from '../use-cases/order-work';
import type { PayoutDeps } from '../use-cases/payouts';
import type { SettlementDeps } from '../use-cases/settlement';
import { vaultWriteQueue } from '../use-cases/vault-writes';
import { evidenceKeeping, orderWorkIndex, orderWorkQueue, purchaseOrderDeps } from './batches';
import { once, onFirstUse } from './once';
import { payoutDeps } from './payouts';
import {
  batchRepo,
  custodyRepo,
  ledgerWriteQueue,
  loanRepo,
  now,
  payoutRepo,
  registryRepo,
  settlementRepo,
  webhookReceipts,
} from './platform';

/**
 * Lending (docs/api/lending.md): MFI deposits into the vault, the vault read back, loans against
 * batches (origination, disbursement, write-off), the coffee price feed and the credit score, and
 * the settlement of purchase orders on their buyer payments. Vault writes are stored and queued for
 * the single ledger writer (./ledger), so no route but the writer holds the signing key; the vault
 * is read from LEDGER_RPC_URL / LEDGER_CHAIN_ID / LENDING_VAULT_ADDRESS / VAULT_ASSET_ADDRESS.
 */

/** The vault's annual rate: `LOAN_APR` (decimal string), default DEFAULT_LOAN_APR "0.12" (docs/api/lending.md#loans). */
const loanApr = (): string => envOr('LOAN_APR', DEFAULT_LOAN_APR);

/** The vault read back (no signing key), built at its first call. */
export const vaultReader = (): VaultReader => once(vaultReader, () => onFirstUse<VaultReader>(() => createVaultReaderFromEnv()));

/** Vault writes stored for the single ledger writer. */
export const vaultWriteRepo = (): VaultWriteStore => once(vaultWriteRepo, () => new VaultWriteRepository());

/** Vault writes for the single ledger writer (stored, then queued on LEDGER_WRITE_QUEUE_URL). */
export const vaultWrites = (): VaultWriteQueue => once(vaultWrites, () => vaultWriteQueue(vaultWriteRepo(), ledgerWriteQueue()));

// ---------------------------------------------------------------- MFI deposits

/** MFI deposits. */
export const depositRepo = (): DepositStore => once(depositRepo, () => new DepositRepository());

/**
 * The fiat on-ramp's HTTP API at ONRAMP_URL with the JSON `{api_key, api_secret}` of
 * ONRAMP_CREDENTIALS (or its Secrets Manager secret), built at its first call.
 * Errors: the call rejects when ONRAMP_CREDENTIALS is not that JSON.
 */
const onRamp = (): OnRamp =>
  once(onRamp, () =>
    onFirstUse<OnRamp>(async () => {
      const creds = JSON.parse(await secret('ONRAMP_CREDENTIALS')) as { api_key?: string; api_secret?: string };
      if (!creds.api_key || !creds.api_secret) throw new Error('ONRAMP_CREDENTIALS must be JSON {"api_key","api_secret"}');
      return new HttpOnRamp({ baseUrl: requireEnv('ONRAMP_URL'), apiKey: creds.api_key, apiSecret: creds.api_secret });
    }),
  );

/** Where deposits are delivered: LEDGER_TREASURY_ADDRESS, the ledger signer's address. Errors: missing or not an address. */
async function treasury(): Promise<Hex> {
  const a = requireEnv('LEDGER_TREASURY_ADDRESS');
  if (!/^0x[0-9a-fA-F]{40}$/.test(a)) throw new Error('LEDGER_TREASURY_ADDRESS must be a 0x address');
  return a as Hex;
}

/** Ports of the deposit use cases (create, webhook, ledger-writer callbacks). */
export function depositDeps(): DepositDeps {
  return { deposits: depositRepo(), onRamp: onRamp(), receipts: webhookReceipts(), vaultWrites: vaultWrites(), treasury, now };
}

/** GET /mfi/vault: the vault read back, the rate LOAN_APR, the loans by due date (table) for PAR30. */
export function mfiVaultDeps(): { vault: VaultReader; apr: string; loans: Pick<LoanStore, 'activeDueBy'>; now: () => Date } {
  return { vault: vaultReader(), apr: loanApr(), loans: loanRepo(), now };
}

// ---------------------------------------------------------------- loans, prices, credit score

/**
 * The coffee price feed (docs/api/lending.md#price-feed): the local file `PRICE_FEED_FILE` when
 * that variable is set (the local stack sets it to `$LOCAL_DATA_DIR/price-feed.json`; read at each
 * use), else the published source at `PRICE_FEED_URL` with the optional bearer token
 * `PRICE_FEED_TOKEN` (its Secrets Manager secret in AWS; empty or `none`: no token), cached 60 s
 * per container and configured at its first call.
 */
const priceFeed = (): PriceFeed =>
  once(priceFeed, () => {
    const file = envOr('PRICE_FEED_FILE', '');
    if (file) return new FilePriceFeed(file);
    return onFirstUse<PriceFeed>(
      () =>
        new HttpPriceFeed({
          url: requireEnv('PRICE_FEED_URL'),
          token: async () => {
            if (!envOr('PRICE_FEED_TOKEN', '') && !envOr('PRICE_FEED_TOKEN_SECRET_ARN', '')) return undefined; // a source without a token
            const t = (await secret('PRICE_FEED_TOKEN', 'PRICE_FEED_TOKEN_SECRET_ARN')).trim();
            return t === '' || t.toLowerCase() === 'none' ? undefined : t;
          },
        }),
    );
  });

/**
 * Ports of loan origination and loan reads (POST /loans, GET /loans/{id}, GET /batch/{id}/loan):
 * the rate LOAN_APR and the term `LOAN_TERM_DAYS` (whole days, default 180).
 * Errors: RangeError for a malformed LOAN_TERM_DAYS.
 */
export function loanDeps(): LoanDeps {
  return {
    registry: registryRepo(),
    batches: batchRepo(),
    loans: loanRepo(),
    payouts: payoutRepo(),
    prices: priceFeed(),
    ledgerQueue: ledgerWriteQueue(),
    apr: loanApr(),
    termDays: loanTermDays(process.env.LOAN_TERM_DAYS),
    now,
  };
}

/** Ports of the loan disbursement (payout-request consumer): the payouts' and the loans. */
export function loanDisbursementDeps(): PayoutDeps & { loans: LoanStore } {
  return { ...payoutDeps(), loans: loanRepo() };
}

/**
 * Ports of the scheduled write-off of defaulted loans (ledger-write-reconciler): the loans by due date
 * and vault writes for the single ledger writer.
 */
export function loanWriteOffDeps(): { loans: Pick<LoanStore, 'activeDueBy'>; vaultWrites: VaultWriteQueue; now: () => Date } {
  return { loans: loanRepo(), vaultWrites: vaultWrites(), now };
}

/** Ports of GET /farmers/{id}/credit-score. */
export function creditScoreDeps(): CreditScoreDeps {
  return { registry: registryRepo(), batches: batchRepo(), loans: loanRepo(), payouts: payoutRepo(), now };
}

// ---------------------------------------------------------------- settlement

/**
 * Settlement of purchase orders on their buyer payments (the chain-events webhook's
 * `purchase_order.paid`): the vault read back to check each payment, the stores, the vault writes
 * and the custody trail (the batches' SETTLED stage with its evidence kept and queued for pinning).
 */
export function settlementDeps(): SettlementDeps {
  return {
    receipts: webhookReceipts(),
    vault: vaultReader(),
    custody: custodyRepo(),
    batches: { get: readMintedBatch, getMany: readMintedBatches },
    loans: loanRepo(),
    payouts: payoutRepo(),
    settlements: settlementRepo(),
    vaultWrites: vaultWrites(),
    evidence: evidenceKeeping(),
    ledgerQueue: ledgerWriteQueue(),
    orderWork: orderWorkQueue(),
    orderWorkIndex: orderWorkIndex(),
    now,
  };
}

/** Ports of an ADMIN's refund of an unapplied buyer payment: the order, the settlement store and the vault writes (no batch reads). */
export function refundDeps(): Pick<SettlementDeps, 'custody' | 'settlements' | 'vaultWrites' | 'now'> {
  return { custody: custodyRepo(), settlements: settlementRepo(), vaultWrites: vaultWrites(), now };
}

/** Ports of the order worker (functions/purchase-order-worker): confirmation and settlement steps of large purchase orders. */
export function orderWorkDeps(): OrderWorkDeps {
  return {
    ...purchaseOrderDeps(),
    loans: loanRepo(),
    payouts: payoutRepo(),
    settlements: settlementRepo(),
    vaultWrites: vaultWrites(),
    orderWorkIndex: orderWorkIndex(),
  };
}
