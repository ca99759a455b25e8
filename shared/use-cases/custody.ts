import { assertActsFor, assertDuty } from '../domain/access';
import type { Caller } from '../domain/caller';
import { isDdsEligible, isNextStage, STAGE_DUTY, type CallerStage } from '../domain/custody';
import { DomainError, LedgerUnavailableError, StageConflictError } from '../domain/errors';
import { buildEvidencePackage } from '../domain/evidence-package';
import { parseEvidencePhoto, type EvidencePhoto } from '../domain/evidence-photo';
import { newJobId } from '../domain/ids';
import type { BatchStore, CustodyStore } from '../domain/ports/batches';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import type { WorkQueue } from '../domain/ports/messaging';
import type { Batch, Job, LedgerTx, PurchaseOrder, Stage } from '../domain/records';
import { logger } from '../runtime/logger';
import { archiveEvidence, queueEvidencePin, type EvidenceKeeping } from './evidence-pinning';
import { waitForLedgerTx } from './ledger-wait';

/** The ports stage changes need. */
export interface CustodyDeps {
  batches: Pick<BatchStore, 'get'>;
  custody: Pick<CustodyStore, 'commitStage' | 'getPurchaseOrder' | 'getLedgerTx' | 'attachJob'>;
  /** The own copy of the evidence (written before the commit) and the background pinner's queue (docs/api/evidence.md#evidence-on-ipfs). */
  evidence: EvidenceKeeping;
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  now: () => Date;
}

/**
 * PATCH /batch/{id}/stage input, validated by the transport (shared/http/schemas.ts
 * StageUpdateSchema: one evidence schema per `new_stage`).
 */
export type StageUpdateInput = {
  cooperative_id: string;
  /** `data:image/jpeg|png|webp;base64,…`, at most 4 MiB decoded. */
  evidence_photo_base64?: string;
} & (
  | { new_stage: 'GRADED' | 'WAREHOUSED' | 'EXPORTED'; evidence: Record<string, unknown> }
  | { new_stage: 'MILLED'; evidence: { outturn_kg: number } & Record<string, unknown> }
);

/** A committed stage change (shared/http/views.ts `stageUpdateView` shapes the response). */
export interface StageChange {
  batch_id: string;
  previous_stage: Stage;
  new_stage: Stage;
  chain_tx_hash: string | null;
  audit_log_sequence_number: number;
  evidence_ipfs_cid: string;
  dds_eligible: boolean;
  at: string;
}

export type StageChangeResult = { kind: 'done'; change: StageChange } | { kind: 'accepted'; change: StageChange; job: Job };

/**
 * The duty a caller needs to set `to` (docs/security.md#tokens-and-roles), checked before the body's evidence (the
 * order of checks of docs/api/conventions.md#http-and-errors: the operation's permission, then the body).
 * Errors: INSUFFICIENT_PERMISSIONS (403).
 */
export function assertMaySetStage(caller: Caller, to: CallerStage): void {
  assertDuty(caller, [STAGE_DUTY[to]]);
}

/**
 * PATCH /batch/{batch_id}/stage (docs/api/batches-and-custody.md#custody-trail; docs/security.md#tokens-and-roles, docs/api/batches-and-custody.md#custody-trail). Steps:
 *  1. the duty of the new stage (INSUFFICIENT_PERMISSIONS); cooperative binding (403);
 *  2. the batch exists (BATCH_NOT_FOUND) and is the cooperative's (403);
 *  3. the new stage is the next one (STAGE_OUT_OF_ORDER), EXPORTED from WAREHOUSED with an
 *     unconfirmed purchase order is PO_NOT_CONFIRMED; MILLED outturn at most the batch weight;
 *  4. the evidence JSON and photo form one UnixFS directory (its CID is the evidence CID), kept as
 *     a CAR in the service's own copy before anything commits;
 *  5. one transaction: stage, history (evidence_pin_status PENDING), audit entry, and the trace-log
 *     write to make; then a pin job is queued: pinning runs in the background (docs/api/evidence.md#evidence-on-ipfs);
 *  6. the trace-log write goes to the single ledger writer; done once it is mined, or accepted
 *     with a job when the ledger is slow or unreachable (the stage change stands and the job
 *     completes when the transaction lands).
 * A WAREHOUSED batch whose purchase order is confirmed moves on to COMMITTED at once (system).
 */
