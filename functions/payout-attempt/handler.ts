import { payoutDeps } from '../../shared/composition';
import { logger } from '../../shared/runtime/logger';
import { runPayoutAttempt } from '../../shared/use-cases/payouts';

/**
 * State-machine task `AttemptN` (`lambda:invoke.waitForTaskToken`): event is the task's Payload
 * `{payout_id, attempt, task_token}`. Returns once the order exists and the token is parked; the
 * execution then waits for the settlement webhook.
 */
export async function handler(event: { payout_id: string; attempt: number; task_token: string }): Promise<{ parked: true }> {
  logger.appendKeys({ payout_id: event.payout_id, attempt: event.attempt });
  await runPayoutAttempt(payoutDeps(), event);
  logger.resetKeys();
  return { parked: true };
}
