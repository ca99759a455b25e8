import { payoutDeps } from '../../shared/composition/payouts';
import { attemptNumber } from '../../shared/domain/payout-lifecycle';
import { logger } from '../../shared/runtime/logger';
import { checkPayoutAttempt, type CheckOutcome } from '../../shared/use-cases/payouts';
import { instrumented } from '../../shared/runtime/instrument';

/**
 * State-machine task `CheckAttemptN`: `{payout_id, attempt, round, last_error}` (`attempt` the step
 * 1–4 of round `round`: the payout's attempt 4·round + step) → `{outcome}` with outcome
 * COMPLETED | PENDING | RETRY | EXHAUSTED (the Choice state routes on it).
 */
async function run(event: {
  payout_id: string;
  attempt: number;
  round?: number;
  last_error?: unknown;
}): Promise<{ outcome: CheckOutcome }> {
  const attempt = attemptNumber(event.round ?? 0, event.attempt);
  logger.appendKeys({ payout_id: event.payout_id, attempt });
  const result = await checkPayoutAttempt(payoutDeps(), { payout_id: event.payout_id, attempt });
  logger.info('attempt checked', { outcome: result.outcome, last_error: event.last_error });
  return result;
}

/**
 * The task with the Powertools middlewares (shared/runtime/instrument.ts): its metrics flushed
 * (EMF) when it ends, and the keys appended above removed then, success or throw.
 */
export const handler = instrumented(run);
