import { notifier, now, payoutRepo, registryRepo } from '../../shared/composition/platform';
import { moveToManualReview } from '../../shared/use-cases/payouts';
import { instrumented } from '../../shared/runtime/instrument';

/** State-machine task `ManualReview`: `{payout_id}` → `{status}`; notifies the cooperative manager. */
async function run(event: { payout_id: string }): Promise<{ status: string }> {
  return moveToManualReview({ payouts: payoutRepo(), registry: registryRepo(), notifier: notifier(), now }, event);
}

/** The task, its business metrics flushed (EMF) when it ends. */
export const handler = instrumented(run);
