import { nationalRegistry } from '../../shared/composition/national-registry';
import { now, registryRepo } from '../../shared/composition/repos';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import type { NationalCheckMessage } from '../../shared/domain/ports';
import { completeNationalCheck } from '../../shared/use-cases/registry';

/** Queue consumer: completes registrations that waited for the national farmer registry (retries while it is down). */
export const handler = sqsConsumer<NationalCheckMessage>(async (msg) => {
  await completeNationalCheck({ registry: registryRepo(), national: nationalRegistry(), now }, msg);
});
