import { PayoutWorkflow } from '../adapters/aws/payout-workflow';

let workflow: PayoutWorkflow | undefined;

/** The payout state machine's client (Step Functions), one per container. */
export const payoutWorkflow = () => (workflow ??= new PayoutWorkflow());
