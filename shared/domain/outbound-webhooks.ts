/**
 * Outbound webhooks to integrators (docs/api/outbound-webhooks.md#outbound-webhooks): the events, the pure mapper that turns a
 * change of a stored item (a DynamoDB Streams record's old and new image) into events, who may
 * register endpoints and which endpoint receives which event, the Standard Webhooks retry
 * schedule, and the ports the use cases (shared/use-cases/outbound-webhooks.ts) work through.
 *
 * Events are derived from the table's change stream (a transactional outbox for free: an event
 * exists exactly when its state change was committed), so no use case has to remember to emit
 * one. Each event has a stable id (`evt_…`, the `webhook-id` header) built from the record it is
 * about, so a change seen twice makes the same event, and each (endpoint, event) one delivery.
 */
import type { Caller } from './caller';
import { DomainError } from './errors';
import { maskPhone } from './masking';
import type { SealedSecret } from './secret-sealing';

export const OUTBOUND_EVENT_TYPES = [
  'batch.stage_changed',
  'payout.completed',
  'payout.manual_review',
  'job.completed',
  'dds.generated',
  'loan.disbursed',
  'loan.repaid',
  'deposit.completed',
] as const;
export type OutboundEventType = (typeof OUTBOUND_EVENT_TYPES)[number];

/** Events an MFI endpoint may subscribe to: its own deposits, and every loan (MFIs fund the vault that lends). */
const MFI_EVENT_TYPES: readonly OutboundEventType[] = ['deposit.completed', 'loan.disbursed', 'loan.repaid'];
/** Events a cooperative endpoint may subscribe to: everything about its own batches (not deposits). */
const COOPERATIVE_EVENT_TYPES: readonly OutboundEventType[] = OUTBOUND_EVENT_TYPES.filter((t) => t !== 'deposit.completed');

/** One event as the mapper makes it; `cooperative_id` / `mfi_id` route it, the body is `{type, timestamp, data}`. */
export interface OutboundEvent {
  /** Stable: the `webhook-id` header; the same change always makes the same id. */
  event_id: string;
  type: OutboundEventType;
  /** ISO 8601: when the change happened (from the record, so a replay sends the same body). */
  timestamp: string;
  data: Record<string, unknown>;
  /** The cooperative whose batch the event is about (all but deposit.completed). */
  cooperative_id?: string;
  /** The MFI whose deposit it is (deposit.completed). */
  mfi_id?: string;
}

/** The JSON body sent to the endpoint: `{type, timestamp, data}`. */
export function outboundEventBody(event: Pick<OutboundEvent, 'type' | 'timestamp' | 'data'>): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

/** A stored item as an attribute map (a stream image, unmarshalled). */
export type ItemImage = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Fields of a payment record fit for an integrator: no task token, provider internals or full phone. */
function paymentData(p: ItemImage): Record<string, unknown> {
  const pick = [
    'payment_id',
    'payment_type',
    'loan_id',
    'batch_id',
    'farmer_id',
    'cooperative_id',
    'reason',
    'status',
    'amount_usd_micro',
    'amount_ugx',
    'exchange_rate',
    'recipient_name',
    'attempt',
    'retry_count',
    'mobile_money_transaction_id',
    'last_failure_reason',
    'settlement_channel',
    'cash_receipt_number',
    'created_at',
    'updated_at',
    'completed_at',
    'settled_at',
  ];
  const out: Record<string, unknown> = {};
  for (const k of pick) if (p[k] !== undefined) out[k] = p[k];
  if (typeof p.phone === 'string') out.phone = maskPhone(p.phone);
  return out;
}

interface StageEntry {
  stage?: unknown;
  at?: unknown;
  chain_tx_hash?: unknown;
}

/** `status` went from something else to `to` in this change. */
const became = (oldImage: ItemImage | undefined, newImage: ItemImage, to: string) => newImage.status === to && oldImage?.status !== to;

/**
 * The events a change of one item makes (pure). `oldImage` is absent for an insert, `newImage`
 * for a removal (removals make none). Rules:
 * - BATCH: a stage history entry whose `chain_tx_hash` became set → `batch.stage_changed {batch_id, stage, at, chain_tx_hash}`;
 * - PAYMENT (payouts and loan disbursements): status became COMPLETED → `payout.completed` (and, for a
 *   LOAN_DISBURSEMENT, `loan.disbursed`); became MANUAL_REVIEW → `payout.manual_review`; phone masked;
 * - JOB: became COMPLETE → `job.completed`;  DDS: became AVAILABLE → `dds.generated`;
 * - LOAN: became REPAID → `loan.repaid`;  DEPOSIT: became COMPLETED → `deposit.completed`.
 */
