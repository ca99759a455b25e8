import * as v from 'valibot';
import type { Caller } from '../auth/claims';
import type { BatchRepository } from '../adapters/dynamodb/batch-repo';
import { StageConflictError, type CustodyRepository, type LedgerTx, type PurchaseOrder } from '../adapters/dynamodb/custody-repo';
import { buildEvidencePackage } from '../adapters/ipfs/evidence-package';
import type { PinStore } from '../adapters/ipfs/pin-store';
import { isNextStage, STAGE_DUTY, type CallerStage } from '../domain/custody';
import { DomainError } from '../domain/errors';
import { parseEvidencePhoto } from '../domain/evidence-photo';
import { newJobId } from '../domain/ids';
import type { Hex, Ledger, WorkQueue } from '../domain/ports';
import type { Batch, Job, Stage } from '../domain/records';
import { EVIDENCE_SCHEMAS, type StageUpdateSchema } from '../http/schemas';
import { validate } from '../http/validation';
import { logger } from '../runtime/logger';
import { assertActsFor, assertDuty } from './access';
import { confirmBatchMint, isDdsEligible } from './batches';
import type { PayoutRequestMessage } from '../adapters/aws/queues';

/** Message on the ledger-write queue (FIFO, one writer): make this trace-log write land. */
export interface LedgerWriteMessage {
  ledger_tx_id: string;
}

export interface CustodyDeps {
  batches: BatchRepository;
  custody: CustodyRepository;
  pins: PinStore;
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  now: () => Date;
}

/** The stage-update response (interface-spec "Stage update" response fields). */
export interface StageUpdateView {
  batch_id: string;
  previous_stage: Stage;
  new_stage: Stage;
  chain_tx_hash: string | null;
  audit_log_sequence_number: string;
  evidence_ipfs_cid: string;
  dds_eligible: boolean;
  timestamp: string;
}

export type StageChangeResult = { kind: 'done'; view: StageUpdateView } | { kind: 'accepted'; view: StageUpdateView; job: Job };

/**
 * PATCH /batch/{batch_id}/stage (interface-spec rules 1–6; decisions §2, §8). Steps:
 *  1. the duty of the new stage (INSUFFICIENT_PERMISSIONS); the stage's evidence schema
 *     (VALIDATION_ERROR, INVALID_GRADE); cooperative binding (403);
 *  2. the batch exists (BATCH_NOT_FOUND) and is the cooperative's (403);
 *  3. the new stage is the next one (STAGE_OUT_OF_ORDER), EXPORTED from WAREHOUSED with an
 *     unconfirmed purchase order is PO_NOT_CONFIRMED; MILLED outturn at most the batch weight;
 *  4. the evidence JSON and photo are pinned as one UnixFS directory (its CID is the evidence CID);
 *  5. one transaction: stage, history, audit entry, and the trace-log write to make;
 *  6. the trace-log write goes to the single ledger writer; answered 200 once it is mined, or
 *     202 with a job when the ledger is slow or unreachable (the stage change stands and the job
 *     completes when the transaction lands).
 * A WAREHOUSED batch whose purchase order is confirmed moves on to COMMITTED at once (system).
 */
export async function changeStage(
  deps: CustodyDeps,
  caller: Caller,
  batchId: string,
  body: v.InferOutput<typeof StageUpdateSchema>,
  opts: { waitMs: number },
): Promise<StageChangeResult> {
  const to = body.new_stage as CallerStage;
  assertDuty(caller, [STAGE_DUTY[to]]);
  const evidence = validate(EVIDENCE_SCHEMAS[to], body.evidence, [{ path: 'grade', types: ['picklist'], code: 'INVALID_GRADE' }], 'evidence') as Record<string, unknown>;
  assertActsFor(caller, body.cooperative_id);
  const batch = await deps.batches.get(batchId);
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  if (batch.cooperative_id !== body.cooperative_id) throw new DomainError('INSUFFICIENT_PERMISSIONS', `Batch ${batchId} belongs to another cooperative.`);
  await assertSequence(deps, batch, to);
  if (to === 'MILLED' && (evidence.outturn_kg as number) > batch.weight_kg) {
    throw new DomainError('VALIDATION_ERROR', `evidence.outturn_kg (${evidence.outturn_kg}) exceeds the batch weight (${batch.weight_kg} kg).`, { details: [{ path: 'evidence.outturn_kg', message: `must be at most the batch weight ${batch.weight_kg}` }] });
  }
  const photo = body.evidence_photo_base64 ? await parseEvidencePhoto(body.evidence_photo_base64) : undefined;

  const committed = await commitStageChange(deps, { batch, to, actor: caller.sub, evidence, photo });
  if (to === 'WAREHOUSED' && batch.purchase_order_id) {
    const po = await deps.custody.getPurchaseOrder(batch.purchase_order_id);
    if (po?.status === 'CONFIRMED') await commitToPurchaseOrder(deps, po, batch.batch_id);
  }
  return awaitLedger(deps, committed, opts.waitMs);
}

