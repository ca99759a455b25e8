import { SnsNotifier } from '../adapters/aws/sns-notifier';
import { SqsWorkQueue } from '../adapters/aws/queues';
import { AuditAnchorRepository } from '../adapters/dynamodb/anchor-repo';
import { BatchRepository } from '../adapters/dynamodb/batch-repo';
import { CustodyRepository } from '../adapters/dynamodb/custody-repo';
import { DdsRepository } from '../adapters/dynamodb/dds-repo';
import { IdempotencyRepository } from '../adapters/dynamodb/idempotency-repo';
import { LoanRepository } from '../adapters/dynamodb/loan-repo';
import { PayoutRepository } from '../adapters/dynamodb/payout-repo';
import { RegistryRepository } from '../adapters/dynamodb/registry-repo';
import { SettlementRepository } from '../adapters/dynamodb/settlement-repo';
import { WebhookReceipts } from '../adapters/dynamodb/webhook-receipts';
import type { AuditAnchorStore } from '../domain/ports/audit';
import type { BatchStore, CustodyStore } from '../domain/ports/batches';
import type { DdsOfBatchReader, DdsStore } from '../domain/ports/eudr';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import { LEDGER_QUEUE_MESSAGE_GROUPS } from '../domain/ledger-batching';
import type { LoanStore, SettlementStore } from '../domain/ports/lending';
import type { IdempotencyStore, Notifier, WebhookReceiptStore, WorkQueue } from '../domain/ports/messaging';
import type { PayoutStore } from '../domain/ports/payouts';
import type { RegistryStore } from '../domain/ports/registry';
import { meteredPayoutStore } from '../use-cases/metered-stores';
import { once } from './once';

/**
 * The platform: the clock, and every store and client that more than one capability uses — the
 * single table's shared stores (DynamoDB), the single ledger writer's queue (SQS) and the
 * notifications (SNS). Each is built once per container ({@link once}); endpoints come from the
 * environment, so the same code reaches AWS or the local stack. What only one capability uses is
 * built in that capability's file (./payouts, ./lending, ./ledger, …).
 */

/** Wall clock. */
export const now = (): Date => new Date();

/** Farmers and cooperatives. */
export const registryRepo = (): RegistryStore => once(registryRepo, () => new RegistryRepository());
/** Batches and their audit entries. */
export const batchRepo = (): BatchStore => once(batchRepo, () => new BatchRepository());
/** Payouts; counts created, completed, failed and manual-review transitions (shared/use-cases/metered-stores.ts). */
export const payoutRepo = (): PayoutStore => once(payoutRepo, () => meteredPayoutStore(new PayoutRepository()));
/** Custody trail writes: stage changes, ledger writes, purchase orders. */
export const custodyRepo = (): CustodyStore => once(custodyRepo, () => new CustodyRepository());
/** Loans (lending; read by payouts and settlement). */
export const loanRepo = (): LoanStore => once(loanRepo, () => new LoanRepository());
/** Settlements of purchase orders on their buyer payments. */
export const settlementRepo = (): SettlementStore => once(settlementRepo, () => new SettlementRepository());
/** Due diligence statements (EUDR), and the statement of a batch (the public trace page). */
export const ddsRepo = (): DdsStore & DdsOfBatchReader => once(ddsRepo, () => new DdsRepository());
/** The periodic anchors of audit logs (docs/api/anchoring.md#anchoring-of-the-audit-log): written by the anchorer, read by audits. */
export const auditAnchorRepo = (): AuditAnchorStore => once(auditAnchorRepo, () => new AuditAnchorRepository());
/** Webhook deliveries already handled (payout provider, on-ramp, chain events). */
export const webhookReceipts = (): WebhookReceiptStore => once(webhookReceipts, () => new WebhookReceipts());
/** `Idempotency-Key` records of creating operations. */
export const idempotencyStore = (): IdempotencyStore => once(idempotencyStore, () => new IdempotencyRepository());

/** The single ledger writer's FIFO queue (LEDGER_WRITE_QUEUE_URL): the writes' message group, so writes land one at a time in order. */
export const ledgerWriteQueue = (): WorkQueue<LedgerWriteMessage> =>
  once(
    ledgerWriteQueue,
    () => new SqsWorkQueue<LedgerWriteMessage>('LEDGER_WRITE_QUEUE_URL', { fifoGroup: LEDGER_QUEUE_MESSAGE_GROUPS.writes }),
  );

/**
 * The single ledger writer's receipt checks (docs/ledger.md#the-pipelined-writer), on a FIFO queue
 * of their own (LEDGER_RECEIPT_QUEUE_URL): they run one at a time among themselves, beside the
 * writes, never behind them; and a long check never shares a batch with writes (a batch's messages
 * leave their queue only when the whole batch is done, so it would hold the writes' group).
 */
export const ledgerReceiptCheckQueue = (): WorkQueue<LedgerWriteMessage> =>
  once(
    ledgerReceiptCheckQueue,
    () => new SqsWorkQueue<LedgerWriteMessage>('LEDGER_RECEIPT_QUEUE_URL', { fifoGroup: LEDGER_QUEUE_MESSAGE_GROUPS.receiptChecks }),
  );

/** Notifications (SNS): the cooperative managers' topic and SMS. */
export const notifier = (): Notifier => once(notifier, () => new SnsNotifier());
