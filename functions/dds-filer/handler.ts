import { ddsDocumentStore, ddsRegistry } from '../../shared/composition/eudr';
import { ddsRepo, notifier, now } from '../../shared/composition/platform';
import { envOr } from '../../shared/config';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import type { DdsFilingMessage } from '../../shared/domain/ports/eudr';
import { fileDds } from '../../shared/use-cases/eudr';

/**
 * How long one invocation waits for the reference numbers after filing (ms): well inside the
 * function's 30 s timeout; a DDS still without them is retried by the queue.
 */
const NUMBERS_WAIT_MS = 15_000;

/**
 * DDS filing queue consumer: files with the EU Information System, then waits for the numbers
 * (retries). The first status poll waits DDS_POLL_DELAY_S (default 10, within one invocation's wait) after the submission or amendment.
 */
export const handler = sqsConsumer<DdsFilingMessage>(async (msg) => {
  const delayS = Number(envOr('DDS_POLL_DELAY_S', '10'));
  await fileDds(
    { dds: ddsRepo(), registry: await ddsRegistry(), notifier: notifier(), documentStore: ddsDocumentStore(), now },
    msg.dds_id,
    {
      waitMs: NUMBERS_WAIT_MS,
      firstPollDelayMs: Number.isFinite(delayS) && delayS >= 0 ? delayS * 1000 : 10_000,
    },
  );
});