async function assertSequence(deps: Pick<CustodyDeps, 'custody'>, batch: Batch, to: Stage): Promise<void> {
  const from = batch.stage!;
  if (isNextStage(from, to)) return;
  if (to === 'EXPORTED' && from === 'WAREHOUSED' && batch.purchase_order_id) {
    const po = await deps.custody.getPurchaseOrder(batch.purchase_order_id);
    if (po && po.status !== 'CONFIRMED') {
      throw new DomainError('PO_NOT_CONFIRMED', `Purchase order ${po.purchase_order_id} of batch ${batch.batch_id} is not confirmed; confirming it moves the batch to COMMITTED, then EXPORTED can follow.`);
    }
  }
  throw new DomainError('STAGE_OUT_OF_ORDER', `Batch ${batch.batch_id} is at ${from}; stages advance one at a time (${from} → ${to} is not the next step).`);
}

interface Committed {
  batch: Batch;
  from: Stage;
  to: Stage;
  at: string;
  cid: string;
  seq: number;
  ledgerTx: LedgerTx;
}

/** Steps 4–5: pin the evidence, commit the stage change with its audit entry and ledger write. */
async function commitStageChange(
  deps: CustodyDeps,
  input: { batch: Batch; to: Stage; actor: string; evidence: Record<string, unknown>; photo?: { bytes: Uint8Array; extension: 'jpg' | 'png' | 'webp' } },
): Promise<Committed> {
  const { batch, to } = input;
  const from = batch.stage!;
  const pkg = await buildEvidencePackage({ evidence: input.evidence, photo: input.photo });
  await deps.pins.pin({ cid: pkg.cid, blocks: pkg.blocks, name: `${batch.batch_id}-${to}`, meta: { batch_id: batch.batch_id, stage: to } });
  const at = deps.now().toISOString();
  try {
    const { entry, ledgerTx } = await deps.custody.commitStage({
      batchId: batch.batch_id, tokenId: batch.token_id, from, to, at, actor: input.actor, evidenceCid: pkg.cid,
      payload: { evidence: input.evidence, evidence_files: pkg.files.map((f) => f.path) },
    });
    try {
      await deps.ledgerQueue.send({ ledger_tx_id: ledgerTx.ledger_tx_id }, { deduplicationId: ledgerTx.ledger_tx_id });
    } catch (err) {
      logger.error('ledger write could not be queued; reconciliation will queue it', { ledger_tx_id: ledgerTx.ledger_tx_id, error: err as Error });
    }
    return { batch, from, to, at, cid: pkg.cid, seq: entry.sequence_number, ledgerTx };
  } catch (err) {
    if (err instanceof StageConflictError) {
      throw new DomainError('STAGE_OUT_OF_ORDER', `Batch ${batch.batch_id} moved to ${err.current} meanwhile; ${from} → ${to} no longer applies.`);
    }
    throw err;
  }
}

