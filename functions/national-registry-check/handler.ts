import { instrumented } from '../../shared/runtime/instrument';
import { now, registryRepo } from '../../shared/composition/platform';
import { nationalRegistry } from '../../shared/composition/registry';
import { settlePendingNationalChecks, type NationalCheckReport } from '../../shared/use-cases/registry';

/**
 * Scheduled (EventBridge, every minute): completes the registrations that are still waiting for
 * the national farmer registry (MAAIF); those it still cannot answer wait for the next run.
 */
export const handler = instrumented(async (): Promise<NationalCheckReport> => {
  return settlePendingNationalChecks({ registry: registryRepo(), national: nationalRegistry(), now });
});