export function outboundEventsOfChange(oldImage: ItemImage | undefined, newImage: ItemImage | undefined): OutboundEvent[] {
  if (!newImage) return [];
  const entity = newImage.entity;
  const coop = str(newImage.cooperative_id);
  const out: OutboundEvent[] = [];
  const at = (...candidates: unknown[]) => candidates.map(str).find((x) => x !== undefined) ?? '1970-01-01T00:00:00.000Z';
  if (entity === 'BATCH') {
    const before = new Map<unknown, StageEntry>(((oldImage?.stage_history ?? []) as StageEntry[]).map((e) => [e.stage, e]));
    for (const e of (newImage.stage_history ?? []) as StageEntry[]) {
      const hash = str(e.chain_tx_hash);
      if (!hash || str(before.get(e.stage)?.chain_tx_hash)) continue;
      out.push({
        event_id: `evt_stage_${String(newImage.batch_id)}_${String(e.stage)}`,
        type: 'batch.stage_changed',
        timestamp: at(e.at),
        data: { batch_id: newImage.batch_id, stage: e.stage, at: e.at, chain_tx_hash: hash },
        cooperative_id: coop,
      });
    }
  } else if (entity === 'PAYMENT' && typeof newImage.payment_id === 'string') {
    const id = newImage.payment_id;
    if (became(oldImage, newImage, 'COMPLETED')) {
      const when = at(newImage.completed_at, newImage.updated_at);
      out.push({
        event_id: `evt_payout_completed_${id}`,
        type: 'payout.completed',
        timestamp: when,
        data: paymentData(newImage),
        cooperative_id: coop,
      });
      if (newImage.payment_type === 'LOAN_DISBURSEMENT' && str(newImage.loan_id)) {
        out.push({
          event_id: `evt_loan_disbursed_${String(newImage.loan_id)}`,
          type: 'loan.disbursed',
          timestamp: when,
          data: {
            loan_id: newImage.loan_id,
            batch_id: newImage.batch_id,
            farmer_id: newImage.farmer_id,
            cooperative_id: coop,
            payment_id: id,
            amount_usd_micro: num(newImage.amount_usd_micro),
            amount_ugx: num(newImage.amount_ugx),
            disbursed_at: when,
          },
          cooperative_id: coop,
        });
      }
    } else if (became(oldImage, newImage, 'MANUAL_REVIEW')) {
      out.push({
        event_id: `evt_payout_manual_review_${id}_r${num(newImage.resolution_round) ?? 0}`,
        type: 'payout.manual_review',
        timestamp: at(newImage.updated_at),
        data: paymentData(newImage),
        cooperative_id: coop,
      });
    }
  } else if (entity === 'JOB' && became(oldImage, newImage, 'COMPLETE')) {
    const data: Record<string, unknown> = {};
    for (const k of ['job_id', 'type', 'status', 'batch_id', 'farmer_id', 'tx_hash', 'created_at', 'completed_at'])
      if (newImage[k] !== undefined) data[k] = newImage[k];
    out.push({
      event_id: `evt_job_completed_${String(newImage.job_id)}`,
      type: 'job.completed',
      timestamp: at(newImage.completed_at, newImage.created_at),
      data,
      cooperative_id: coop,
    });
  } else if (entity === 'DDS' && became(oldImage, newImage, 'AVAILABLE')) {
    const data: Record<string, unknown> = {};
    for (const k of ['dds_id', 'batch_id', 'status', 'reference_number', 'verification_number', 'ipfs_cid', 'filed_at'])
      if (newImage[k] !== undefined) data[k] = newImage[k];
    out.push({
      event_id: `evt_dds_generated_${String(newImage.dds_id)}`,
      type: 'dds.generated',
      timestamp: at(newImage.updated_at, newImage.filed_at, newImage.created_at),
      data,
      cooperative_id: coop,
    });
  } else if (entity === 'LOAN' && became(oldImage, newImage, 'REPAID')) {
    const data: Record<string, unknown> = {};
    for (const k of [
      'loan_id',
      'batch_id',
      'farmer_id',
      'cooperative_id',
      'principal_usd_micro',
      'repaid_usd_micro',
      'repay_tx_hash',
      'repaid_by_purchase_order_id',
      'repaid_at',
    ])
      if (newImage[k] !== undefined) data[k] = newImage[k];
    out.push({
      event_id: `evt_loan_repaid_${String(newImage.loan_id)}`,
      type: 'loan.repaid',
      timestamp: at(newImage.repaid_at, newImage.updated_at),
      data,
      cooperative_id: coop,
    });
  } else if (entity === 'DEPOSIT' && became(oldImage, newImage, 'COMPLETED')) {
    const data: Record<string, unknown> = {};
    for (const k of [
      'payment_id',
      'payment_type',
      'mfi_id',
      'status',
      'source_currency',
      'source_amount',
      'amount_usd_micro',
      'vault_shares_issued',
      'chain_tx_hash',
      'created_at',
    ])
      if (newImage[k] !== undefined) data[k] = newImage[k];
    out.push({
      event_id: `evt_deposit_completed_${String(newImage.payment_id)}`,
      type: 'deposit.completed',
      timestamp: at(newImage.updated_at, newImage.created_at),
      data,
      mfi_id: str(newImage.mfi_id),
    });
  }
  return out;
}

