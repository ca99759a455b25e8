import type { Hex } from 'viem';
import type { Ledger, LedgerWriteGroups } from '../domain/ports/ledger';
import type { BatchLedgerTx, LedgerWriteGroup } from '../domain/records';

/** What the batched writer needs besides the writer's own ports: the groups, and how one member is settled. */
export interface BatchWriterDeps {
  groups: LedgerWriteGroups;
  ledger: Pick<
    Ledger,
    | 'mintBatchKept'
    | 'recordStagesKept'
    | 'estimateBatchGas'
    | 'batchOutcomes'
    | 'batchCallError'
    | 'simulateBatch'
    | 'rebroadcast'
    | 'waitForReceipt'
    | 'signerNonces'
    | 'blockNumber'
    | 'isKnown'
    | 'replaceKept'
  >;
  getLedgerTx: (id: string) => Promise<BatchLedgerTx | null>;
  /** A member written on chain: confirmed exactly as a single write is (mint → DELIVERED; record → hash in the history). */
  written: (tx: BatchLedgerTx, txHash: Hex, blockNumber: number) => Promise<void>;
  /** A member the chain refused (skipped, or the whole transaction reverted): settled as refused. */
  refused: (tx: BatchLedgerTx, reason: string) => Promise<void>;
  now: () => Date;
  /**
   * Given, the writer is pipelined (docs/ledger.md#the-pipelined-writer): a group's transaction is
   * sent without waiting for its receipt, and this queues a receipt check of the group for the
   * writer (`key` names the check: the same group and key twice is one check).
   */
  queueReceiptCheck?: (group: LedgerWriteGroup, key: string) => Promise<void>;
  /**
   * Pipelined, per container: when this writer last looked for pending writes of each kind (ms;
   * none since it last sent a group of the kind). Given, a member's delivery forms the next group of
   * its kind once `FORM_AHEAD_AFTER_MS` have passed, or at once after a send (`formAhead`), so
   * groups keep leaving once a block while the members' messages queue behind one another.
   */
  pace?: GroupPace;
}

/** See `BatchWriterDeps.pace`. */
export interface GroupPace {
  lastLookMs: Partial<Record<'MINT' | 'TRACE_STAGE', number>>;
}