export async function changeStage(
  deps: CustodyDeps,
  caller: Caller,
  batchId: string,
  input: StageUpdateInput,
  opts: { waitMs: number; photo?: () => Promise<EvidencePhoto> },
): Promise<StageChangeResult> {
  const to = input.new_stage;
  assertMaySetStage(caller, to);
  assertActsFor(caller, input.cooperative_id);
  const batch = await deps.batches.get(batchId);
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  if (batch.cooperative_id !== input.cooperative_id)
    throw new DomainError('INSUFFICIENT_PERMISSIONS', `Batch ${batchId} belongs to another cooperative.`);
  await assertSequence(deps, batch, to);
  if (input.new_stage === 'MILLED' && input.evidence.outturn_kg > batch.weight_kg) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `evidence.outturn_kg (${input.evidence.outturn_kg}) exceeds the batch weight (${batch.weight_kg} kg).`,
      { details: [{ path: 'evidence.outturn_kg', message: `must be at most the batch weight ${batch.weight_kg}` }] },
    );
  }
  // The photo: by upload (`opts.photo`, shared/use-cases/evidence-uploads.ts), else inline as base64.
  const photo = opts.photo
    ? await opts.photo()
    : input.evidence_photo_base64
      ? await parseEvidencePhoto(input.evidence_photo_base64)
      : undefined;

  // `batch` is a consistent read made just now: the commit starts from it as the audit head instead
  // of reading the same item again (if it moved meanwhile, the commit's conditions fail and it re-reads).
  const committed = await commitStageChange(deps, { batch, to, actor: caller.sub, evidence: input.evidence, photo, batchIsHead: true });
  if (to === 'WAREHOUSED' && batch.purchase_order_id) {
    const po = await deps.custody.getPurchaseOrder(batch.purchase_order_id);
    // CONFIRMING too: a large order's confirmation may have passed this batch already.
    if (po?.status === 'CONFIRMED' || po?.status === 'CONFIRMING') await commitToPurchaseOrder(deps, po, batch.batch_id);
  }
  return awaitLedger(deps, committed, opts.waitMs);
}

async function assertSequence(deps: Pick<CustodyDeps, 'custody'>, batch: Batch, to: Stage): Promise<void> {
  const from = batch.stage!;
  if (isNextStage(from, to)) return;
  if (to === 'EXPORTED' && from === 'WAREHOUSED' && batch.purchase_order_id) {
    const po = await deps.custody.getPurchaseOrder(batch.purchase_order_id);
    if (po && po.status !== 'CONFIRMED') {
      throw new DomainError(
        'PO_NOT_CONFIRMED',
        `Purchase order ${po.purchase_order_id} of batch ${batch.batch_id} is not confirmed; confirming it moves the batch to COMMITTED, then EXPORTED can follow.`,
      );
    }
  }
  throw new DomainError(
    'STAGE_OUT_OF_ORDER',
    `Batch ${batch.batch_id} is at ${from}; stages advance one at a time (${from} → ${to} is not the next step).`,
  );
}

/** A stage change committed with its ledger write. */
interface Committed {
  batch: Batch;
  from: Stage;
  to: Stage;
  at: string;
  cid: string;
  seq: number;
  ledgerTx: LedgerTx;
}

/**
 * Evidence packages already built and archived, by their evidence's content, for the time of one
 * run of the order worker: the COMMITTED evidence of an order's batches is the same for all of
 * them (one CID), and so is the SETTLED evidence of its batches without a loan.
 */
