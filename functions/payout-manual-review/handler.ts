import { notifier } from '../../shared/composition/notifier';
import { now, payoutRepo, registryRepo } from '../../shared/composition/repos';
import { moveToManualReview } from '../../shared/use-cases/payouts';

/** State-machine task `ManualReview`: `{payout_id}` → `{status}`; notifies the cooperative manager. */
export async function handler(event: { payout_id: string }): Promise<{ status: string }> {
  return moveToManualReview({ payouts: payoutRepo(), registry: registryRepo(), notifier: notifier(), now }, event);
}
