import { payoutDeps } from '../../shared/composition/payouts';
import { attemptNumber } from '../../shared/domain/payout-lifecycle';
import { logger } from '../../shared/runtime/logger';
import { runPayoutAttempt } from '../../shared/use-cases/payouts';
import { instrumented } from '../../shared/runtime/instrument';

/**
 * State-machine task `AttemptN` (`lambda:invoke.waitForTaskToken`): event is the task's Payload
 * `{payout_id, attempt, round, task_token}` (`attempt` the step 1–4 of round `round`, docs/api/payouts.md#manual-review:
 * the payout's attempt 4·round + step). Returns once the order exists and the token is parked; the
 * execution then waits for the settlement webhook.
 */
async function run(event: { payout_id: string; attempt: number; round?: number; task_token: string }): Promise<{ parked: true }> {
  const attempt = attemptNumber(event.round ?? 0, event.attempt);
  logger.appendKeys({ payout_id: event.payout_id, attempt });
  await runPayoutAttempt(payoutDeps(), { payout_id: event.payout_id, attempt, task_token: event.task_token });
  return { parked: true };
}

/**
 * The task with the Powertools middlewares (shared/runtime/instrument.ts): its metrics flushed
 * (EMF) when it ends, and the keys appended above removed then, success or throw.
 */
export const handler = instrumented(run);
