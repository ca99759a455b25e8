import { SqsWorkQueue } from '../adapters/aws/queues';
import { LedgerWriteGroupRepository } from '../adapters/dynamodb/ledger-groups';
import { LedgerWriteParkingRepository } from '../adapters/dynamodb/ledger-parking';
import { auditAnchorLookupFromEnv } from '../adapters/ledger/anchor-reader';
import { createEvmLedgerFromEnv } from '../adapters/ledger/evm-ledger-env';
import { kmsLedgerAccount } from '../adapters/ledger/kms-signer';
import { envOr, secret } from '../config';
import type { AnchoredRootLookup } from '../domain/ports/audit';
import type { Ledger, LedgerWriteGroups, LedgerWriteParking } from '../domain/ports/ledger';
import type { VaultLedger } from '../domain/ports/lending';
import type { WorkQueue } from '../domain/ports/messaging';
import type { PayoutRequestMessage } from '../domain/ports/payouts';
import { anchorWriteOutcomes, type AnchorWriteOutcomes } from '../use-cases/anchor-settlement';
import type { AnchoringDeps } from '../use-cases/anchoring';
import type { GroupPace } from '../use-cases/ledger-batch-deps';
import type { LedgerWriterDeps, VaultAhead } from '../use-cases/ledger-writer';
import { vaultWriteHandlers } from '../use-cases/vault-write-handlers';
import { vaultWriteOutcomes } from '../use-cases/vault-writes';
import { depositRepo, vaultReader, vaultWriteRepo, vaultWrites } from './lending';
import { once, onFirstUse } from './once';
import {
  auditAnchorRepo,
  batchRepo,
  custodyRepo,
  ledgerReceiptCheckQueue,
  ledgerWriteQueue,
  loanRepo,
  now,
  settlementRepo,
} from './platform';

/**
 * The single ledger writer (functions/ledger-writer) and what feeds it: the EVM ledger with its
 * signer, the writer's parked writes, the batch payouts it requests once a batch is confirmed, and
 * the periodic anchoring of audit logs (functions/audit-anchorer). Every ledger write goes through
 * the writer's FIFO queue (./platform ledgerWriteQueue), so only the writer holds the signing key.
 */

/**
 * The EVM ledger, built at its first call. The signer is chosen by the settings: with
 * LEDGER_SIGNER_KMS_KEY_ID (AWS) the KMS key signs (no private key in the function), else the
 * private key LEDGER_SIGNER_KEY (locally the key file of LOCAL_DATA_DIR) or its Secrets Manager
 * secret. One instance per container for batch, stage, anchor and vault writes: one signer, one
 * nonce order.
 */
const ledger = (): Ledger & VaultLedger =>
  once(ledger, () =>
    onFirstUse<Ledger & VaultLedger>(async () => {
      const kmsKey = process.env.LEDGER_SIGNER_KMS_KEY_ID?.trim();
      if (kmsKey) return createEvmLedgerFromEnv(process.env, await kmsLedgerAccount(kmsKey));
      return createEvmLedgerFromEnv({ ...process.env, LEDGER_SIGNER_KEY: (await secret('LEDGER_SIGNER_KEY')).trim() });
    }),
  );

/** Requests to start a confirmed batch's NET_COFFEE_PAYMENT payout (PAYOUT_REQUEST_QUEUE_URL). */
const payoutRequestQueue = (): WorkQueue<PayoutRequestMessage> =>
  once(payoutRequestQueue, () => new SqsWorkQueue<PayoutRequestMessage>('PAYOUT_REQUEST_QUEUE_URL'));

/** The batched transactions of the single ledger writer (docs/ledger.md#the-batched-writer). */
const ledgerWriteGroups = (): LedgerWriteGroups => once(ledgerWriteGroups, () => new LedgerWriteGroupRepository());

/** This container's pace of batched transactions (when it last sent a group of each kind). */
const groupPace = (): GroupPace => once(groupPace, () => ({ lastLookMs: {} }));

/** This container's pace of vault writes landed ahead of the backlog (when it last looked). */
const vaultAheadPace = (): VaultAhead['pace'] => once(vaultAheadPace, () => ({}));

/** Parked ledger writes and the attempts of open ones (the single writer's poison-message policy). */
export const ledgerParkingRepo = (): LedgerWriteParking => once(ledgerParkingRepo, () => new LedgerWriteParkingRepository());

/**
 * Ports of the single ledger writer (the ledger's signer key is read on first use). With the
 * vault configured (need 'vault': LENDING_VAULT_ADDRESS), vault writes are landed by the same
 * signer instance (the oldest open one ahead of the queued backlog) and their outcomes handed to
 * the deposit and loan use cases; with AUDIT_ANCHOR_ADDRESS, anchors are settled when mined.
 */
export function ledgerWriterDeps(): LedgerWriterDeps {
  const base = {
    custody: custodyRepo(),
    ledger: ledger(),
    batches: batchRepo(),
    payoutQueue: payoutRequestQueue(),
    now,
    groups: ledgerWriteGroups(),
    receiptCheckQueue: ledgerReceiptCheckQueue(),
    groupPace: groupPace(),
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
  return {
    ...base,
    vault: {
      ledger: ledger(),
      reader: vaultReader(),
      outcomes: vaultWriteOutcomes(handlers),
      // Open vault writes landed ahead of the queued backlog (docs/ledger.md#vault-writes-ahead-of-the-backlog).
      ahead: { writes: vaultWriteRepo(), pace: vaultAheadPace() },
    },
  };
}

// ---------------------------------------------------------------- anchoring of audit logs

/** Ports of the scheduled audit-anchorer: the anchors, the ledger writes and the single writer's queue. */
export function anchoringDeps(): AnchoringDeps {
  return { anchors: auditAnchorRepo(), custody: custodyRepo(), ledgerQueue: ledgerWriteQueue(), now };
}

/** AuditAnchor read back (`anchoredAtBlock` and the event that set it; no signing key). */
const anchoredRootLookup = (): AnchoredRootLookup => once(anchoredRootLookup, () => auditAnchorLookupFromEnv());

/** What the single ledger writer calls when an anchor transaction is mined, its root found on chain already, or refused. */
function anchorOutcomes(): AnchorWriteOutcomes {
  return anchorWriteOutcomes({ anchors: auditAnchorRepo(), now, anchoredRoot: (root) => anchoredRootLookup()(root) });
}
