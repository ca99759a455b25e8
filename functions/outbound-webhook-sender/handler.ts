import { outboundDeps } from '../../shared/composition/outbound-webhooks';
import type { OutboundDeliveryMessage } from '../../shared/domain/outbound-webhooks';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { attemptDelivery } from '../../shared/use-cases/outbound-webhooks';

/** Consumer of the outbound webhook queue: one signed delivery attempt per message (docs/api/outbound-webhooks.md#outbound-webhooks). */
export const handler = sqsConsumer<OutboundDeliveryMessage>(async (msg) => {
  await attemptDelivery(outboundDeps(), msg);
});
