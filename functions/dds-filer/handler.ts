import { ddsRegistry, ddsRepo } from '../../shared/composition/eudr';
import { notifier } from '../../shared/composition/notifier';
import { now } from '../../shared/composition/repos';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import type { DdsFilingMessage } from '../../shared/domain/ports';
import { fileDds } from '../../shared/use-cases/eudr';

/** DDS filing queue consumer: files with the EU Information System, then waits for the numbers (retries). */
export const handler = sqsConsumer<DdsFilingMessage>(async (msg) => {
  await fileDds({ dds: ddsRepo(), registry: await ddsRegistry(), notifier: notifier(), now }, msg.dds_id);
});
