/**
 * Normalised payout failure reasons (docs/api/payouts.md#failure-reasons). Each provider adapter maps
 * its own error codes to one of these, so the lifecycle decides retries the same way whatever
 * provider answered.
 */

/** Why a provider order failed, whatever the provider. */
export const FAILURE_REASONS = [
  'INSUFFICIENT_BALANCE',
  'INVALID_MSISDN',
  'RECIPIENT_NAME_MISMATCH',
  'WALLET_LIMIT_EXCEEDED',
  'PROVIDER_ERROR',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** A failed order: the normalised `reason` and the provider's own words (`detail`, e.g. `CODE: message`). */
export interface PayoutFailure {
  reason: FailureReason;
  detail: string;
}

/**
 * Reasons another attempt may cure, so the lifecycle retries them after 30/60/120 s: a provider
 * error (timeout, network, outage) and a merchant balance short of funds (operations can top it up
 * while the retries wait). The others are about the recipient (not a wallet, another holder's name,
 * a wallet over its limit) and the same order would fail again: the payout goes to MANUAL_REVIEW at once.
 */
const RETRYABLE: ReadonlySet<FailureReason> = new Set(['PROVIDER_ERROR', 'INSUFFICIENT_BALANCE']);

/** True when an attempt that failed for `reason` is worth retrying (see RETRYABLE); an unknown reason counts as a provider error. */
export function isRetryableFailure(reason: FailureReason | undefined): boolean {
  return reason === undefined || RETRYABLE.has(reason);
}

/** An order failure the provider did not explain. */
export function unexplainedFailure(detail = 'order failed'): PayoutFailure {
  return { reason: 'PROVIDER_ERROR', detail };
}
