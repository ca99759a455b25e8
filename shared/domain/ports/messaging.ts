/**
 * Ports: Messages in and out: notifications (SNS), work queues (SQS), receipts of inbound webhooks and
 * `Idempotency-Key` records.
 * Adapters in `shared/adapters/<system>/` implement them; tests hand in fakes or the local components.
 * Money is integers: `*_usd_micro` is micro-USD(C) (6 decimals), `*_ugx` whole shillings.
 */

/** Publishes a notification (SNS in AWS) with string message attributes. */
export interface Notifier {
  /** To the cooperative managers' topic; `attributes.cooperative_id` lets each manager's subscription filter to its own cooperative. */
  publish(input: { subject: string; message: string; attributes: Record<string, string> }): Promise<{ messageId: string }>;
  /** An SMS to one phone number (E.164). */
  sendSms(input: { phone: string; message: string; attributes: Record<string, string> }): Promise<{ messageId: string }>;
}

/** Sends a message to a work queue (SQS). */
export interface WorkQueue<T> {
  send(body: T, opts?: { delaySeconds?: number; deduplicationId?: string }): Promise<void>;
}

/** Receipts of inbound webhooks whose effect is not one transaction (replay detection). */
export interface WebhookReceiptStore {
  hasWebhook(source: string, id: string): Promise<boolean>;
  /** True the first time `(source, id)` is claimed, false when a receipt existed. */
  claimWebhook(source: string, id: string, at: string): Promise<boolean>;
}

/** What claiming an `Idempotency-Key` found. */
export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'in-progress' }
  | { kind: 'mismatch' };

/** `Idempotency-Key` records (24 h): claimed with a conditional put, completed with the response to replay, released on failure. */
export interface IdempotencyStore {
  claim(scope: string, key: string, requestHash: string, at: Date): Promise<IdempotencyClaim>;
  complete(scope: string, key: string, status: number, body: unknown): Promise<void>;
  release(scope: string, key: string): Promise<void>;
}
