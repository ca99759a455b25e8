import { BatchRepository } from '../adapters/dynamodb/batch-repo';
import { CustodyRepository } from '../adapters/dynamodb/custody-repo';
import { DdsRepository } from '../adapters/dynamodb/dds-repo';
import { IdempotencyRepository } from '../adapters/dynamodb/idempotency-repo';
import { VaultWriteRepository } from '../adapters/dynamodb/ledger-tx';
import { LedgerWriteParkingRepository } from '../adapters/dynamodb/ledger-parking';
import { LoanRepository } from '../adapters/dynamodb/loan-repo';
import { SettlementRepository } from '../adapters/dynamodb/settlement-repo';
import { PayoutRepository } from '../adapters/dynamodb/payout-repo';
import { RegistryRepository } from '../adapters/dynamodb/registry-repo';
import { WebhookReceipts } from '../adapters/dynamodb/webhook-receipts';
import { meteredPayoutStore } from '../use-cases/metered-stores';
import type { BatchStore, CustodyStore } from '../domain/ports/batches';
import type { DdsStore } from '../domain/ports/eudr';
import type { LedgerWriteParking } from '../domain/ports/ledger';
import type { LoanStore, SettlementStore, VaultWriteStore } from '../domain/ports/lending';
import type { IdempotencyStore, WebhookReceiptStore } from '../domain/ports/messaging';
import type { PayoutStore } from '../domain/ports/payouts';
import type { RegistryStore } from '../domain/ports/registry';

/**
 * The DynamoDB stores, one per container, typed as the domain's ports. Split from ./index so that
 * a handler that needs only the table bundles only the DynamoDB client.
 */
let registry: RegistryStore | undefined;
let batches: BatchStore | undefined;
let payouts: PayoutStore | undefined;
let custody: CustodyStore | undefined;
let dds: DdsStore | undefined;
let receipts: WebhookReceiptStore | undefined;
let idempotency: IdempotencyStore | undefined;
let loans: LoanStore | undefined;
let vaultWrites: VaultWriteStore | undefined;
let settlements: SettlementStore | undefined;

export const registryRepo = (): RegistryStore => (registry ??= new RegistryRepository());
export const batchRepo = (): BatchStore => (batches ??= new BatchRepository());
/** Payouts; counts created, completed, failed and manual-review transitions (shared/use-cases/metered-stores.ts). */
export const payoutRepo = (): PayoutStore => (payouts ??= meteredPayoutStore(new PayoutRepository()));
/** Custody trail writes: stage changes, ledger writes, purchase orders. */
export const custodyRepo = (): CustodyStore => (custody ??= new CustodyRepository());
let parking: LedgerWriteParking | undefined;
/** Parked ledger writes and the attempts of open ones (the single writer's poison-message policy). */
export const ledgerParkingRepo = (): LedgerWriteParking => (parking ??= new LedgerWriteParkingRepository());
export const ddsRepo = (): DdsStore => (dds ??= new DdsRepository());
export const webhookReceipts = (): WebhookReceiptStore => (receipts ??= new WebhookReceipts());
/** `Idempotency-Key` records of creating operations. */
export const idempotencyStore = (): IdempotencyStore => (idempotency ??= new IdempotencyRepository());

/** Loans (lending). */
export const loanRepo = (): LoanStore => (loans ??= new LoanRepository());
/** Vault writes stored for the single ledger writer. */
export const vaultWriteRepo = (): VaultWriteStore => (vaultWrites ??= new VaultWriteRepository());

/** Settlements of purchase orders on their buyer payments. */
export const settlementRepo = (): SettlementStore => (settlements ??= new SettlementRepository());

/** Wall clock. */
export const now = () => new Date();
