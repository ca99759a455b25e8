import { PayoutResolutionRepository } from '../adapters/dynamodb/payout-resolution-repo';
import type { PayoutResolutionStore } from '../domain/ports/payouts';
import type { ManualReviewDeps } from '../use-cases/manual-review';
import { now, payoutRepo, registryRepo } from './repos';
import { payoutWorkflow } from './workflow';

let resolutions: PayoutResolutionStore | undefined;

/** The ports of a manual-review resolution (docs/api/payouts.md#manual-review): the table and the payout state machine. */
export const manualReviewDeps = (): ManualReviewDeps => ({
  payouts: payoutRepo(),
  resolutions: (resolutions ??= new PayoutResolutionRepository()),
  registry: registryRepo(),
  workflow: payoutWorkflow(),
  now,
});
