import { StoreUnavailableError } from '../domain/errors';
import { exportCar, PinRootMismatchError } from '../domain/evidence-car';
import type { IpfsBlock } from '../domain/evidence-package';
import type { CarPinner, EvidenceArchive, EvidencePinMessage, EvidencePinStatusStore } from '../domain/ports/evidence';
import type { WorkQueue } from '../domain/ports/messaging';
import { logger } from '../runtime/logger';
import { metrics } from '../runtime/metrics';

/** What a write path needs to keep evidence (docs/api/evidence.md#evidence-on-ipfs): the own copy, and the queue of the background pinner. */
export interface EvidenceKeeping {
  archive: Pick<EvidenceArchive, 'putCar'>;
  pinQueue: WorkQueue<EvidencePinMessage>;
}

/**
 * Step one of keeping evidence, BEFORE the stage change (or DDS) that names `root` commits: the
 * DAG exported as a CAR and stored in the service's own copy (with its files, which GET /ipfs hands
 * out by URL), so nothing a committed CID names can be lost. Errors: StoreUnavailableError (503 AUDIT_LOG_UNAVAILABLE, Retry-After) when the copy
 * cannot be written — nothing is committed then.
 */
export async function archiveEvidence(
  deps: Pick<EvidenceKeeping, 'archive'>,
  root: string,
  blocks: readonly IpfsBlock[],
  files: ReadonlyArray<{ path: string; bytes: Uint8Array }> = [],
): Promise<void> {
  const car = await exportCar(root, blocks);
  try {
    await deps.archive.putCar(root, car, files);
  } catch (err) {
    logger.error('evidence could not be archived', { cid: root, error: err as Error });
    throw new StoreUnavailableError('The evidence store is temporarily unavailable; nothing was changed, retry shortly.', err);
  }
}

/**
 * Step two, AFTER the commit: one pin job for the background pinner (the pin status starts
 * PENDING with the commit, which also wrote the job's record). A queue failure is logged, not
 * thrown: the change stands, its evidence is served from the own copy, and reconciliation
 * ({@link requeueStalePins}) queues the job again.
 */
export async function queueEvidencePin(deps: Pick<EvidenceKeeping, 'pinQueue'>, msg: EvidencePinMessage): Promise<void> {
  try {
    await deps.pinQueue.send(msg);
  } catch (err) {
    logger.error('evidence pin job could not be queued; the evidence stays PENDING (served from the own copy)', {
      cid: msg.cid,
      batch_id: msg.batch_id,
      error: err as Error,
    });
  }
}

/** The ports of the background pinner. */
export interface EvidencePinnerDeps {
  archive: Pick<EvidenceArchive, 'getCar'>;
  pinner: CarPinner;
  statuses: EvidencePinStatusStore;
  now: () => Date;
}

/**
 * The background pinner (the evidence pin queue's consumer): reads the CAR of `msg.cid` from the
 * own copy, has the pinning service import it and pin its root, and records PINNED on the stage
 * (or DDS). A failed attempt records FAILED and throws, so the queue redelivers it (and after its
 * receive limit dead-letters it); a root-CID mismatch records FAILED and is logged as an error
 * but not retried (the same CAR gives the same answer). A CAR missing from the own copy is an
 * error (retried: it is written before the commit, so this only happens on a store outage).
 * A DDS job (queued before statements became private) is closed without pinning: a due diligence
 * statement holds full names and exact plots and never goes to the public IPFS network.
 */
export async function pinEvidence(deps: EvidencePinnerDeps, msg: EvidencePinMessage): Promise<void> {
  if (msg.kind === 'DDS') {
    await deps.statuses.closePinJob(msg, deps.now().toISOString());
    logger.warn('a DDS pin job was dropped: due diligence statements are private and never pinned', { cid: msg.cid, dds_id: msg.dds_id });
    metrics.count('EvidencePins', { outcome: 'PRIVATE_SKIPPED' });
    return;
  }
  const record = (status: 'PINNED' | 'FAILED') =>
    deps.statuses.setStagePinStatus(msg.batch_id, msg.history_index, msg.cid, status, deps.now().toISOString());
  try {
    const car = await deps.archive.getCar(msg.cid);
    if (!car) throw new Error(`The own copy has no CAR for ${msg.cid}.`);
    await deps.pinner.pinCar({
      root: msg.cid,
      car,
      name: `${msg.batch_id}-${msg.stage}`,
      meta: { batch_id: msg.batch_id, stage: msg.stage },
    });
  } catch (err) {
    await record('FAILED').catch((e: unknown) =>
      logger.warn('pin status FAILED could not be recorded', { cid: msg.cid, error: e as Error }),
    );
    metrics.count('EvidencePins', { outcome: err instanceof PinRootMismatchError ? 'ROOT_MISMATCH' : 'FAILED' });
    if (err instanceof PinRootMismatchError) {
      await deps.statuses.closePinJob(msg, deps.now().toISOString());
      logger.error('the pinning service pinned another root than the evidence CID', {
        cid: msg.cid,
        reported: err.reported,
        batch_id: msg.batch_id,
        error: err,
      });
      return;
    }
    throw err;
  }
  await record('PINNED');
  await deps.statuses.closePinJob(msg, deps.now().toISOString());
  metrics.count('EvidencePins', { outcome: 'PINNED' });
}

/** How often reconciliation queues one pin job again before giving up on it (its status stays FAILED or PENDING, an error is logged). */
export const MAX_PIN_REQUEUES = 3;

/**
 * Reconciliation of evidence pins (run with the ledger-write reconciler): every pin job still open
 * `staleAfterSeconds` after it was queued (a queue send lost after its commit, or a job the queue
 * dead-lettered) is queued again and marked re-queued, at most {@link MAX_PIN_REQUEUES} times;
 * then it is given up with an error log line (the DLQ alarm has fired by then). At most 100 jobs
 * a run. Returns how many were queued and given up. Errors: the store's and the queue's (the next run retries).
 */
export async function requeueStalePins(
  deps: {
    statuses: Pick<EvidencePinStatusStore, 'stalePinJobs' | 'markPinJobRequeued'>;
    pinQueue: WorkQueue<EvidencePinMessage>;
    now: () => Date;
  },
  staleAfterSeconds: number,
): Promise<{ pinsRequeued: number; pinsGivenUp: number }> {
  const now = deps.now();
  const cutoff = new Date(now.getTime() - staleAfterSeconds * 1000).toISOString();
  let pinsRequeued = 0;
  let pinsGivenUp = 0;
  for (const { message, requeues } of await deps.statuses.stalePinJobs(cutoff, 100)) {
    if (requeues >= MAX_PIN_REQUEUES) {
      if (await deps.statuses.markPinJobRequeued(message, now.toISOString(), { giveUp: true })) {
        pinsGivenUp += 1;
        logger.error('evidence pin given up after re-queues; the evidence is still served from the own copy', {
          cid: message.cid,
          batch_id: message.batch_id,
          requeues,
        });
      }
      continue;
    }
    // Marked first: a crash between the two leaves the job for the next run, never a double mark.
    if (!(await deps.statuses.markPinJobRequeued(message, now.toISOString()))) continue;
    await deps.pinQueue.send(message);
    pinsRequeued += 1;
  }
  return { pinsRequeued, pinsGivenUp };
}