export type EvidenceMemo = Map<string, Promise<{ cid: string; files: Array<{ path: string }> }>>;

/** The evidence package built and archived (its own copy, before the commit), once per content within `memo`; never memoised with a photo. */
async function keptEvidence(
  deps: Pick<CustodyDeps, 'evidence'>,
  evidence: Record<string, unknown>,
  photo: { bytes: Uint8Array; extension: 'jpg' | 'png' | 'webp' } | undefined,
  memo: EvidenceMemo | undefined,
): Promise<{ cid: string; files: Array<{ path: string }> }> {
  const build = async () => {
    const pkg = await buildEvidencePackage({ evidence, photo });
    await archiveEvidence(deps.evidence, pkg.cid, pkg.blocks, pkg.files);
    return pkg;
  };
  if (!memo || photo) return build();
  const key = JSON.stringify(evidence);
  let kept = memo.get(key);
  if (!kept) {
    kept = build();
    memo.set(key, kept);
    kept.catch(() => memo.delete(key)); // a failed archive is tried again by the next batch
  }
  return kept;
}

/** Steps 4–5: archive the evidence, commit the stage change with its audit entry and ledger write, queue its pin. */
async function commitStageChange(
  deps: Omit<CustodyDeps, 'custody'> & { custody: Pick<CustodyStore, 'commitStage'> },
  input: {
    batch: Batch;
    to: Stage;
    actor: string;
    evidence: Record<string, unknown>;
    photo?: { bytes: Uint8Array; extension: 'jpg' | 'png' | 'webp' };
    memo?: EvidenceMemo;
    /** `batch` was read just now and is its audit head (nothing appended since): the commit need not read it again. */
    batchIsHead?: boolean;
  },
): Promise<Committed> {
  const { batch, to } = input;
  const from = batch.stage!;
  const pkg = await keptEvidence(deps, input.evidence, input.photo, input.memo);
  const at = deps.now().toISOString();
  try {
    const { entry, ledgerTx } = await deps.custody.commitStage({
      batchId: batch.batch_id,
      tokenId: batch.token_id,
      from,
      to,
      at,
      actor: input.actor,
      evidenceCid: pkg.cid,
      payload: { evidence: input.evidence, evidence_files: pkg.files.map((f) => f.path) },
      ...(to === 'MILLED' && typeof input.evidence.outturn_kg === 'number' ? { outturnKg: input.evidence.outturn_kg } : {}),
      ...(input.batchIsHead ? { head: batch } : {}),
    });
    // The ledger write's message and the evidence pin's, side by side (each failure is logged; reconciliation queues it again).
    await Promise.all([
      deps.ledgerQueue.send({ ledger_tx_id: ledgerTx.ledger_tx_id }, { deduplicationId: ledgerTx.ledger_tx_id }).catch((err: unknown) =>
        logger.error('ledger write could not be queued; reconciliation will queue it', {
          ledger_tx_id: ledgerTx.ledger_tx_id,
          error: err as Error,
        }),
      ),
      queueEvidencePin(deps.evidence, {
        kind: 'STAGE',
        cid: pkg.cid,
        batch_id: batch.batch_id,
        stage: to,
        history_index: ledgerTx.history_index ?? batch.stage_history.length,
      }),
    ]);
    return { batch, from, to, at, cid: pkg.cid, seq: entry.sequence_number, ledgerTx };
  } catch (err) {
    if (err instanceof StageConflictError) {
      throw new DomainError(
        'STAGE_OUT_OF_ORDER',
        `Batch ${batch.batch_id} moved to ${err.current} meanwhile; ${from} → ${to} no longer applies.`,
      );
    }
    throw err;
  }
}