// ---- endpoints and who owns them --------------------------------------------------------------

/** Who an endpoint belongs to: the service (ADMIN), one cooperative, or one MFI. */
export type EndpointOwner = { kind: 'ADMIN' } | { kind: 'COOPERATIVE'; id: string } | { kind: 'MFI'; id: string };

/** `ADMIN`, `COOPERATIVE#<id>` or `MFI#<id>`: the key an owner's endpoints are listed under. */
export function ownerKey(owner: EndpointOwner): string {
  return owner.kind === 'ADMIN' ? 'ADMIN' : `${owner.kind}#${owner.id}`;
}

type EndpointStatus = 'ACTIVE' | 'DISABLED' | 'DELETED';

export interface OutboundEndpoint {
  /** `whe_<ULID>`. */
  endpoint_id: string;
  owner: EndpointOwner;
  url: string;
  events: OutboundEventType[];
  description?: string;
  status: EndpointStatus;
  /** Why it was disabled (the receiver answered 410 Gone). */
  disabled_reason?: string;
  /**
   * The signing secret (`whsec_<base64>`), sealed with the endpoint id as context (only the sender
   * opens it): never stored in plaintext, never logged, returned only by creation or rotation.
   */
  sealed_secret?: SealedSecret;
  /** The secret before the last rotation, sealed: it still signs until `previous_secret_expires_at`. */
  previous_sealed_secret?: SealedSecret;
  previous_secret_expires_at?: string;
  /**
   * Plaintext secrets of endpoints registered before secrets were sealed: the sender seals them at
   * the endpoint's next delivery attempt (and a rotation replaces them), then they are removed.
   */
  secret?: string;
  previous_secret?: string;
  created_at: string;
  created_by: string;
  updated_at: string;
}

/** How long the secret before a rotation keeps signing (24 h). */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** An endpoint with its plaintext secret, as creation and rotation answer it (the only time it is shown). */
export type RevealedEndpoint = Omit<OutboundEndpoint, 'secret' | 'previous_secret'> & { secret: string };

/** True while the secret before the last rotation still signs (`previous_secret_expires_at` after `now`). */
export function previousSecretSigns(e: Pick<OutboundEndpoint, 'previous_secret_expires_at'>, now: Date): boolean {
  return !!e.previous_secret_expires_at && Date.parse(e.previous_secret_expires_at) > now.getTime();
}

/** The secrets that sign at `now` (plaintext, once opened): the current one, and the previous one during its overlap. */
export function signingSecrets(e: { secret: string; previous_secret?: string; previous_secret_expires_at?: string }, now: Date): string[] {
  const out = [e.secret];
  if (e.previous_secret && previousSecretSigns(e, now)) out.push(e.previous_secret);
  return out;
}

