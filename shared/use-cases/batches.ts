import { assertActsFor, isCooperativeActive } from '../domain/access';
import { buildAuditEntry, GENESIS_HASH } from '../domain/audit';
import type { Caller } from '../domain/caller';
import { DomainError, LedgerUnavailableError } from '../domain/errors';
import { assertFarmerUsable } from '../domain/farmer';
import { formatBatchId, newJobId, tokenIdForBatch } from '../domain/ids';
import { ugxForWeight } from '../domain/money';
import type { BatchStore, CustodyStore } from '../domain/ports/batches';
import type { LedgerWriteMessage } from '../domain/ports/ledger';
import type { WorkQueue } from '../domain/ports/messaging';
import type { RegistryStore } from '../domain/ports/registry';
import type { Batch, Job, LedgerTx, PendingBatch } from '../domain/records';
import { logger } from '../runtime/logger';
import { waitForLedgerTx } from './ledger-wait';

/** The ports batch submission needs. */
export interface BatchDeps {
  registry: RegistryStore;
  batches: BatchStore;
  custody: Pick<CustodyStore, 'getLedgerTx' | 'attachJob'>;
  /** The single ledger writer's queue: the mint is made there, like every ledger write. */
  ledgerQueue: WorkQueue<LedgerWriteMessage>;
  now: () => Date;
}

/** POST /batch/submit input, validated by the transport (shared/http/schemas.ts SubmitBatchSchema): the delivery as the batch records it. */
export type SubmitBatchInput = Pick<
  Batch,
  | 'farmer_id'
  | 'cooperative_id'
  | 'weight_kg'
  | 'grade'
  | 'moisture_pct'
  | 'collection_point_gps'
  | 'weight_slip_photo_url'
  | 'collector_agent_id'
>;

export type SubmitResult =
  | { kind: 'created'; batch: Batch; farmerPhone: string | null; auditMessageId: string }
  | { kind: 'accepted'; job: Job };

/**
 * Whether `caller` may submit a batch for `input.cooperative_id` (cooperative binding, docs/security.md#tokens-and-roles).
 * Checked before an Idempotency-Key replay is served, so a replay never reaches a token that could
 * not make the request. Errors: INSUFFICIENT_PERMISSIONS (403).
 */
export function assertMaySubmitBatch(caller: Caller, input: Pick<SubmitBatchInput, 'cooperative_id'>): void {
  assertActsFor(caller, input.cooperative_id);
}

