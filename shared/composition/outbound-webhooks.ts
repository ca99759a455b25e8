import { randomBytes } from 'node:crypto';
import { SqsWorkQueue } from '../adapters/aws/queues';
import { DynamoOutboundWebhookStore } from '../adapters/outbound-webhooks/dynamo-store';
import { HttpOutboundSender, UrlGuard } from '../adapters/outbound-webhooks/http-sender';
import { EnvelopeSealer, FileDataKeys, KmsDataKeys } from '../adapters/secrets/envelope-sealer';
import { envOr } from '../config';
import { newUlid } from '../domain/ids';
import type { OutboundDeliveryMessage, OutboundSender } from '../domain/outbound-webhooks';
import type { WorkQueue } from '../domain/ports/messaging';
import type { SecretSealer } from '../domain/secret-sealing';
import type { EndpointDeps, OutboundWebhookDeps } from '../use-cases/outbound-webhooks';
import { once, onFirstUse } from './once';
import { now } from './platform';

/**
 * Outbound webhooks: the endpoint and delivery store (single table), the delivery queue
 * (OUTBOUND_WEBHOOK_QUEUE_URL), the signed HTTP sender and the URL guard. Only the local stack
 * sets OUTBOUND_WEBHOOKS_ALLOW_LOOPBACK=true (http and loopback receivers); in AWS it is unset, so
 * only https URLs resolving to public addresses are accepted. OUTBOUND_WEBHOOK_TIME_SCALE (default
 * 1; LOCAL_TIME_SCALE locally) multiplies the retry schedule.
 *
 * Signing secrets are sealed (envelope encryption, the endpoint id as context): with the KMS key
 * OUTBOUND_SECRET_KMS_KEY_ID in AWS (creation and rotation may only generate data keys, the
 * sender may decrypt them), with the key file OUTBOUND_SECRET_KEY_FILE locally (the local stack
 * creates it in LOCAL_DATA_DIR, mode 0600). The sealer is built on first use: routes that never
 * seal or open a secret need neither setting.
 */
/**
 * The sealer the settings choose: KMS when OUTBOUND_SECRET_KMS_KEY_ID is set, else the key file
 * OUTBOUND_SECRET_KEY_FILE. Errors: throws naming both when neither is set.
 */
export function secretSealerFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): SecretSealer {
  if (env.OUTBOUND_SECRET_KMS_KEY_ID) return new EnvelopeSealer(new KmsDataKeys(env.OUTBOUND_SECRET_KMS_KEY_ID));
  if (env.OUTBOUND_SECRET_KEY_FILE) return new EnvelopeSealer(new FileDataKeys(env.OUTBOUND_SECRET_KEY_FILE));
  throw new Error(
    'Missing configuration: set OUTBOUND_SECRET_KMS_KEY_ID (AWS) or OUTBOUND_SECRET_KEY_FILE (local) to seal webhook secrets',
  );
}

/** The sealer, built from the settings at its first use. */
const sealer = (): SecretSealer => once(sealer, () => onFirstUse<SecretSealer>(() => secretSealerFromEnv()));
/** Endpoints and deliveries (the single table). */
const store = (): DynamoOutboundWebhookStore => once(store, () => new DynamoOutboundWebhookStore());
/** The signed HTTP sender (loopback receivers only where OUTBOUND_WEBHOOKS_ALLOW_LOOPBACK=true). */
const sender = (): OutboundSender => once(sender, () => new HttpOutboundSender(allowLoopback()));
/** The delivery queue (OUTBOUND_WEBHOOK_QUEUE_URL). */
const deliveryQueue = (): WorkQueue<OutboundDeliveryMessage> =>
  once(deliveryQueue, () => new SqsWorkQueue<OutboundDeliveryMessage>('OUTBOUND_WEBHOOK_QUEUE_URL'));

const allowLoopback = () => envOr('OUTBOUND_WEBHOOKS_ALLOW_LOOPBACK', 'false') === 'true';
/** `whsec_` + 24 random bytes in base64 (the Standard Webhooks secret format). */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const newId = (prefix: string) => `${prefix}${newUlid()}`;

/** Ports of the endpoint routes (register, list, delete, rotate, deliveries). */
export function endpointDeps(): EndpointDeps {
  return { store: store(), now, newId, newSecret, sealer: sealer(), guard: new UrlGuard(allowLoopback()) };
}

/** Ports of the fan-out, replay and delivery attempts. */
export function outboundDeps(): OutboundWebhookDeps & { sender: OutboundSender; timeScale: number } {
  const timeScale = Number(envOr('OUTBOUND_WEBHOOK_TIME_SCALE', '1'));
  return {
    store: store(),
    queue: deliveryQueue(),
    now,
    newId,
    newSecret,
    sealer: sealer(),
    sender: sender(),
    timeScale: timeScale > 0 ? timeScale : 1,
  };
}
