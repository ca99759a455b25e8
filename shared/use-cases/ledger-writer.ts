import { TokenAlreadyMintedError } from '../domain/errors';
import { vaultCallOf } from '../domain/vault-calls';
import type { BatchStore, CustodyStore, Hex, Ledger, LedgerWriteMessage, PayoutRequestMessage, VaultLedger, VaultReader, WorkQueue } from '../domain/ports';
import type { AnchorLedgerTx, Batch, BatchLedgerTx, LedgerTx, VaultLedgerTx } from '../domain/records';
import type { AnchorWriteOutcomes } from './anchor-settlement';
import type { VaultWriteOutcomes } from './vault-writes';
import { logger } from '../runtime/logger';

/**
 * The single ledger writer (decisions §8): every ledger write — a BatchToken mint or a trace-log
 * record — is committed with its cause, then landed here, one at a time (a FIFO queue with one
 * message group), so the signer's nonces never collide.
 */

/** The ports the ledger writer needs. */
export interface LedgerWriterDeps {
  custody: Pick<CustodyStore, 'getLedgerTx' | 'keepSigned' | 'confirm' | 'markFailed'>;
  ledger: Ledger;
  batches: Pick<BatchStore, 'getAny' | 'get' | 'confirmMint' | 'markMintFailed'>;
  payoutQueue: WorkQueue<PayoutRequestMessage>;
  now: () => Date;
  /** Vault writes (lending): the vault side of the ledger, its receipts read back, and who to tell. */
  vault?: { ledger: VaultLedger; reader: Pick<VaultReader, 'writeResult'>; outcomes: VaultWriteOutcomes };
  /** Periodic anchors of audit logs (decisions §13): who settles a mined or refused anchor. */
  anchors?: AnchorWriteOutcomes;
}

/**
 * Makes one ledger write land. A write that was signed before is broadcast again as the same
 * signed transaction; otherwise it is signed with the signer's next nonce, kept, then broadcast.
 * Once mined, the write is confirmed: a mint makes its batch DELIVERED (first audit entry, payout
 * request), a trace-log record gets its transaction hash into the batch's stage history; a job
 * waiting on it completes. A mint the chain refuses (reverted, or the token id exists although we
 * never signed it) marks the batch's mint FAILED. Throws while the transaction is not mined
 * (`receiptWaitMs`), so the queue retries it.
 */