/**
 * POST /batch/submit (docs/api/batches-and-custody.md#batch-submission; docs/api/registries.md#cooperatives-farmers-and-the-forest-check, docs/api/conventions.md#identifiers-money-and-time, docs/api/conventions.md#http-and-errors, docs/api/batches-and-custody.md#custody-trail). Steps:
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
  input: SubmitBatchInput,
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
    throw new DomainError(
      'COOPERATIVE_NOT_ACTIVE',
      `Cooperative ${coop.cooperative_id}'s licence is ${coop.licence_status === 'ACTIVE' ? `expired since ${coop.licence_expires_at}` : coop.licence_status.toLowerCase()}.`,
    );
  }
  if (farmer.gfw_status === 'FLAGGED') {
    logger.warn('batch refused: farm flagged by the forest check, manual review required', {
      farmer_id: farmer.farmer_id,
      cooperative_id: coop.cooperative_id,
    });
    throw new DomainError(
      'GFW_CHECK_FAILED',
      `Farmer ${farmer.farmer_id}'s farm is flagged for deforestation after 2020-12-31; the farm is ineligible until a manual review clears it.`,
    );
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
      stage: 'DELIVERED',
      token_id: tokenId.toString(),
      farmer_id: input.farmer_id,
      cooperative_id: input.cooperative_id,
      weight_kg: input.weight_kg,
      grade: input.grade,
      moisture_pct: input.moisture_pct,
      collection_point_gps: input.collection_point_gps,
      weight_slip_photo_url: input.weight_slip_photo_url ?? null,
      collector_agent_id: input.collector_agent_id,
      payment_amount_ugx: paymentUgx,
    },
  });
  const batch: PendingBatch = {
    batch_id: batchId,
    batch_year: year,
    batch_number: n,
    token_id: tokenId.toString(),
    farmer_id: input.farmer_id,
    cooperative_id: input.cooperative_id,
    weight_kg: input.weight_kg,
    grade: input.grade,
    moisture_pct: input.moisture_pct,
    collection_point_gps: input.collection_point_gps,
    ...(input.weight_slip_photo_url ? { weight_slip_photo_url: input.weight_slip_photo_url } : {}),
    collector_agent_id: input.collector_agent_id,
    stage: null,
    mint_status: 'PENDING',
    audit_seq: 0,
    audit_head_hash: GENESIS_HASH,
    stage_history: [],
    payment_status: 'INITIATED',
    payment_amount_ugx: paymentUgx,
    payout_seq: 0,
    submitted_by: caller.sub,
    created_at: at,
    updated_at: at,
    pending_audit_entry: entry,
  };
  const job: Job | undefined = opts.respondAsync
    ? {
        job_id: newJobId(),
        type: 'BATCH_SUBMISSION',
        status: 'PENDING',
        cooperative_id: input.cooperative_id,
        batch_id: batchId,
        created_at: at,
      }
    : undefined;
  const mint: LedgerTx = {
    ledger_tx_id: `${batchId}-1`,
    kind: 'MINT',
    batch_id: batchId,
    token_id: tokenId.toString(),
    stage: 'DELIVERED',
    audit_hash: entry.hash,
    audit_sequence_number: 1,
    status: 'PENDING',
    created_at: at,
    ...(job ? { job_id: job.job_id } : {}),
  };
  await deps.batches.putPending(batch, mint, job);
  try {
    await deps.ledgerQueue.send({ ledger_tx_id: mint.ledger_tx_id }, { deduplicationId: mint.ledger_tx_id });
  } catch (err) {
    logger.error('mint could not be queued; reconciliation will queue it', { batch_id: batchId, error: err as Error });
  }
  if (job) return { kind: 'accepted', job };

  // Wait for the single ledger writer to land the mint (it then records the batch as DELIVERED).
  const landed = await waitForLedgerTx(deps, mint, opts.receiptWaitMs, () => ({
    job_id: newJobId(),
    type: 'BATCH_SUBMISSION',
    status: 'PENDING',
    cooperative_id: input.cooperative_id,
    batch_id: batchId,
    created_at: at,
  }));
  if (landed.kind === 'failed')
    throw new LedgerUnavailableError(`The BatchToken mint of ${batchId} was refused by the ledger; nothing was recorded.`);
  if (landed.kind === 'accepted') return { kind: 'accepted', job: landed.job };
  const confirmed = await deps.batches.get(batchId);
  if (!confirmed) throw new Error(`batch ${batchId}: mint confirmed but the batch is not`);
  return { kind: 'created', batch: confirmed, farmerPhone: farmer.phone ?? null, auditMessageId: entry.message_id };
}

/** Reads a batch for a caller. Errors: BATCH_NOT_FOUND (404), INSUFFICIENT_PERMISSIONS (403). */
export async function readBatch(batches: Pick<BatchStore, 'get'>, caller: Caller, batchId: string): Promise<Batch> {
  const b = await batches.get(batchId);
  if (!b) throw new DomainError('BATCH_NOT_FOUND', `Batch ${batchId} is not recognised.`);
  assertActsFor(caller, b.cooperative_id);
  return b;
}

/** GET /jobs/{id}: ADMIN, or the cooperative the job belongs to. Errors: JOB_NOT_FOUND, INSUFFICIENT_PERMISSIONS. */
export async function readJob(batches: Pick<BatchStore, 'getJob'>, caller: Caller, jobId: string): Promise<Job> {
  const j = await batches.getJob(jobId);
  if (!j) throw new DomainError('JOB_NOT_FOUND', `Job ${jobId} is not recognised.`);
  assertActsFor(caller, j.cooperative_id);
  return j;
}
