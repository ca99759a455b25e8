import type { ManualReviewDeps } from '../use-cases/manual-review';
import { now, payoutRepo, registryRepo } from './repos';
import { payoutWorkflow } from './workflow';

/** The ports of a manual-review resolution (decisions §11): the table and the payout state machine. */
export const manualReviewDeps = (): ManualReviewDeps => ({ payouts: payoutRepo(), registry: registryRepo(), workflow: payoutWorkflow(), now });