/** True when the endpoint still holds a plaintext secret (registered before secrets were sealed). */
export function hasPlaintextSecret(e: Pick<OutboundEndpoint, 'secret' | 'previous_secret'>): boolean {
  return typeof e.secret === 'string' || typeof e.previous_secret === 'string';
}

/**
 * The owner of endpoints `caller` registers or manages (docs/api/outbound-webhooks.md#outbound-webhooks): ADMIN for the service, a
 * COOPERATIVE token with the MANAGER duty for its own cooperative, an MFI for itself.
 * Errors: 403 INSUFFICIENT_PERMISSIONS for any other caller.
 */
export function endpointOwnerOf(caller: Caller): EndpointOwner {
  if (caller.role === 'ADMIN') return { kind: 'ADMIN' };
  if (caller.role === 'COOPERATIVE' && caller.cooperative_id && caller.duties.includes('MANAGER'))
    return { kind: 'COOPERATIVE', id: caller.cooperative_id };
  if (caller.role === 'MFI' && caller.mfi_id) return { kind: 'MFI', id: caller.mfi_id };
  throw new DomainError(
    'INSUFFICIENT_PERMISSIONS',
    'Webhook endpoints are managed by ADMIN, a cooperative MANAGER for its cooperative, or an MFI for itself.',
  );
}

/** 403 unless `caller` owns the endpoint (ADMIN may manage any). */
export function assertManagesEndpoint(caller: Caller, endpoint: Pick<OutboundEndpoint, 'owner' | 'endpoint_id'>): void {
  const owner = endpointOwnerOf(caller);
  if (owner.kind === 'ADMIN' || ownerKey(owner) === ownerKey(endpoint.owner)) return;
  throw new DomainError('INSUFFICIENT_PERMISSIONS', `Webhook endpoint ${endpoint.endpoint_id} belongs to another owner.`);
}

/** Event types `owner` may subscribe to: ADMIN all, a cooperative its batches' events, an MFI deposits and loans. */
export function subscribableEvents(owner: EndpointOwner): readonly OutboundEventType[] {
  return owner.kind === 'ADMIN' ? OUTBOUND_EVENT_TYPES : owner.kind === 'COOPERATIVE' ? COOPERATIVE_EVENT_TYPES : MFI_EVENT_TYPES;
}

/**
 * Whether `endpoint` receives `event`: it is ACTIVE, subscribed to the type, and the event is its
 * owner's — ADMIN every event; a cooperative only events of its own batches; an MFI only its own
 * deposits and every loan event (MFIs fund the vault every loan is drawn from).
 */
export function endpointReceives(
  endpoint: Pick<OutboundEndpoint, 'status' | 'events' | 'owner'>,
  event: Pick<OutboundEvent, 'type' | 'cooperative_id' | 'mfi_id'>,
): boolean {
  if (endpoint.status !== 'ACTIVE' || !endpoint.events.includes(event.type)) return false;
  const o = endpoint.owner;
  if (o.kind === 'ADMIN') return true;
  if (o.kind === 'COOPERATIVE') return event.type !== 'deposit.completed' && event.cooperative_id === o.id;
  if (event.type === 'deposit.completed') return event.mfi_id === o.id;
  return event.type === 'loan.disbursed' || event.type === 'loan.repaid';
}

/** The owner keys whose endpoints may receive `event`, and whether every MFI's endpoints may (loan events). */
export function ownersOf(event: Pick<OutboundEvent, 'type' | 'cooperative_id' | 'mfi_id'>): { owners: string[]; allMfis: boolean } {
  const owners = ['ADMIN'];
  if (event.cooperative_id) owners.push(ownerKey({ kind: 'COOPERATIVE', id: event.cooperative_id }));
  if (event.type === 'deposit.completed' && event.mfi_id) owners.push(ownerKey({ kind: 'MFI', id: event.mfi_id }));
  return { owners, allMfis: event.type === 'loan.disbursed' || event.type === 'loan.repaid' };
}

// ---- deliveries and the retry schedule ----------------------------------------------------------

/**
 * Standard Webhooks retry schedule: waits after a failed attempt, in seconds (5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 10 h); with the first attempt, 8 attempts in all.
 */
export const RETRY_SCHEDULE_S = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
export const MAX_DELIVERY_ATTEMPTS = RETRY_SCHEDULE_S.length + 1;

