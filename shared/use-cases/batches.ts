import type * as v from 'valibot';
import type { Caller } from '../auth/claims';
import type { BatchRepository } from '../adapters/dynamodb/batch-repo';
import type { RegistryRepository } from '../adapters/dynamodb/registry-repo';
import type { PayoutRequestMessage } from '../adapters/aws/queues';
import type { CustodyRepository, LedgerTx } from '../adapters/dynamodb/custody-repo';
import type { LedgerWriteMessage } from './custody';
import { buildAuditEntry, GENESIS_HASH } from '../domain/audit';
import { DomainError, LedgerUnavailableError } from '../domain/errors';
import { formatBatchId, newJobId, tokenIdForBatch } from '../domain/ids';
import { ugxForWeight } from '../domain/money';
import { maskPhone } from '../domain/masking';
import type { WorkQueue } from '../domain/ports';
import { STAGES, type AuditEntry, type Batch, type Job } from '../domain/records';
import type { SubmitBatchSchema } from '../http/schemas';
import { logger } from '../runtime/logger';
import { assertActsFor } from './access';
import { assertFarmerUsable, isCooperativeActive } from './registry';
import { ESTIMATED_COMPLETION_SECONDS } from './payouts';

export interface BatchDeps {
  registry: RegistryRepository;
  batches: BatchRepository;
  custody: CustodyRepository;
  /** The single ledger writer's queue: the mint is made there, like every ledger write. */
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  payoutQueue: WorkQueue<PayoutRequestMessage>;
  now: () => Date;
}

/** A pending batch keeps the audit entry its mint carries until the receipt confirms it. */
type PendingBatch = Batch & { pending_audit_entry?: AuditEntry };

export type SubmitResult =
  | { kind: 'created'; batch: Batch; farmerPhone: string | null; auditMessageId: string }
  | { kind: 'accepted'; job: Job };

/**
 * POST /batch/submit (interface-spec rules 1–5; decisions §3, §4, §5, §8). Steps:
 *  1. cooperative binding (403); the farmer is registered with that cooperative
 *     (FARMER_NOT_REGISTERED 404); the cooperative exists (404) and is active
 *     (COOPERATIVE_NOT_ACTIVE 422); the farm is not flagged by the forest check (GFW_CHECK_FAILED 422);
 *  2. the next batch number from the atomic counter; the token id derives from it;
 *  3. the first audit entry (BATCH_SUBMITTED) is built, and its hash goes on chain with the mint;
 *  4. the batch is stored as mint-pending (invisible to readers) with the ledger write that
 *     mints its BatchToken, in one transaction; the single ledger writer makes the mint (so the
 *     signer's nonces never collide with other ledger writes) and, once it is mined, makes the
 *     batch DELIVERED with its first audit entry and requests the NET_COFFEE_PAYMENT payout;
 *  5. up to `receiptWaitMs` for that: 201; a slow ledger or `Prefer: respond-async` answers 202
 *     with a job that completes when the mint lands; a mint the chain refuses: 503.
 */