export async function writeLedgerTx(deps: LedgerWriterDeps, id: string, receiptWaitMs: number): Promise<void> {
  const tx = await deps.custody.getLedgerTx(id);
  if (!tx) throw new Error(`ledger write ${id} not found`);
  if (tx.status === 'CONFIRMED' || tx.status === 'FAILED') return;
  if (tx.kind === 'VAULT') return writeVaultTx(deps, tx, receiptWaitMs);
  if (tx.kind === 'ANCHOR') return writeAnchorTx(deps, tx, receiptWaitMs);
  const keep = (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => deps.custody.keepSigned(id, signed, deps.now().toISOString());
  let txHash = tx.tx_hash as Hex | undefined;
  if (tx.raw_tx && txHash) {
    await deps.ledger.rebroadcast(tx.raw_tx as Hex, txHash);
  } else if (tx.kind === 'MINT') {
    try {
      ({ txHash } = await deps.ledger.mintBatchTokenKept({ tokenId: BigInt(tx.token_id), batchId: tx.batch_id, auditHash: `0x${tx.audit_hash}` }, keep));
    } catch (err) {
      if (!(err instanceof TokenAlreadyMintedError)) throw err;
      // Never signed by us (nothing was kept), yet the id exists: refuse rather than guess.
      await failMint(deps, tx, `token ${tx.token_id} already exists on the ledger`);
      return;
    }
  } else {
    ({ txHash } = await deps.ledger.recordStageKept(
      { tokenId: BigInt(tx.token_id), stage: tx.stage, evidenceCid: tx.evidence_cid!, auditHash: `0x${tx.audit_hash}` },
      keep,
    ));
  }
  const receipt = await deps.ledger.waitForReceipt(txHash!, receiptWaitMs);
  if (!receipt) throw new Error(`ledger transaction ${txHash} of ${id} not mined yet`);
  if (receipt.status !== 'success') {
    if (tx.kind === 'MINT') {
      await failMint(deps, tx, `mint transaction ${txHash} reverted`);
      return;
    }
    logger.error('trace-log transaction reverted', { ledger_tx_id: id, tx_hash: txHash });
    throw new Error(`trace-log transaction ${txHash} reverted`);
  }
  if (tx.kind === 'MINT') {
    const fresh = await deps.custody.getLedgerTx(id);
    await confirmBatchMint(deps, { batch_id: tx.batch_id, tx_hash: txHash!, ...(fresh?.job_id ? { job_id: fresh.job_id } : {}) });
  }
  await deps.custody.confirm(tx, txHash!, Number(receipt.blockNumber), deps.now().toISOString());
}

/**
 * A vault write (lending): signed once and kept like the others, re-sent until mined. Mined and
 * successful → its effect read from the receipt and handed to the use case that asked for it
 * (`outcomes.mined`), then the write is confirmed; reverted → `outcomes.refused` and the write is
 * FAILED. Both callbacks are idempotent, so a crash between them and the confirmation is repaired
 * by the queue's retry.
 */
async function writeVaultTx(deps: LedgerWriterDeps, tx: VaultLedgerTx, receiptWaitMs: number): Promise<void> {
  if (!deps.vault) throw new Error(`ledger write ${tx.ledger_tx_id} is a vault write, and this writer has no vault configured`);
  const { ledger, reader, outcomes } = deps.vault;
  const { txHash, receipt } = await landKept(deps, tx, (keep) => ledger.vaultCallKept(vaultCallOf(tx.vault_call), keep), receiptWaitMs, 'vault');
  if (receipt.status !== 'success') {
    const reason = `vault transaction ${txHash} (${tx.vault_call.kind} ${tx.vault_call.ref}) reverted`;
    logger.error('vault write refused by the ledger', { ledger_tx_id: tx.ledger_tx_id, kind: tx.vault_call.kind, ref: tx.vault_call.ref, tx_hash: txHash });
    await outcomes.refused(tx, reason);
    await deps.custody.markFailed(tx.ledger_tx_id, reason, deps.now().toISOString());
    return;
  }
  await outcomes.mined(tx, txHash, await reader.writeResult(txHash));
  await deps.custody.confirm(tx, txHash, Number(receipt.blockNumber), deps.now().toISOString());
}

/**
 * A periodic anchor (decisions §13): `AuditAnchor.anchor(root, headCount)` signed once and kept,
 * re-sent until mined. Mined → the anchor settled (`anchors.mined`: proofs stored, markers
 * cleared), then the write confirmed; reverted → the anchor abandoned (its markers go into the
 * next one) and the write FAILED. Both are idempotent, as for vault writes.
 */
async function writeAnchorTx(deps: LedgerWriterDeps, tx: AnchorLedgerTx, receiptWaitMs: number): Promise<void> {
  if (!deps.anchors) throw new Error(`ledger write ${tx.ledger_tx_id} is an audit anchor, and this writer has no anchoring configured`);
  const { txHash, receipt } = await landKept(deps, tx, (keep) => deps.ledger.anchorAuditRootKept({ root: tx.root as Hex, headCount: tx.head_count }, keep), receiptWaitMs, 'anchor');
  if (receipt.status !== 'success') {
    const reason = `anchor transaction ${txHash} (root ${tx.root}) reverted`;
    await deps.anchors.refused(tx, reason);
    await deps.custody.markFailed(tx.ledger_tx_id, reason, deps.now().toISOString());
    return;
  }
  await deps.anchors.mined(tx, txHash, Number(receipt.blockNumber));
  await deps.custody.confirm(tx, txHash, Number(receipt.blockNumber), deps.now().toISOString());
}

/**
 * Lands a kept write: re-sends its signed transaction when it has one, else signs it with `sign`
 * (kept before broadcast); then waits for the receipt. Throws while it is not mined (the queue retries).
 */
async function landKept(
  deps: LedgerWriterDeps,
  tx: LedgerTx,
  sign: (keep: (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>) => Promise<{ txHash: Hex }>,
  receiptWaitMs: number,
  what: string,
): Promise<{ txHash: Hex; receipt: NonNullable<Awaited<ReturnType<LedgerWriterDeps['ledger']['waitForReceipt']>>> }> {
  let txHash = tx.tx_hash as Hex | undefined;
  if (tx.raw_tx && txHash) {
    await deps.ledger.rebroadcast(tx.raw_tx as Hex, txHash);
  } else {
    ({ txHash } = await sign((signed) => deps.custody.keepSigned(tx.ledger_tx_id, signed, deps.now().toISOString())));
  }
  const receipt = await deps.ledger.waitForReceipt(txHash, receiptWaitMs);
  if (!receipt) throw new Error(`${what} transaction ${txHash} of ${tx.ledger_tx_id} not mined yet`);
  return { txHash, receipt };
}

async function failMint(deps: Pick<LedgerWriterDeps, 'custody' | 'batches' | 'now'>, tx: BatchLedgerTx, reason: string): Promise<void> {
  const fresh = await deps.custody.getLedgerTx(tx.ledger_tx_id);
  logger.error('BatchToken mint refused by the ledger', { batch_id: tx.batch_id, reason });
  await deps.batches.markMintFailed(tx.batch_id, reason, fresh?.job_id);
  await deps.custody.markFailed(tx.ledger_tx_id, reason, deps.now().toISOString());
}

/**
 * Records a mined BatchToken: batch DELIVERED, first audit entry, job COMPLETE — one transaction,
 * idempotent — then requests the batch's NET_COFFEE_PAYMENT payout through the payout-request
 * queue (a lost request is found by reconciliation: the batch stays in the awaiting-payout index).
 * Errors: Error when the batch does not exist or is not confirmed afterwards.
 */
export async function confirmBatchMint(
  deps: Pick<LedgerWriterDeps, 'batches' | 'payoutQueue' | 'now'>,
  msg: { batch_id: string; tx_hash: string; job_id?: string },
): Promise<Batch> {
  const pending = await deps.batches.getAny(msg.batch_id);
  if (!pending) throw new Error(`batch ${msg.batch_id} not found`);
  if (pending.mint_status === 'PENDING') {
    const entry = pending.pending_audit_entry;
    if (!entry) throw new Error(`batch ${msg.batch_id} has no pending audit entry`);
    const at = deps.now().toISOString();
    const applied = await deps.batches.confirmMint({
      batchId: msg.batch_id,
      txHash: msg.tx_hash,
      entry,
      history: { stage: 'DELIVERED', at: entry.at, actor: entry.actor, chain_tx_hash: msg.tx_hash, audit_log_sequence_number: String(entry.sequence_number), evidence_ipfs_cid: null },
      ...(msg.job_id ? { jobId: msg.job_id } : {}),
      at,
    });
    if (applied) {
      try {
        await deps.payoutQueue.send({ batch_id: msg.batch_id });
      } catch (err) {
        logger.error('payout request could not be queued; the batch stays INITIATED for reconciliation', { batch_id: msg.batch_id, error: err as Error });
      }
    }
  }
  const batch = await deps.batches.get(msg.batch_id);
  if (!batch) throw new Error(`batch ${msg.batch_id} is not confirmed (mint ${pending.mint_status})`);
  return batch;
}

/**
 * Reconciliation of the ledger writes (the scheduled ledger-write-reconciler): writes still
 * unconfirmed after `staleAfterSeconds` are queued again for the single writer (a lost queue
 * message, or one that went to the DLQ while the ledger was down). Returns how many were queued.
 */
export async function requeueStaleLedgerWrites(
  deps: { custody: Pick<CustodyStore, 'openLedgerTxsBefore'>; ledgerQueue: WorkQueue<LedgerWriteMessage>; now: () => Date },
  staleAfterSeconds: number,
): Promise<number> {
  const cutoff = new Date(deps.now().getTime() - staleAfterSeconds * 1000).toISOString();
  const stale = await deps.custody.openLedgerTxsBefore(cutoff, 100);
  for (const tx of stale) await deps.ledgerQueue.send({ ledger_tx_id: tx.ledger_tx_id }, { deduplicationId: `${tx.ledger_tx_id}-${Date.now()}` });
  return stale.length;
}
