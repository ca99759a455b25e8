import { randomUUID } from 'node:crypto';
import { chainWatchConfig, chainWatchDeps } from '../../shared/composition/chain-events';
import { instrumented } from '../../shared/runtime/instrument';
import { runChainWatch, type ChainWatchReport } from '../../shared/use-cases/chain-watch';

/** Lease of a run when the runtime does not say how long the function may still run (the local timer): 2 × 60 s. */
const DEFAULT_LEASE_MS = 120_000;

/**
 * Scheduled chain watcher (EventBridge, every minute; locally a timer when LOCAL_CHAIN_EVENTS is
 * `scheduled`): reads TraceLog `StageRecorded` and LendingVault `PurchaseOrderPaid` logs from the
 * cursor kept in the table, CHAIN_WATCH_CONFIRMATIONS blocks deep, and applies each as the
 * chain-events webhook would (EXPORTED → TOP_UP payout; buyer payment → settlement), with no
 * webhook sent (shared/use-cases/chain-watch.ts). The lease lasts twice the time the function has
 * left, so it outlives the run. Answers the run's report; throws when a range failed (the cursor
 * stays before it and the next run reads it again), so the failure counts as a function error.
 */
export const handler = instrumented(
  async (_event?: unknown, context?: { getRemainingTimeInMillis?: () => number }): Promise<ChainWatchReport> => {
    const remaining = context?.getRemainingTimeInMillis?.();
    const leaseMs = remaining && remaining > 0 ? 2 * remaining : DEFAULT_LEASE_MS;
    const report = await runChainWatch(chainWatchDeps(), chainWatchConfig(leaseMs), randomUUID());
    if (report.outcome === 'FAILED') throw new Error(`chain watch failed at block ${report.next_block}: ${report.error}`);
    return report;
  },
);
