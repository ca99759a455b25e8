import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import * as v from 'valibot';
import { DomainError } from '../domain/errors';
import { parseProviderReference } from '../domain/ids';
import type { PayoutDeps } from './payouts';
import { PayoutWebhookSchema } from '../http/schemas';
import { validate } from '../http/validation';
import { logger } from '../runtime/logger';

/** Tolerance of Standard Webhooks timestamps (decisions §6): 5 minutes (the library's default). */
export const WEBHOOK_SOURCE = 'payout-provider';

/**
 * Verifies a Standard Webhooks signature over the raw body (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`; 5 minutes of tolerance). Errors: INVALID_SIGNATURE (401).
 */
export function verifyStandardWebhook(secretValue: string, rawBody: string, headers: Record<string, string>): void {
  try {
    new Webhook(secretValue).verify(rawBody, {
      'webhook-id': headers['webhook-id'] ?? '',
      'webhook-timestamp': headers['webhook-timestamp'] ?? '',
      'webhook-signature': headers['webhook-signature'] ?? '',
    });
  } catch (err) {
    if (err instanceof WebhookVerificationError || err instanceof Error) {
      throw new DomainError('INVALID_SIGNATURE', `Webhook signature rejected: ${err.message}.`);
    }
    throw err;
  }
}

/**
 * POST /api/webhooks/payout-provider (decisions §6, §7). 1. verify the signature 2. parse the
 * event 3. record it durably — `order.settled` completes the payout (COMPLETED, PAYMENT_CONFIRMED),
 * `order.failed` marks it FAILED — in one conditional transaction that also remembers the
 * webhook id 4. resume (SendTaskSuccess) or fail (SendTaskFailure) the waiting attempt.
 * A replayed webhook id, a settlement for a superseded attempt, an `order.failed` after
 * `order.settled` or an event about an unknown order change nothing and are acknowledged (200).
 */
export async function applyPayoutWebhook(
  deps: Pick<PayoutDeps, 'payouts' | 'workflow' | 'now'>,
  input: { secret: string; rawBody: string; headers: Record<string, string> },
): Promise<{ received: true; outcome: string }> {
  verifyStandardWebhook(input.secret, input.rawBody, input.headers);
  let json: unknown;
  try {
    json = JSON.parse(input.rawBody);
  } catch {
    throw new DomainError('VALIDATION_ERROR', 'The webhook body is not valid JSON.');
  }
  const event: v.InferOutput<typeof PayoutWebhookSchema> = validate(PayoutWebhookSchema, json, [], 'webhook body');
  const webhook = { source: WEBHOOK_SOURCE, id: input.headers['webhook-id']! };
  const ref = parseProviderReference(event.data.reference);
  const payout = ref ? await deps.payouts.get(ref.payoutId) : null;
  if (!ref || !payout) {
    logger.error('payout webhook for an unknown reference', { reference: event.data.reference, order_id: event.data.order_id });
    return { received: true, outcome: 'UNKNOWN_REFERENCE' };
  }
  const at = deps.now().toISOString();
  let outcome;
  if (event.type === 'order.settled') {
    outcome = await deps.payouts.recordSettlement(payout, {
      attempt: ref.attempt,
      order_id: event.data.order_id,
      amount_ugx: event.data.amount_ugx ?? payout.estimated_ugx,
      exchange_rate: String(event.data.exchange_rate ?? payout.exchange_rate),
      mobile_money_transaction_id: event.data.mobile_money_transaction_id ?? '',
      settled_at: event.data.settled_at ?? at,
    }, at, webhook);
  } else {
    outcome = await deps.payouts.recordFailure(payout, ref.attempt, event.data.failure_reason ?? 'order failed', at, webhook);
  }
  if (outcome === 'APPLIED') {
    const fresh = await deps.payouts.get(ref.payoutId);
    if (fresh?.task_token && fresh.task_token_attempt === ref.attempt) {
      if (event.type === 'order.settled') await deps.workflow.resume(fresh.task_token, { status: fresh.status, provider_order_id: event.data.order_id });
      else await deps.workflow.fail(fresh.task_token, 'OrderFailed', event.data.failure_reason ?? 'order failed');
    }
  } else {
    logger.info('payout webhook changed nothing', { outcome, payout_id: ref.payoutId, attempt: ref.attempt, type: event.type, status: payout.status });
  }
  return { received: true, outcome };
}
