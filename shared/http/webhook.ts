import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type * as v from 'valibot';
import { DomainError } from '../domain/errors';
import { metrics, WEBHOOK_REJECTION_OUTCOMES, type WebhookRejectionReason } from '../runtime/metrics';
import { httpHandler, type HttpReply } from './handler';
import { validate } from './validation';
import type { RouteDefinition } from './routes/define';

/** Longest accepted `webhook-id` (it becomes part of a DynamoDB key). */
export const MAX_WEBHOOK_ID_LENGTH = 200;

/**
 * The secrets an inbound webhook secret value holds: one, or two separated by whitespace while the
 * sender rotates it (the old and the new one, each `whsec_…`), so a rotation needs no downtime.
 */
export function webhookSecretValues(secretValue: string): string[] {
  return secretValue.split(/\s+/).filter((s) => s !== '');
}

/**
 * Verifies a Standard Webhooks signature over the raw body (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`; 5 minutes of tolerance, the library's default; docs/api/inbound-webhooks.md#signatures-and-replays). `secretValue`
 * may hold two secrets separated by a space during a rotation: a signature by either verifies.
 * Errors: INVALID_SIGNATURE (401). A correctly signed body is accepted whatever it contains: its
 * JSON is checked afterwards (400), so a sender can tell a bad signature from a bad body.
 */
export function verifyStandardWebhook(secretValue: string, rawBody: string, headers: Record<string, string>): void {
  const secrets = webhookSecretValues(secretValue);
  if (!secrets.length) throw new Error('The webhook secret is empty');
  let rejection: WebhookVerificationError | undefined;
  for (const s of secrets) {
    try {
      new Webhook(s).verify(rawBody, {
        'webhook-id': headers['webhook-id'] ?? '',
        'webhook-timestamp': headers['webhook-timestamp'] ?? '',
        'webhook-signature': headers['webhook-signature'] ?? '',
      });
      return;
    } catch (err) {
      if (err instanceof WebhookVerificationError) {
        rejection ??= err;
        continue;
      }
      if (err instanceof SyntaxError) return; // signature verified; the library's own JSON.parse failed (checked by the caller)
      throw err;
    }
  }
  throw new DomainError('INVALID_SIGNATURE', `Webhook signature rejected: ${rejection!.message}.`);
}

/** What a webhook route's use-case call receives: the verified, parsed and validated event. */
export interface WebhookRequest<E> {
  /** The `webhook-id` header (1–200 characters): the sender's idempotency key. */
  webhookId: string;
  event: E;
  requestId: string;
}

/**
 * A sender's own signature scheme, for a webhook that is not signed with Standard Webhooks (e.g.
 * pawaPay's RFC 9421 signed callbacks): `verify` throws INVALID_SIGNATURE (401) unless the request
 * is signed under `secretValue`; `id` names the delivery (the idempotency key the use case remembers)
 * from the validated event.
 */
export interface WebhookScheme {
  verify(secretValue: string, req: { method: string; path: string; headers: Record<string, string>; rawBody: string }): void;
  id(event: unknown): string;
}

/** What a webhook handler checks: the signing secret, the event schema, the body size limit (default 1 MiB), and the scheme (default Standard Webhooks). */
interface WebhookOptions<S extends v.GenericSchema> {
  secret: () => Promise<string>;
  schema: S;
  maxBodyBytes?: number;
  scheme?: WebhookScheme;
}

/**
 * The webhook handler options a webhook route's definition implies: its event schema and body size
 * limit, with the signing secret `secret()` gives (read from configuration by the handler). Throws
 * when the route is not a `webhook` route or declares no `event`.
 */
export function webhookRouteOptions<E extends v.GenericSchema>(
  // biome-ignore lint/suspicious/noExplicitAny: any body, path-parameter and response schemas
  route: RouteDefinition<any, any, any, E>,
  secret: () => Promise<string>,
  /** The sender's own signature scheme; default Standard Webhooks. */
  scheme?: WebhookScheme,
): WebhookOptions<E> {
  if (route.auth !== 'webhook' || !route.event)
    throw new Error(`${route.method} ${route.path} is not a webhook route with an event schema`);
  return {
    secret,
    schema: route.event,
    ...(route.maxBodyBytes ? { maxBodyBytes: route.maxBodyBytes } : {}),
    ...(scheme ? { scheme } : {}),
  };
}

/**
 * A signed inbound webhook route (docs/api/inbound-webhooks.md#signatures-and-replays): the standard handler (request id, size limit,
 * error envelope) plus 1. the Standard Webhooks signature with the secret `secret()` gives (401
 * INVALID_SIGNATURE), 2. the `webhook-id` (400 when longer than 200 characters), 3. the body as
 * JSON (400) and against `schema` (400 VALIDATION_ERROR with details). The use case gets a typed
 * event and never sees the raw request. Metrics: WebhookRejections with dimensions `webhook` (the
 * route's last path segment) and `reason`: INVALID_SIGNATURE, INVALID_BODY, or the use case's
 * answered outcome when it is one of WEBHOOK_REJECTION_OUTCOMES (MISMATCH, UNKNOWN_REFERENCE, …).
 */
export function webhookHandler<S extends v.GenericSchema>(
  opts: WebhookOptions<S>,
  fn: (req: WebhookRequest<v.InferOutput<S>>) => Promise<HttpReply>,
) {
  return httpHandler(
    { public: true, rawBody: true, ...(opts.maxBodyBytes ? { maxBodyBytes: opts.maxBodyBytes } : {}) },
    async ({ rawBody, headers, requestId, route, path }) => {
      const webhook = route.split('/').pop() ?? 'unknown';
      const rejected = (reason: WebhookRejectionReason) => metrics.count('WebhookRejections', { webhook, reason });
      const secretValue = await opts.secret();
      try {
        if (opts.scheme) opts.scheme.verify(secretValue, { method: route.split(' ')[0] ?? 'POST', path, headers, rawBody });
        else verifyStandardWebhook(secretValue, rawBody, headers);
      } catch (err) {
        if (err instanceof DomainError) rejected('INVALID_SIGNATURE');
        throw err;
      }
      let webhookId = opts.scheme ? '' : (headers['webhook-id'] ?? '');
      if (webhookId.length > MAX_WEBHOOK_ID_LENGTH) {
        throw new DomainError('VALIDATION_ERROR', `webhook-id is longer than ${MAX_WEBHOOK_ID_LENGTH} characters.`, {
          details: [{ path: 'webhook-id', message: 'too long' }],
        });
      }
      let event: v.InferOutput<S>;
      try {
        event = validate(opts.schema, JSON.parse(rawBody), [], 'webhook body');
      } catch (err) {
        rejected('INVALID_BODY');
        if (err instanceof SyntaxError) throw new DomainError('VALIDATION_ERROR', 'The webhook body is not valid JSON.');
        throw err;
      }
      if (opts.scheme) webhookId = opts.scheme.id(event);
      const reply = await fn({ webhookId, event, requestId });
      const outcome = 'body' in reply ? (reply.body as { outcome?: unknown } | null)?.outcome : undefined;
      if (WEBHOOK_REJECTION_OUTCOMES.includes(outcome as WebhookRejectionReason)) rejected(outcome as WebhookRejectionReason);
      return reply;
    },
  );
}