/** Step 6: wait for the single writer to land the trace-log transaction, or answer with a job. */
async function awaitLedger(deps: CustodyDeps, c: Committed, waitMs: number): Promise<StageChangeResult> {
  const view = (tx: LedgerTx | null): StageUpdateView => ({
    batch_id: c.batch.batch_id, previous_stage: c.from, new_stage: c.to, chain_tx_hash: tx?.tx_hash ?? null,
    audit_log_sequence_number: String(c.seq), evidence_ipfs_cid: c.cid, dds_eligible: isDdsEligible(c.to), timestamp: c.at,
  });
  const deadline = Date.now() + waitMs;
  for (;;) {
    const tx = await deps.custody.getLedgerTx(c.ledgerTx.ledger_tx_id);
    if (tx?.status === 'CONFIRMED') return { kind: 'done', view: view(tx) };
    if (Date.now() >= deadline) {
      const job: Job = { job_id: newJobId(), type: 'STAGE_CHANGE', status: 'PENDING', cooperative_id: c.batch.cooperative_id, batch_id: c.batch.batch_id, created_at: deps.now().toISOString() };
      if (await deps.custody.attachJob(c.ledgerTx, job)) return { kind: 'accepted', view: view(tx), job };
      return { kind: 'done', view: view(await deps.custody.getLedgerTx(c.ledgerTx.ledger_tx_id)) };
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The single ledger writer (FIFO queue consumer): makes one ledger write land — a BatchToken mint
 * or a trace-log record. A write that was signed before is broadcast again as the same signed
 * transaction; otherwise it is signed with the signer's next nonce, kept, then broadcast. Once
 * mined, the write is confirmed: a mint makes its batch DELIVERED (first audit entry, payout
 * request), a trace-log record gets its transaction hash into the batch's stage history; a job
 * waiting on it completes. A mint the chain refuses marks the batch's mint FAILED. Throws while
 * the transaction is not mined, so the queue retries it.
 */
export async function writeLedgerTx(
  deps: { custody: CustodyRepository; ledger: Ledger; batches: BatchRepository; payoutQueue: WorkQueue<PayoutRequestMessage>; now: () => Date },
  id: string,
  receiptWaitMs: number,
): Promise<void> {
  const tx = await deps.custody.getLedgerTx(id);
  if (!tx) throw new Error(`ledger write ${id} not found`);
  if (tx.status === 'CONFIRMED' || tx.status === 'FAILED') return;
  const keep = (signed: { rawTx: Hex; txHash: Hex; nonce: number }) => deps.custody.keepSigned(id, signed, deps.now().toISOString());
  let txHash = tx.tx_hash as Hex | undefined;
  if (tx.raw_tx && txHash) {
    await deps.ledger.rebroadcast(tx.raw_tx as Hex, txHash);
  } else if (tx.kind === 'MINT') {
    try {
      ({ txHash } = await deps.ledger.mintBatchTokenKept({ tokenId: BigInt(tx.token_id), batchId: tx.batch_id, auditHash: `0x${tx.audit_hash}` }, keep));
    } catch (err) {
      if ((err as Error).name !== 'TokenAlreadyMintedError') throw err; // by name: no chain client in this module's bundle
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

async function failMint(deps: { custody: CustodyRepository; batches: BatchRepository; now: () => Date }, tx: LedgerTx, reason: string): Promise<void> {
  const fresh = await deps.custody.getLedgerTx(tx.ledger_tx_id);
  logger.error('BatchToken mint refused by the ledger', { batch_id: tx.batch_id, reason });
  await deps.batches.markMintFailed(tx.batch_id, reason, fresh?.job_id);
  await deps.custody.markFailed(tx.ledger_tx_id, reason, deps.now().toISOString());
}

// ------------------------------------------------------------------ purchase orders

/**
 * POST /purchase-orders (decisions §8): a DRAFT purchase order over batches of one cooperative.
 * Errors: INSUFFICIENT_PERMISSIONS (duty EXPORTER or MANAGER; cooperative binding), BATCH_NOT_FOUND,
 * VALIDATION_ERROR (batches of several cooperatives, a batch already on a purchase order).
 */
export async function createPurchaseOrder(
  deps: Pick<CustodyDeps, 'batches' | 'custody' | 'now'>,
  caller: Caller,
  input: { batch_ids: string[]; buyer: string; price_usd_per_kg: number; buyer_operator?: PurchaseOrder['buyer_operator'] },
): Promise<PurchaseOrder> {
  assertDuty(caller, ['EXPORTER', 'MANAGER']);
  const batches = await Promise.all(input.batch_ids.map((id) => deps.batches.get(id)));
  const missing = input.batch_ids.filter((_, i) => !batches[i]);
  if (missing.length) throw new DomainError('BATCH_NOT_FOUND', `Batch ${missing.join(', ')} is not recognised.`);
  const coops = new Set(batches.map((b) => b!.cooperative_id));
  if (coops.size > 1) throw new DomainError('VALIDATION_ERROR', 'A purchase order covers batches of one cooperative.', { details: [{ path: 'batch_ids', message: 'batches of several cooperatives' }] });
  const cooperativeId = batches[0]!.cooperative_id;
  assertActsFor(caller, cooperativeId);
  const po: PurchaseOrder = {
    purchase_order_id: `PO-${newJobId().slice(4)}`, status: 'DRAFT', cooperative_id: cooperativeId, batch_ids: input.batch_ids, buyer: input.buyer,
    price_usd_per_kg: input.price_usd_per_kg, ...(input.buyer_operator ? { buyer_operator: input.buyer_operator } : {}),
    created_at: deps.now().toISOString(), created_by: caller.sub,
  };
  await deps.custody.createPurchaseOrder(po);
  return po;
}

/**
 * POST /purchase-orders/{id}/confirm: the purchase order becomes CONFIRMED (idempotent) and each
 * of its batches at WAREHOUSED moves to COMMITTED (trace log and audit log; callers can never set
 * COMMITTED themselves). Batches that reach WAREHOUSED later move on at that moment.
 * Errors: PO_NOT_FOUND, INSUFFICIENT_PERMISSIONS.
 */
export async function confirmPurchaseOrder(deps: CustodyDeps, caller: Caller, id: string): Promise<{ po: PurchaseOrder; committed: string[] }> {
  assertDuty(caller, ['EXPORTER', 'MANAGER']);
  const po = await deps.custody.getPurchaseOrder(id);
  if (!po) throw new DomainError('PO_NOT_FOUND', `Purchase order ${id} is not recognised.`);
  assertActsFor(caller, po.cooperative_id);
  await deps.custody.confirmPurchaseOrder(po, caller.sub, deps.now().toISOString());
  const confirmed = (await deps.custody.getPurchaseOrder(id))!;
  const committed: string[] = [];
  for (const batchId of po.batch_ids) {
    if (await commitToPurchaseOrder(deps, confirmed, batchId)) committed.push(batchId);
  }
  return { po: confirmed, committed };
}

/** WAREHOUSED → COMMITTED for one batch of a confirmed purchase order; false when not at WAREHOUSED. */
async function commitToPurchaseOrder(deps: CustodyDeps, po: PurchaseOrder, batchId: string): Promise<boolean> {
  const batch = await deps.batches.get(batchId);
  if (!batch || batch.stage !== 'WAREHOUSED') return false;
  try {
    await commitStageChange(deps, {
      batch, to: 'COMMITTED', actor: 'system:purchase-order',
      evidence: { purchase_order_id: po.purchase_order_id, buyer: po.buyer, price_usd_per_kg: po.price_usd_per_kg, confirmed_at: po.confirmed_at ?? null },
    });
    return true;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'STAGE_OUT_OF_ORDER') return false; // committed concurrently
    throw err;
  }
}

/** The purchase order as shown to callers. */
export function purchaseOrderView(po: PurchaseOrder) {
  const { created_by: _by, ...rest } = po;
  return rest;
}

/** GET /batch/{id}/audit entries, after the access check. Errors: BATCH_NOT_FOUND, INSUFFICIENT_PERMISSIONS. */
export async function readAuditEntries(batches: BatchRepository, caller: Caller, batchId: string) {
  const b = await batches.get(batchId);
  if (!b) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  assertActsFor(caller, b.cooperative_id);
  return { batch: b, entries: await batches.auditEntries(batchId) };
}

/**
 * Reconciliation of the trace log: ledger writes still unconfirmed after `staleAfterSeconds` are
 * queued again for the single writer (a lost queue message, or one that went to the DLQ while the
 * ledger was down). Returns how many were queued.
 */
export async function requeueStaleLedgerWrites(
  deps: { custody: CustodyRepository; ledgerQueue: WorkQueue<LedgerWriteMessage>; now: () => Date },
  staleAfterSeconds: number,
): Promise<number> {
  const cutoff = new Date(deps.now().getTime() - staleAfterSeconds * 1000).toISOString();
  const stale = await deps.custody.openLedgerTxsBefore(cutoff, 100);
  for (const tx of stale) await deps.ledgerQueue.send({ ledger_tx_id: tx.ledger_tx_id }, { deduplicationId: `${tx.ledger_tx_id}-${Date.now()}` });
  return stale.length;
}
