import { evidencePinnerDeps } from '../../shared/composition/batches';
import type { EvidencePinMessage } from '../../shared/domain/ports/evidence';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { pinEvidence } from '../../shared/use-cases/evidence-pinning';

/**
 * Evidence pin queue consumer (docs/api/evidence.md#evidence-on-ipfs): each job's CAR, read from the own copy, goes to the
 * IPFS pinning service; PINNED or FAILED is recorded on the stage (or DDS). A failed job is
 * redelivered, then dead-lettered.
 */
export const handler = sqsConsumer<EvidencePinMessage>(async (msg) => {
  await pinEvidence(await evidencePinnerDeps(), msg);
});