/** Step 6: wait for the single writer to land the trace-log transaction, or answer with a job. */
async function awaitLedger(deps: CustodyDeps, c: Committed, waitMs: number): Promise<StageChangeResult> {
  const change = (tx: LedgerTx | null): StageChange => ({
    batch_id: c.batch.batch_id,
    previous_stage: c.from,
    new_stage: c.to,
    chain_tx_hash: tx?.tx_hash ?? null,
    audit_log_sequence_number: c.seq,
    evidence_ipfs_cid: c.cid,
    dds_eligible: isDdsEligible(c.to),
    at: c.at,
  });
  const landed = await waitForLedgerTx(deps, c.ledgerTx, waitMs, () => ({
    job_id: newJobId(),
    type: 'STAGE_CHANGE',
    status: 'PENDING',
    cooperative_id: c.batch.cooperative_id,
    batch_id: c.batch.batch_id,
    created_at: deps.now().toISOString(),
  }));
  if (landed.kind === 'failed')
    throw new LedgerUnavailableError(`The trace-log write of ${c.batch.batch_id} (${c.to}) was refused by the ledger.`);
  if (landed.kind === 'accepted') return { kind: 'accepted', change: change(landed.tx), job: landed.job };
  return { kind: 'done', change: change(landed.tx) };
}

/**
 * What the order worker hands a batch's step: the batch as its step's batched read found it
 * (undefined: read it here; a stale read only makes the conditioned commit fail, reported as
 * not moved) and the run's evidence memo.
 */
export interface BatchStepContext {
  batch?: Batch | null;
  memo?: EvidenceMemo;
  /** `batch` is the batch's audit head as it stands (its sequence number and hash current): the commit does not read it again. */
  batchIsHead?: boolean;
}

/** WAREHOUSED → COMMITTED for one batch of a confirmed purchase order; false when not at WAREHOUSED. */
export async function commitToPurchaseOrder(
  deps: Omit<CustodyDeps, 'custody'> & { custody: Pick<CustodyStore, 'commitStage'> },
  po: PurchaseOrder,
  batchId: string,
  step: BatchStepContext = {},
): Promise<boolean> {
  const batch = step.batch !== undefined ? step.batch : await deps.batches.get(batchId);
  if (batch?.stage !== 'WAREHOUSED') return false;
  try {
    await commitStageChange(deps, {
      batch,
      to: 'COMMITTED',
      actor: 'system:purchase-order',
      // Public evidence (served at /ipfs without a token): the order's id, never its price or amounts.
      evidence: { purchase_order_id: po.purchase_order_id, buyer: po.buyer, confirmed_at: po.confirmed_at ?? null },
      ...(step.memo ? { memo: step.memo } : {}),
      ...(step.batch && step.batchIsHead ? { batchIsHead: true } : {}),
    });
    return true;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'STAGE_OUT_OF_ORDER') return false; // committed concurrently
    throw err;
  }
}

/**
 * EXPORTED → SETTLED for one batch of a purchase order its buyer has paid (trace log + audit log,
 * evidence: the purchase order, the payments' transaction hashes and the loan id — no amounts, as
 * the evidence is public). Set by the system only. False when the batch is not at EXPORTED (already
 * settled, or not exported yet).
 */
export async function settleBatch(
  deps: Omit<CustodyDeps, 'custody' | 'batches'> & { batches: Pick<BatchStore, 'get'>; custody: Pick<CustodyStore, 'commitStage'> },
  batchId: string,
  evidence: { purchase_order_id: string; payment_tx_hashes: string[]; loan_id: string | null },
  step: BatchStepContext = {},
): Promise<boolean> {
  const batch = step.batch !== undefined ? step.batch : await deps.batches.get(batchId);
  if (batch?.stage !== 'EXPORTED') return false;
  try {
    await commitStageChange(deps, {
      batch,
      to: 'SETTLED',
      actor: 'system:lending-vault',
      evidence,
      ...(step.memo ? { memo: step.memo } : {}),
      // The step's batched read is the batch's head: nothing appends to its log between (the order's audit fan-out comes after).
      ...(step.batch ? { batchIsHead: true } : {}),
    });
    return true;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'STAGE_OUT_OF_ORDER') return false; // settled concurrently
    throw err;
  }
}