/**
 * Seconds to wait after the `attemptsMade`-th failed attempt of a round (1-based), multiplied by
 * `timeScale` (LOCAL_TIME_SCALE locally, 1 in AWS); null when the schedule is exhausted (DEAD).
 */
export function retryDelaySeconds(attemptsMade: number, timeScale = 1): number | null {
  const base = RETRY_SCHEDULE_S[attemptsMade - 1];
  return base === undefined ? null : base * timeScale;
}

/**
 * PENDING: queued, not attempted yet (or replayed); FAILED: the last attempt failed and another is
 * scheduled at `next_attempt_at`; DELIVERED: a 2xx answer; DEAD: the schedule is exhausted, the
 * receiver answered 410 Gone, or the endpoint was deleted or disabled (replayable).
 */
type DeliveryState = 'PENDING' | 'FAILED' | 'DELIVERED' | 'DEAD';

export interface OutboundDelivery {
  /** `whd_…`, derived from (endpoint, event): one delivery per pair. */
  delivery_id: string;
  endpoint_id: string;
  event: OutboundEvent;
  state: DeliveryState;
  /** Attempts made in all (replays included). */
  attempts: number;
  /** Attempts made since creation or the last replay (the retry schedule's position). */
  round_attempts: number;
  last_status_code?: number;
  last_error?: string;
  last_attempt_at?: string;
  next_attempt_at?: string;
  /** Identifies the one queue message allowed to make the next attempt; a new one per schedule step or replay. */
  pending_token?: string;
  created_at: string;
  updated_at: string;
}

/** The outcome of one HTTP attempt: the status code, or a transport error (timeout, refused, blocked address). */
export interface AttemptResult {
  status_code?: number;
  error?: string;
}

/** A page of results, with an opaque cursor for the next. */
export interface Page<T> {
  items: T[];
  next_token?: string;
}

/** The store of endpoints and deliveries. */
export interface OutboundWebhookStore {
  createEndpoint(e: OutboundEndpoint): Promise<void>;
  getEndpoint(id: string): Promise<OutboundEndpoint | null>;
  /** ACTIVE and DISABLED endpoints of one owner key, oldest first. */
  listEndpoints(ownerKey: string): Promise<OutboundEndpoint[]>;
  /** ACTIVE endpoints of every MFI. */
  listMfiEndpoints(): Promise<OutboundEndpoint[]>;
  /**
   * Sets fields on an endpoint that is not DELETED (a field given as undefined is removed); false
   * when it is gone. With `whilePlaintext`, only while its plaintext `secret` is still that value
   * (the migration of a plaintext secret, which must not overwrite a concurrent rotation).
   */
  updateEndpoint(
    id: string,
    set: Partial<
      Pick<
        OutboundEndpoint,
        | 'status'
        | 'disabled_reason'
        | 'sealed_secret'
        | 'previous_sealed_secret'
        | 'previous_secret_expires_at'
        | 'secret'
        | 'previous_secret'
      >
    >,
    at: string,
    whilePlaintext?: string,
  ): Promise<boolean>;
  /** The delivery of `event` to `endpointId`, created PENDING with `token` unless it exists; `created` says which. */
  ensureDelivery(
    endpointId: string,
    event: OutboundEvent,
    token: string,
    at: string,
  ): Promise<{ delivery: OutboundDelivery; created: boolean }>;
  getDelivery(id: string): Promise<OutboundDelivery | null>;
  /** Newest first; `limit` 1–100. */
  listDeliveries(endpointId: string, limit: number, nextToken?: string): Promise<Page<OutboundDelivery>>;
  /** Sets fields on the delivery only while its `pending_token` is `token`; false otherwise. */
  updateDelivery(id: string, token: string, set: Partial<OutboundDelivery>): Promise<boolean>;
}

/** A message of the outbound webhook queue: make the next attempt of a delivery. */
export interface OutboundDeliveryMessage {
  delivery_id: string;
  token: string;
}

/** Sends one signed attempt (the adapter checks the URL and its addresses first). */
export interface OutboundSender {
  send(input: { url: string; secrets: string[]; eventId: string; body: string; at: Date }): Promise<AttemptResult>;
}

/** Checks an endpoint URL at registration (scheme, and in AWS public addresses only); returns why it is refused, or null. */
export interface EndpointUrlGuard {
  refusal(url: string): Promise<string | null>;
}
