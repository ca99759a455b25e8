import type { CustodyStore } from '../domain/ports/batches';
import type { Job, LedgerTx } from '../domain/records';

/** How a wait for a ledger write ended. */
export type LedgerWait =
  | { kind: 'confirmed'; tx: LedgerTx }
  | { kind: 'failed'; tx: LedgerTx }
  /** Not mined within the wait: `job` is attached to the write and completes when it lands. */
  | { kind: 'accepted'; job: Job; tx: LedgerTx | null };

/** How often the write's status is read while waiting (ms). */
const LEDGER_WAIT_POLL_MS = 25;

/**
 * Waits up to `waitMs` for the single ledger writer to land `write` (batch submission's mint, a
 * stage change's trace-log record). Confirmed or failed within the wait: that outcome. Otherwise a
 * job from `newJob()` is attached to the write (conditionally: only while it is not confirmed), and
 * the caller answers 202 with it; when the write was confirmed meanwhile, that is returned instead.
 */
export async function waitForLedgerTx(
  deps: { custody: Pick<CustodyStore, 'getLedgerTx' | 'attachJob'> },
  write: LedgerTx,
  waitMs: number,
  newJob: () => Job,
): Promise<LedgerWait> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const tx = await deps.custody.getLedgerTx(write.ledger_tx_id);
    if (tx?.status === 'CONFIRMED') return { kind: 'confirmed', tx };
    if (tx?.status === 'FAILED') return { kind: 'failed', tx };
    if (Date.now() >= deadline) {
      const job = newJob();
      if (await deps.custody.attachJob(write, job)) return { kind: 'accepted', job, tx };
      continue; // confirmed meanwhile: the next read says so
    }
    await new Promise((r) => setTimeout(r, LEDGER_WAIT_POLL_MS));
  }
}
