import type { PayoutStatus } from './records';

/**
 * The payout status table of the specification ("Payment and payout statuses") as a pure
 * transition function. The state machine drives the events; the DynamoDB adapter writes each
 * transition conditionally on the statuses `allowedFrom` gives, so a late, replayed or reordered
 * event can never move a payout backwards or out of a final status.
 *
 *   PENDING --ORDER_ACCEPTED--> PROCESSING --SETTLED--> COMPLETED                      (final)
 *   PROCESSING|RETRY_n --ORDER_FAILED--> FAILED --RETRY_SCHEDULED(n)--> RETRY_n (30/60/120 s)
 *   RETRY_n --ATTEMPT_STARTED(n+1)--> RETRY_n (the retry is in progress)
 *   FAILED|RETRY_3|PROCESSING --RETRIES_EXHAUSTED--> MANUAL_REVIEW                     (final for the machine)
 *   MANUAL_REVIEW --CASH_PAID--> COMPLETED            (docs/api/payouts.md#manual-review: paid at the cooperative office)
 *   MANUAL_REVIEW --RETRY_REQUESTED--> PROCESSING     (docs/api/payouts.md#manual-review: a new round of attempts)
 *
 * Attempts are numbered across rounds: round 0 is the lifecycle started at creation (attempts
 * 1–4), each resolution retry starts round r with attempts 4r+1 … 4r+4, so every attempt has its
 * own provider reference `<payout_id>-A<attempt>` and no earlier order can be mistaken for a new one.
 * Within a round, the step (1–4) decides the status path exactly as in round 0.
 */

/**
 * Seconds after which no call creating a payout can still be placing its first order: Lambda's
 * longest run (15 minutes), above the timeout of every function that creates payouts. Until then
 * a PENDING payout with no order at the provider may be one whose order is on its way, so
 * reconciliation does not discard it (docs/api/payouts.md#payout-lifecycle).
 */
export const PAYOUT_CREATION_WINDOW_SECONDS = 900;

/** Seconds we tell callers a payout takes (docs/api/conventions.md#limits: about 60 s). */
export const ESTIMATED_COMPLETION_SECONDS = 60;

export const MAX_ATTEMPTS = 4; // the first attempt and 3 automatic retries
export const RETRY_WAIT_SECONDS = [30, 60, 120] as const;
export const FINAL_STATUSES: readonly PayoutStatus[] = ['COMPLETED', 'MANUAL_REVIEW'];

/** The step (1–4) of `attempt` within its round. */
export function attemptStep(attempt: number): number {
  return ((attempt - 1) % MAX_ATTEMPTS) + 1;
}

/** The round of `attempt`: 0 for the lifecycle started at creation, r for the r-th resolution retry. */
export function roundOf(attempt: number): number {
  return Math.floor((attempt - 1) / MAX_ATTEMPTS);
}

/** The attempt number of `step` (1–4) in `round` (0 = the first lifecycle). */
export function attemptNumber(round: number, step: number): number {
  return round * MAX_ATTEMPTS + step;
}

/** Attempt numbers fit the provider reference `-A<1–2 digits>`: at most this many resolution retries per payout. */
export const MAX_RESOLUTION_ROUNDS = Math.floor(99 / MAX_ATTEMPTS) - 1;

export type PayoutEvent =
  | { type: 'ORDER_ACCEPTED' }
  | { type: 'ATTEMPT_STARTED'; attempt: number }
  | { type: 'SETTLED' }
  | { type: 'ORDER_FAILED' }
  | { type: 'RETRY_SCHEDULED'; retry: 1 | 2 | 3 }
  | { type: 'RETRIES_EXHAUSTED' }
  | { type: 'CASH_PAID' }
  | { type: 'RETRY_REQUESTED' };

const IN_FLIGHT: PayoutStatus[] = ['PROCESSING', 'RETRY_1', 'RETRY_2', 'RETRY_3'];

/** Statuses from which `event` may be applied. */
export function allowedFrom(event: PayoutEvent): PayoutStatus[] {
  switch (event.type) {
    case 'ORDER_ACCEPTED':
      return ['PENDING'];
    case 'ATTEMPT_STARTED':
      return attemptStep(event.attempt) === 1 ? ['PENDING', 'PROCESSING'] : [`RETRY_${attemptStep(event.attempt) - 1}` as PayoutStatus];
    case 'SETTLED':
      return ['PENDING', 'FAILED', ...IN_FLIGHT];
    case 'ORDER_FAILED':
      return ['PENDING', ...IN_FLIGHT];
    case 'RETRY_SCHEDULED':
      return ['FAILED', event.retry === 1 ? 'PROCESSING' : (`RETRY_${event.retry - 1}` as PayoutStatus)];
    case 'RETRIES_EXHAUSTED':
      return ['FAILED', 'PROCESSING', 'RETRY_3'];
    case 'CASH_PAID':
    case 'RETRY_REQUESTED':
      return ['MANUAL_REVIEW'];
  }
}

/**
 * The status an applied event leads to: the one table of targets (`null` for ATTEMPT_STARTED,
 * which keeps the status). The DynamoDB adapter writes this status on the condition that the
 * stored status is one of `allowedFrom(event)`; `transition()` is the same rule for a known status.
 */
export function statusAfter(event: PayoutEvent): PayoutStatus | null {
  switch (event.type) {
    case 'ORDER_ACCEPTED':
      return 'PROCESSING';
    case 'ATTEMPT_STARTED':
      return null;
    case 'SETTLED':
      return 'COMPLETED';
    case 'ORDER_FAILED':
      return 'FAILED';
    case 'RETRY_SCHEDULED':
      return `RETRY_${event.retry}`;
    case 'RETRIES_EXHAUSTED':
      return 'MANUAL_REVIEW';
    case 'CASH_PAID':
      return 'COMPLETED';
    case 'RETRY_REQUESTED':
      return 'PROCESSING';
  }
}

/** The status after `event`; null when the event does not apply to `from` (it is then ignored). */
export function transition(from: PayoutStatus, event: PayoutEvent): { status: PayoutStatus; retry_count?: number } | null {
  if (!allowedFrom(event).includes(from)) return null;
  const status = statusAfter(event) ?? from;
  return event.type === 'RETRY_SCHEDULED' ? { status, retry_count: event.retry } : { status };
}

export function isFinal(status: PayoutStatus): boolean {
  return FINAL_STATUSES.includes(status);
}
