import { SendTaskFailureCommand, SendTaskSuccessCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { requireEnv } from '../../config';
import type { PayoutWorkflow } from '../../domain/ports/payouts';
import { logger } from '../../runtime/logger';
import { awsClient } from '../../runtime/aws-client';

/**
 * The payout state machine (Step Functions; locally the same ASL in the local interpreter behind
 * the same API, reached through `AWS_ENDPOINT_URL_SFN`).
 */
export class StepFunctionsPayoutWorkflow implements PayoutWorkflow {
  private readonly sfn = awsClient(new SFNClient({}));

  /**
   * Starts the lifecycle of a payout. The execution is named after the payout id (round 0) or
   * `<payout_id>-R<round>` (a resolution retry, docs/api/payouts.md#manual-review, input `{payout_id, round}`), so a
   * repeated start can never run a round twice (ExecutionAlreadyExists is treated as success).
   */
  async start(payoutId: string, round = 0): Promise<void> {
    try {
      await this.sfn.send(
        new StartExecutionCommand({
          stateMachineArn: requireEnv('PAYOUT_STATE_MACHINE_ARN'),
          name: round > 0 ? `${payoutId}-R${round}` : payoutId,
          input: JSON.stringify(round > 0 ? { payout_id: payoutId, round } : { payout_id: payoutId }),
        }),
      );
    } catch (err) {
      if ((err as { name?: string }).name !== 'ExecutionAlreadyExists') throw err;
    }
  }

  /**
   * Resumes a waiting attempt with its result. A token that is closed already (the attempt was
   * resumed, timed out or its execution ended) is not an error: the state was recorded first.
   */
  async resume(token: string, output: Record<string, unknown>): Promise<void> {
    try {
      await this.sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: JSON.stringify(output) }));
    } catch (err) {
      if (!isClosedToken(err)) throw err;
      logger.info('task token already closed', { error: (err as Error).name });
    }
  }

  /** Fails a waiting attempt with an ASL error name (e.g. `OrderFailed`); closed tokens are ignored. */
  async fail(token: string, error: string, cause: string): Promise<void> {
    try {
      await this.sfn.send(new SendTaskFailureCommand({ taskToken: token, error, cause }));
    } catch (err) {
      if (!isClosedToken(err)) throw err;
      logger.info('task token already closed', { error: (err as Error).name });
    }
  }
}

function isClosedToken(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return name === 'TaskTimedOut' || name === 'TaskDoesNotExist' || name === 'InvalidToken';
}
