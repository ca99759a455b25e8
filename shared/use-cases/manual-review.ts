import { assertActsFor, assertDuty, assertRole } from '../domain/access';
import type { Caller } from '../domain/caller';
import { DomainError, PayoutTransitionRejected } from '../domain/errors';
import { assertFarmerUsable } from '../domain/farmer';
import { attemptNumber, MAX_RESOLUTION_ROUNDS } from '../domain/payout-lifecycle';
import type { PayoutResolutionStore, PayoutStore, PayoutWorkflow } from '../domain/ports/payouts';
import type { RegistryStore } from '../domain/ports/registry';
import type { Payout } from '../domain/records';
import { logger } from '../runtime/logger';

/** How a payout in MANUAL_REVIEW is closed (docs/api/payouts.md#manual-review), as validated by the transport. */
export type PayoutResolution = { resolution: 'PAID_IN_CASH'; receipt_number: string; paid_at: string } | { resolution: 'RETRY' };

/** The ports resolving a manual review needs. */
export interface ManualReviewDeps {
  payouts: Pick<PayoutStore, 'get'>;
  resolutions: PayoutResolutionStore;
  registry: Pick<RegistryStore, 'getFarmer'>;
  workflow: Pick<PayoutWorkflow, 'start'>;
  now: () => Date;
}

/**
 * POST /payments/farmer-payout/{id}/resolve (docs/security.md#tokens-and-roles, docs/api/payouts.md#manual-review): closes a payout in MANUAL_REVIEW.
 * Access: ADMIN, or a COOPERATIVE token with the MANAGER duty acting for the payout's
 * cooperative (INSUFFICIENT_PERMISSIONS, 403); an unknown payout is PAYMENT_NOT_FOUND (404).
 *  - PAID_IN_CASH: the farmer was paid at the cooperative office. `paid_at` (ISO 8601 UTC) is
 *    neither in the future nor before the payout was created (VALIDATION_ERROR, 400). The payout
 *    becomes COMPLETED with settlement_channel CASH_AT_OFFICE, the receipt number and paid_at; the
 *    cooperative's holding balance gives up the payout's USDC; a NET_COFFEE_PAYMENT's batch becomes
 *    PAYMENT_CONFIRMED; audit entry PAYOUT_PAID_IN_CASH — one transaction.
 *  - RETRY: a new round of attempts through the payout state machine to the farmer's CURRENT
 *    phone (re-read; none: PHONE_NOT_FOUND, 422; registration not usable: FARMER_NOT_REGISTERED).
 *    Round r (1, 2, …) runs attempts 4r+1 … 4r+4 — new provider references `<payout_id>-A<n>`,
 *    while every earlier attempt's order is FAILED, so nothing is paid twice — as execution
 *    `<payout_id>-R<r>`. In one transaction: PROCESSING, the new phone, retry_count 0, the
 *    holding balance less the USDC (it leaves the office again), a NET_COFFEE_PAYMENT's batch
 *    INITIATED again, audit entry PAYOUT_RETRY_REQUESTED; then the execution is started. Should
 *    the round end in MANUAL_REVIEW again, the USDC is held again and the manager notified again.
 * A payout not in MANUAL_REVIEW — never there, already resolved, or resolved concurrently (of
 * concurrent resolutions exactly one wins: each is conditioned on MANUAL_REVIEW) — is 422
 * STAGE_OUT_OF_ORDER (its lifecycle is not at the step this request belongs to), `details.status`
 * its current status. After MAX_RESOLUTION_ROUNDS retries a RETRY is refused the same way (pay in cash).
 */
export async function resolveFarmerPayout(
  deps: ManualReviewDeps,
  caller: Caller,
  payoutId: string,
  input: PayoutResolution,
): Promise<Payout> {
  assertRole(caller, ['ADMIN', 'COOPERATIVE']);
  assertDuty(caller, ['MANAGER']);
  const payout = /^(PAY|DISB)-/.test(payoutId) ? await deps.payouts.get(payoutId) : null;
  if (!payout) throw new DomainError('PAYMENT_NOT_FOUND', `Payment ${payoutId} is not recognised.`);
  assertActsFor(caller, payout.cooperative_id);
  if (payout.status !== 'MANUAL_REVIEW') throw notInManualReview(payout);
  const at = deps.now();

  if (input.resolution === 'PAID_IN_CASH') {
    const paidAt = Date.parse(input.paid_at);
    if (paidAt > at.getTime()) throw paidAtError('must not be in the future');
    if (paidAt < Date.parse(payout.created_at)) throw paidAtError(`must not be before the payout was created (${payout.created_at})`);
    const done = await whileInManualReview(deps, payout, () =>
      deps.resolutions.resolvePaidInCash(
        payout,
        { receipt_number: input.receipt_number, paid_at: new Date(paidAt).toISOString(), actor: caller.sub },
        at.toISOString(),
      ),
    );
    logger.info('manual review resolved: paid in cash', {
      payout_id: payout.payment_id,
      cooperative_id: payout.cooperative_id,
      amount_usd_micro: payout.amount_usd_micro,
      receipt_number: input.receipt_number,
    });
    return done;
  }

  const round = (payout.resolution_round ?? 0) + 1;
  if (round > MAX_RESOLUTION_ROUNDS) {
    throw new DomainError(
      'STAGE_OUT_OF_ORDER',
      `Payout ${payout.payment_id} was retried ${round - 1} times already; close it as PAID_IN_CASH.`,
      { details: { payout_id: payout.payment_id, status: payout.status, resolution_round: round - 1 } },
    );
  }
  const farmer = await deps.registry.getFarmer(payout.farmer_id);
  if (!farmer) throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${payout.farmer_id} is not in the farmer registry.`);
  assertFarmerUsable(farmer);
  if (!farmer.phone)
    throw new DomainError(
      'PHONE_NOT_FOUND',
      `Farmer ${payout.farmer_id} has no mobile-money phone number on record; correct it with PATCH /farmers/${payout.farmer_id} first.`,
    );
  const phone = farmer.phone;
  const retried = await whileInManualReview(deps, payout, () =>
    deps.resolutions.resolveRetry(
      payout,
      {
        round,
        attempt: attemptNumber(round, 1),
        phone,
        recipient_name: farmer.full_name,
        actor: caller.sub,
      },
      at.toISOString(),
    ),
  );
  await deps.workflow.start(payout.payment_id, round);
  logger.info('manual review resolved: retry started', {
    payout_id: payout.payment_id,
    round,
    first_attempt: retried.attempt,
    phone_changed: phone !== payout.phone,
  });
  return retried;
}

/** Runs a resolution write; a concurrent resolution that won (the payout left MANUAL_REVIEW) is 422. */
async function whileInManualReview(deps: ManualReviewDeps, payout: Payout, write: () => Promise<Payout>): Promise<Payout> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof PayoutTransitionRejected)) throw err;
    throw notInManualReview((await deps.payouts.get(payout.payment_id)) ?? payout);
  }
}

function notInManualReview(p: Payout): DomainError {
  return new DomainError(
    'STAGE_OUT_OF_ORDER',
    `Payout ${p.payment_id} is ${p.status}, not in MANUAL_REVIEW: only a payout in manual review can be resolved.`,
    {
      details: { payout_id: p.payment_id, status: p.status, required_status: 'MANUAL_REVIEW' },
    },
  );
}

function paidAtError(message: string): DomainError {
  return new DomainError('VALIDATION_ERROR', `paid_at ${message}.`, { details: [{ path: 'paid_at', message }] });
}
