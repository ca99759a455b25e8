import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import { SqsWorkQueue } from '../adapters/aws/queues';
import { DynamoOutboundWebhookStore } from '../adapters/outbound-webhooks/dynamo-store';
import { HttpOutboundSender, UrlGuard } from '../adapters/outbound-webhooks/http-sender';
import { envOr } from '../config';
import type { OutboundDeliveryMessage, OutboundSender } from '../domain/outbound-webhooks';
import type { EndpointDeps, OutboundWebhookDeps } from '../use-cases/outbound-webhooks';

/**
 * Outbound webhooks: the endpoint and delivery store (single table), the delivery queue
 * (OUTBOUND_WEBHOOK_QUEUE_URL), the signed HTTP sender and the URL guard. Only the local stack
 * sets OUTBOUND_WEBHOOKS_ALLOW_LOOPBACK=true (http and loopback receivers); in AWS it is unset, so
 * only https URLs resolving to public addresses are accepted. OUTBOUND_WEBHOOK_TIME_SCALE (default
 * 1; LOCAL_TIME_SCALE locally) multiplies the retry schedule.
 */
let store: DynamoOutboundWebhookStore | undefined;
let sender: OutboundSender | undefined;

const allowLoopback = () => envOr('OUTBOUND_WEBHOOKS_ALLOW_LOOPBACK', 'false') === 'true';
/** `whsec_` + 24 random bytes in base64 (the Standard Webhooks secret format). */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const newId = (prefix: string) => `${prefix}${ulid()}`;
const now = () => new Date();

/** Ports of the endpoint routes (register, list, delete, rotate, deliveries). */
export function endpointDeps(): EndpointDeps {
  store ??= new DynamoOutboundWebhookStore();
  return { store, now, newId, newSecret, guard: new UrlGuard(allowLoopback()) };
}

/** Ports of the fan-out, replay and delivery attempts. */
export function outboundDeps(): OutboundWebhookDeps & { sender: OutboundSender; timeScale: number } {
  store ??= new DynamoOutboundWebhookStore();
  sender ??= new HttpOutboundSender(allowLoopback());
  const timeScale = Number(envOr('OUTBOUND_WEBHOOK_TIME_SCALE', '1'));
  return { store, queue: new SqsWorkQueue<OutboundDeliveryMessage>('OUTBOUND_WEBHOOK_QUEUE_URL'), now, newId, newSecret, sender, timeScale: timeScale > 0 ? timeScale : 1 };
}
