import { StepFunctionsPayoutWorkflow } from '../adapters/aws/payout-workflow';
import type { PayoutWorkflow } from '../domain/ports/payouts';

let workflow: PayoutWorkflow | undefined;

/** The payout state machine's client (Step Functions), one per container. */
export const payoutWorkflow = (): PayoutWorkflow => (workflow ??= new StepFunctionsPayoutWorkflow());
