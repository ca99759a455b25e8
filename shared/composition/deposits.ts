import { DepositRepository } from '../adapters/dynamodb/deposit-repo';
import { createVaultReaderFromEnv } from '../adapters/ledger/vault-reader';
import { HttpOnRamp } from '../adapters/onramp/http-onramp';
import { requireEnv, secret } from '../config';
import type { Hex } from 'viem';
import type { DepositStore, LoanStore, OnRamp, VaultReader, VaultWriteQueue } from '../domain/ports/lending';
import type { DepositDeps } from '../use-cases/deposits';
import { vaultWriteQueue } from '../use-cases/vault-writes';
import { loanApr } from './lending-config';
import { ledgerWriteQueue } from './queues';
import { loanRepo, now, vaultWriteRepo, webhookReceipts } from './repos';

/**
 * MFI deposits: the deposit store, the fiat on-ramp's HTTP API and the vault-write queue, one per
 * container. The on-ramp is reached at ONRAMP_URL with the JSON `{api_key, api_secret}` of
 * ONRAMP_CREDENTIALS (or its Secrets Manager secret); deposits are delivered to
 * LEDGER_TREASURY_ADDRESS, the ledger signer's address (so no route but the ledger writer holds the
 * signing key). Configuration is read on first use.
 */
let deposits: DepositStore | undefined;
let onRampP: Promise<OnRamp> | undefined;
let writes: VaultWriteQueue | undefined;

export const depositRepo = (): DepositStore => (deposits ??= new DepositRepository());

/** The on-ramp client (see the module comment). Errors: when ONRAMP_CREDENTIALS is not that JSON. */
function onRamp(): Promise<OnRamp> {
  onRampP ??= secret('ONRAMP_CREDENTIALS').then((raw) => {
    const creds = JSON.parse(raw) as { api_key?: string; api_secret?: string };
    if (!creds.api_key || !creds.api_secret) throw new Error('ONRAMP_CREDENTIALS must be JSON {"api_key","api_secret"}');
    return new HttpOnRamp({ baseUrl: requireEnv('ONRAMP_URL'), apiKey: creds.api_key, apiSecret: creds.api_secret });
  });
  onRampP.catch(() => (onRampP = undefined));
  return onRampP;
}

/** LEDGER_TREASURY_ADDRESS. Errors: missing or not an address. */
async function treasury(): Promise<Hex> {
  const a = requireEnv('LEDGER_TREASURY_ADDRESS');
  if (!/^0x[0-9a-fA-F]{40}$/.test(a)) throw new Error('LEDGER_TREASURY_ADDRESS must be a 0x address');
  return a as Hex;
}

/** Vault writes for the single ledger writer (stored, then queued). */
export const vaultWrites = (): VaultWriteQueue => (writes ??= vaultWriteQueue(vaultWriteRepo(), ledgerWriteQueue()));

/** Ports of the deposit use cases (create, webhook, ledger-writer callbacks). */
export function depositDeps(): DepositDeps {
  const ramp: OnRamp = {
    createOrder: async (input) => (await onRamp()).createOrder(input),
    getOrder: async (id) => (await onRamp()).getOrder(id),
  };
  return { deposits: depositRepo(), onRamp: ramp, receipts: webhookReceipts(), vaultWrites: vaultWrites(), treasury, now };
}

let reader: VaultReader | undefined;

/**
 * GET /mfi/vault: the vault read from LEDGER_RPC_URL / LEDGER_CHAIN_ID / LENDING_VAULT_ADDRESS (no
 * signing key), built on first use; the rate LOAN_APR; the loans by due date (table) for PAR30.
 */
export function mfiVaultDeps(): { vault: VaultReader; apr: string; loans: Pick<LoanStore, 'activeDueBy'>; now: () => Date } {
  const load = () => (reader ??= createVaultReaderFromEnv());
  const vault: VaultReader = {
    state: () => load().state(),
    mfiPosition: (id) => load().mfiPosition(id),
    writeResult: (h) => load().writeResult(h),
    purchaseOrderPayments: (a, b) => load().purchaseOrderPayments(a, b),
    purchaseOrderPaymentsInTx: (h) => load().purchaseOrderPaymentsInTx(h),
    loan: (ref) => load().loan(ref),
  };
  return { vault, apr: loanApr(), loans: loanRepo(), now };
}