export async function submitBatch(
  deps: BatchDeps,
  caller: Caller,
  input: v.InferOutput<typeof SubmitBatchSchema>,
  opts: { respondAsync: boolean; receiptWaitMs: number },
): Promise<SubmitResult> {
  assertActsFor(caller, input.cooperative_id);
  const [farmer, coop] = await Promise.all([deps.registry.getFarmer(input.farmer_id), deps.registry.getCooperative(input.cooperative_id)]);
  if (!farmer || farmer.cooperative_id !== input.cooperative_id) {
    throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${input.farmer_id} is not registered with cooperative ${input.cooperative_id}.`);
  }
  if (!coop) throw new DomainError('COOPERATIVE_NOT_FOUND', `Cooperative ${input.cooperative_id} is not registered.`);
  assertFarmerUsable(farmer);
  const now = deps.now();
  if (!isCooperativeActive(coop, now)) {
    throw new DomainError('COOPERATIVE_NOT_ACTIVE', `Cooperative ${coop.cooperative_id}'s licence is ${coop.licence_status === 'ACTIVE' ? `expired since ${coop.licence_expires_at}` : coop.licence_status.toLowerCase()}.`);
  }
  if (farmer.gfw_status === 'FLAGGED') {
    logger.warn('batch refused: farm flagged by the forest check, manual review required', { farmer_id: farmer.farmer_id, cooperative_id: coop.cooperative_id });
    throw new DomainError('GFW_CHECK_FAILED', `Farmer ${farmer.farmer_id}'s farm is flagged for deforestation after 2020-12-31; the farm is ineligible until a manual review clears it.`);
  }

  const year = now.getUTCFullYear();
  const n = await deps.batches.nextBatchNumber(year);
  const batchId = formatBatchId(year, n);
  const tokenId = tokenIdForBatch(year, n);
  const at = now.toISOString();
  const paymentUgx = ugxForWeight(input.weight_kg, coop.prices_ugx_per_kg[input.grade]);
  const entry = buildAuditEntry({
    batchId,
    seq: 1,
    type: 'BATCH_SUBMITTED',
    at,
    actor: caller.sub,
    prevHash: GENESIS_HASH,
    payload: {
      stage: 'DELIVERED', token_id: tokenId.toString(), farmer_id: input.farmer_id, cooperative_id: input.cooperative_id, weight_kg: input.weight_kg, grade: input.grade,
      moisture_pct: input.moisture_pct, collection_point_gps: input.collection_point_gps, weight_slip_photo_url: input.weight_slip_photo_url ?? null,
      collector_agent_id: input.collector_agent_id, payment_amount_ugx: paymentUgx,
    },
  });
  const batch: PendingBatch = {
    batch_id: batchId, batch_year: year, batch_number: n, token_id: tokenId.toString(), farmer_id: input.farmer_id, cooperative_id: input.cooperative_id,
    weight_kg: input.weight_kg, grade: input.grade, moisture_pct: input.moisture_pct, collection_point_gps: input.collection_point_gps,
    ...(input.weight_slip_photo_url ? { weight_slip_photo_url: input.weight_slip_photo_url } : {}),
    collector_agent_id: input.collector_agent_id, stage: null, mint_status: 'PENDING', audit_seq: 0, audit_head_hash: GENESIS_HASH, stage_history: [],
    payment_status: 'INITIATED', payment_amount_ugx: paymentUgx, payout_seq: 0, submitted_by: caller.sub, created_at: at, updated_at: at,
    pending_audit_entry: entry,
  };
  const job: Job | undefined = opts.respondAsync
    ? { job_id: newJobId(), type: 'BATCH_SUBMISSION', status: 'PENDING', cooperative_id: input.cooperative_id, batch_id: batchId, created_at: at }
    : undefined;
  const mint: LedgerTx = {
    ledger_tx_id: `${batchId}-1`, kind: 'MINT', batch_id: batchId, token_id: tokenId.toString(), stage: 'DELIVERED', audit_hash: entry.hash,
    audit_sequence_number: 1, status: 'PENDING', created_at: at, ...(job ? { job_id: job.job_id } : {}),
  };
  await deps.batches.putPending(batch, mint, job);
  try {
    await deps.ledgerQueue.send({ ledger_tx_id: mint.ledger_tx_id }, { deduplicationId: mint.ledger_tx_id });
  } catch (err) {
    logger.error('mint could not be queued; reconciliation will queue it', { batch_id: batchId, error: err as Error });
  }
  if (job) return { kind: 'accepted', job };

  // Wait for the single ledger writer to land the mint (it then records the batch as DELIVERED).
  const deadline = Date.now() + opts.receiptWaitMs;
  for (;;) {
    const tx = await deps.custody.getLedgerTx(mint.ledger_tx_id);
    if (tx?.status === 'CONFIRMED') {
      const confirmed = await deps.batches.get(batchId);
      if (confirmed) return { kind: 'created', batch: confirmed, farmerPhone: farmer.phone ?? null, auditMessageId: entry.message_id };
    }
    if (tx?.status === 'FAILED') throw new LedgerUnavailableError(`The BatchToken mint of ${batchId} was refused by the ledger; nothing was recorded.`);
    if (Date.now() >= deadline) {
      const slowJob: Job = { job_id: newJobId(), type: 'BATCH_SUBMISSION', status: 'PENDING', cooperative_id: input.cooperative_id, batch_id: batchId, created_at: at };
      if (await deps.custody.attachJob(mint, slowJob)) return { kind: 'accepted', job: slowJob };
      continue; // confirmed meanwhile
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Records a mined BatchToken (used by submission and by the mint queue's consumer): batch
 * DELIVERED, first audit entry, job COMPLETE — one transaction, idempotent — then requests the
 * batch's NET_COFFEE_PAYMENT payout through the payout-request queue.
 */
export async function confirmBatchMint(deps: { batches: BatchRepository; payoutQueue: WorkQueue<PayoutRequestMessage>; now: () => Date }, msg: { batch_id: string; tx_hash: string; job_id?: string }): Promise<Batch> {
  const pending = (await deps.batches.getAny(msg.batch_id)) as PendingBatch | null;
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
      jobId: msg.job_id,
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

/** Stages at or after GRADED make a batch DDS-eligible (interface-spec "What the service does" 7). */
export function isDdsEligible(stage: Batch['stage']): boolean {
  return stage !== null && STAGES.indexOf(stage) >= STAGES.indexOf('GRADED');
}

/** The 201 body of POST /batch/submit (interface-spec "Batch submission" response). */
export function submissionView(r: Extract<SubmitResult, { kind: 'created' }>) {
  return {
    success: true,
    data: {
      batch_id: r.batch.batch_id,
      token_id: r.batch.token_id,
      chain_tx_hash: r.batch.chain_tx_hash,
      audit_log_message_id: r.auditMessageId,
      payment_status: r.batch.payment_status,
      payment_amount_ugx: r.batch.payment_amount_ugx,
      farmer_phone: r.farmerPhone ? maskPhone(r.farmerPhone) : null,
      estimated_payment_time_seconds: ESTIMATED_COMPLETION_SECONDS,
      stage: r.batch.stage,
      created_at: r.batch.created_at,
    },
  };
}

/** GET /batch/{id} (decisions §8). */
export function batchView(b: Batch) {
  return {
    batch_id: b.batch_id,
    token_id: b.token_id,
    farmer_id: b.farmer_id,
    cooperative_id: b.cooperative_id,
    weight_kg: b.weight_kg,
    grade: b.grade,
    moisture_pct: b.moisture_pct,
    collection_point_gps: b.collection_point_gps,
    weight_slip_photo_url: b.weight_slip_photo_url ?? null,
    collector_agent_id: b.collector_agent_id,
    stage: b.stage,
    chain_tx_hash: b.chain_tx_hash ?? null,
    stage_history: b.stage_history,
    dds_eligible: isDdsEligible(b.stage),
    payment_status: b.payment_status,
    payment_amount_ugx: b.payment_amount_ugx,
    audit_log_length: b.audit_seq,
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

/** Reads a batch for a caller. Errors: BATCH_NOT_FOUND (404), INSUFFICIENT_PERMISSIONS (403). */
export async function readBatch(batches: BatchRepository, caller: Caller, batchId: string): Promise<Batch> {
  const b = await batches.get(batchId);
  if (!b) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  assertActsFor(caller, b.cooperative_id);
  return b;
}

/** GET /jobs/{id}: ADMIN, or the cooperative the job belongs to. Errors: JOB_NOT_FOUND, INSUFFICIENT_PERMISSIONS. */
export async function readJob(batches: BatchRepository, caller: Caller, jobId: string) {
  const j = await batches.getJob(jobId);
  if (!j) throw new DomainError('JOB_NOT_FOUND', `Job ${jobId} is not recognised.`);
  assertActsFor(caller, j.cooperative_id);
  return { job_id: j.job_id, type: j.type, status: j.status, ...(j.farmer_id ? { farmer_id: j.farmer_id } : { batch_id: j.batch_id ?? null }), tx_hash: j.tx_hash ?? null, ...(j.error ? { error: j.error } : {}), created_at: j.created_at, completed_at: j.completed_at ?? null };
}
