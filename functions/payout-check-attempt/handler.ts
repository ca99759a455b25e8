import { payoutDeps } from '../../shared/composition';
import { logger } from '../../shared/runtime/logger';
import { checkPayoutAttempt, type CheckOutcome } from '../../shared/use-cases/payouts';

/**
 * State-machine task `CheckAttemptN`: `{payout_id, attempt, last_error}` → `{outcome}` with
 * outcome COMPLETED | PENDING | RETRY | EXHAUSTED (the Choice state routes on it).
 */
export async function handler(event: { payout_id: string; attempt: number; last_error?: unknown }): Promise<{ outcome: CheckOutcome }> {
  logger.appendKeys({ payout_id: event.payout_id, attempt: event.attempt });
  const result = await checkPayoutAttempt(payoutDeps(), event);
  logger.info('attempt checked', { outcome: result.outcome, last_error: event.last_error });
  logger.resetKeys();
  return result;
}
