import { assertActsFor, assertMayMoveMoney, canSeePayment } from '../domain/access';
import { SYSTEM_CALLER, type Caller } from '../domain/caller';
import {
  DomainError,
  PayoutSequenceConflict,
  PayoutTransitionRejected,
  ProviderRejectedError,
  ProviderUnavailableError,
  StoreUnavailableError,
} from '../domain/errors';
import { assertFarmerUsable } from '../domain/farmer';
import { formatPayoutId, parseBatchId, providerReference } from '../domain/ids';
import { microForUgx, microToUsdc, ugxForMicro } from '../domain/money';
import { maskPhone } from '../domain/masking';
import { isRetryableFailure, unexplainedFailure } from '../domain/payout-failures';
import { batchValueUgx, utcDay } from '../domain/payout-limits';
import { namesMatch } from '../domain/recipient-name';
import { allowedFrom, attemptStep, MAX_ATTEMPTS } from '../domain/payout-lifecycle';
import type { BatchStore } from '../domain/ports/batches';
import type { Notifier } from '../domain/ports/messaging';
import type { PayoutProvider, PayoutStore, PayoutWorkflow, ProviderOrder } from '../domain/ports/payouts';
import type { RegistryStore } from '../domain/ports/registry';
import type { Batch, Payout, PayoutReason } from '../domain/records';
import { logger } from '../runtime/logger';

/** The ports payout use cases need. */
export interface PayoutDeps {
  registry: RegistryStore;
  batches: BatchStore;
  payouts: PayoutStore;
  provider: PayoutProvider;
  workflow: PayoutWorkflow;
  now: () => Date;
}

/** What payout creation needs (a narrower view of PayoutDeps, so its function bundles only point reads of farmers and batches). */
export interface PayoutCreationDeps {
  /** `getCooperative`: the export premium in a batch's value (the cap on its farmer payouts). */
  registry: Pick<RegistryStore, 'getFarmer' | 'getCooperative'>;
  batches: Pick<BatchStore, 'get'>;
  payouts: Pick<
    PayoutStore,
    'createPending' | 'discardUnsent' | 'markOrderUnknown' | 'claimOrderUnknown' | 'markProcessing' | 'markFirstOrderRejected' | 'get'
  >;
  provider: Pick<PayoutProvider, 'quote' | 'createOrder' | 'findOrderByReference' | 'lookupAccountHolder'>;
  workflow: Pick<PayoutWorkflow, 'start'>;
  now: () => Date;
}

/** Attempts at the batch's next payout sequence number before concurrent creations are reported as 503. */
const MAX_SEQUENCE_TRIES = 10;

/** The amount to pay: USDC given by the caller, or UGX to deliver (the batch's net coffee payment). */
export type PayoutAmount = { usd_micro: number } | { ugx: number };

/**
 * Creates a farmer payout and starts its lifecycle (POST /payments/farmer-payout, docs/api/payouts.md#creating-a-payout;
 * docs/api/conventions.md#identifiers-money-and-time, docs/api/payouts.md#payout-lifecycle). Steps:
 *  1. cooperative binding; the farmer is registered (FARMER_NOT_REGISTERED) with a phone
 *     (PHONE_NOT_FOUND); the batch exists (BATCH_NOT_FOUND) and is the farmer's;
 *  2. quote the rate (provider unreachable after 3 attempts: PROVIDER_UNAVAILABLE; quote refused:
 *     PAYOUT_FAILED (500, the spec's status for a provider error) with `details.payout_created: false`;
 *     either way nothing is written);
 *  3. one transaction: the payout (PENDING) and its (batch, reason) guard (DUPLICATE_PAYOUT);
 *     for a FARMER_PAYOUT its UGX at the quoted rate added to the batch's running total on the
 *     condition that it stays within the batch's value (`batchValueUgx`: 422
 *     PAYOUT_EXCEEDS_BATCH_VALUE); for a manual payout (`manual`) its USDC added to the
 *     cooperative's total of the UTC day within `manual.daily_limit_usd_micro` (422
 *     DAILY_PAYOUT_LIMIT_REACHED); a concurrent creation that took the sequence number is retried with jitter, and after 10
 *     tries answered 503 AUDIT_LOG_UNAVAILABLE (nothing written), never 500;
 *  4. create the provider order, reference `<payout_id>-A1` (idempotent at the provider):
 *     unreachable → the provider is asked for that reference (a timed-out attempt may have placed
 *     it): found → go on with it (step 5); none → the payout and guard are removed and
 *     PROVIDER_UNAVAILABLE is raised; the look-up fails too → PROVIDER_UNAVAILABLE (`details.payout_id`),
 *     the payout kept PENDING and marked order-unknown: a retry of the same creation (same batch
 *     and reason) claims it and resumes at step 4 with the same reference — the provider answers
 *     the order if the lost call placed it — so the caller may simply retry and is never paid
 *     twice; reconciliation adopts or removes it if nobody retries;
 *     rejected → the payout is FAILED, its retry path starts, and PAYOUT_FAILED (500) is raised
 *     with the payout id in `details`;
 *  5. PROCESSING with the order id, and the state machine started (execution named after the payout).
 */
export async function createFarmerPayout(
  deps: PayoutCreationDeps,
  caller: Caller,
  input: {
    farmer_id: string;
    batch_id: string;
    cooperative_id: string;
    reason: PayoutReason;
    amount: PayoutAmount;
    /** The batch `batch_id` as the caller has just read it (`BatchStore.get`): used instead of reading it again. */
    batch?: Batch;
  },
  /** A loan's disbursement (payment type LOAN_DISBURSEMENT, id `DISB-…`): only `startLoanDisbursement` passes it. */
  disbursement?: { payment_id: string; loan_id: string },
  /** A manual payout (POST /payments/farmer-payout): counted against its cooperative's cap for the UTC day. */
  manual?: { daily_limit_usd_micro: number },
): Promise<Payout> {
  assertActsFor(caller, input.cooperative_id);
  if (input.reason === 'LOAN_DISBURSEMENT' && !disbursement) {
    throw new DomainError(
      'VALIDATION_ERROR',
      'A loan disbursement is made by POST /loans (the BatchToken is locked as collateral first); it cannot be created as a payout.',
      {
        details: [{ path: 'reason', message: 'LOAN_DISBURSEMENT payouts are created by POST /loans' }],
      },
    );
  }
  const farmer = await deps.registry.getFarmer(input.farmer_id);
  if (!farmer || farmer.cooperative_id !== input.cooperative_id) {
    throw new DomainError('FARMER_NOT_REGISTERED', `Farmer ${input.farmer_id} is not registered with cooperative ${input.cooperative_id}.`);
  }
  assertFarmerUsable(farmer);
  if (!farmer.phone) throw new DomainError('PHONE_NOT_FOUND', `Farmer ${input.farmer_id} has no mobile-money phone number on record.`);
  const batchRef = parseBatchId(input.batch_id);
  let batch = !batchRef ? null : input.batch?.batch_id === input.batch_id ? input.batch : await deps.batches.get(input.batch_id);
  if (!batch || !batchRef || batch.cooperative_id !== input.cooperative_id)
    throw new DomainError('BATCH_NOT_FOUND', `Batch ${input.batch_id} is not recognised for cooperative ${input.cooperative_id}.`);
  if (batch.farmer_id !== input.farmer_id) {
    throw new DomainError('VALIDATION_ERROR', `Batch ${input.batch_id} was delivered by another farmer.`, {
      details: [{ path: 'farmer_id', message: "does not match the batch's farmer" }],
    });
  }

  let quote;
  try {
    quote = await deps.provider.quote(
      'ugx' in input.amount ? { amount_ugx: input.amount.ugx } : { amount_usd_micro: input.amount.usd_micro },
    );
  } catch (err) {
    // The spec's PAYOUT_FAILED (500) is "the provider returned an error"; at the quote nothing exists yet to retry.
    if (err instanceof ProviderRejectedError) {
      throw new DomainError(
        'PAYOUT_FAILED',
        `The payout provider refused the rate quote (${err.reason}); no payout was created, so nothing is queued: correct the request or retry later.`,
        {
          details: { step: 'QUOTE', provider_reason: err.reason, payout_created: false },
        },
      );
    }
    throw err;
  }
  const usdMicro = 'ugx' in input.amount ? microForUgx(input.amount.ugx, quote.rate) : input.amount.usd_micro;
  const estimatedUgx = ugxForMicro(usdMicro, quote.rate);
  // The batch's value caps its FARMER_PAYOUTs together (a loan disbursement is an advance, not a payout of the coffee).
  let valueUgx: number | undefined;
  if (!disbursement) {
    const coop = await deps.registry.getCooperative(input.cooperative_id);
    if (!coop) throw new DomainError('COOPERATIVE_NOT_FOUND', `Cooperative ${input.cooperative_id} is not registered.`);
    valueUgx = batchValueUgx(batch, coop.export_premium_ugx_per_kg);
  }
  const manualDay = manual ? utcDay(deps.now()) : undefined;

  let payout: Payout | undefined;
  for (let tries = 0; !payout; tries++) {
    const seq = batch.payout_seq + 1;
    const at = deps.now().toISOString();
    const candidate: Payout = {
      payment_id: disbursement?.payment_id ?? formatPayoutId(batchRef.year, batchRef.n, seq),
      payment_type: disbursement ? 'LOAN_DISBURSEMENT' : 'FARMER_PAYOUT',
      ...(disbursement ? { loan_id: disbursement.loan_id } : {}),
      batch_id: input.batch_id,
      farmer_id: input.farmer_id,
      cooperative_id: input.cooperative_id,
      reason: input.reason,
      status: 'PENDING',
      amount_usd_micro: usdMicro,
      amount_ugx: estimatedUgx,
      estimated_ugx: estimatedUgx,
      exchange_rate: quote.rate,
      quote_id: quote.quote_id,
      phone: farmer.phone,
      recipient_name: farmer.full_name,
      attempt: 1,
      retry_count: 0,
      created_at: at,
      updated_at: at,
      created_by: caller.sub,
      ...(valueUgx !== undefined ? { counted_ugx: estimatedUgx } : {}),
      ...(manualDay ? { manual_day: manualDay } : {}),
    };
    try {
      await deps.payouts.createPending(candidate, batch.payout_seq, {
        ...(valueUgx !== undefined ? { batch_value_ugx: valueUgx } : {}),
        ...(manual ? { daily_limit_usd_micro: manual.daily_limit_usd_micro } : {}),
      });
      payout = candidate;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'DUPLICATE_PAYOUT') {
        // A retry after 503 PROVIDER_UNAVAILABLE: the payout it left (order unknown) resumes, as first created.
        const resumed = await deps.payouts.claimOrderUnknown(input.batch_id, input.reason, deps.now().toISOString());
        if (!resumed) throw err;
        logger.info('payout resumed by a retry after its first order was unknown', { payout_id: resumed.payment_id });
        return placeFirstOrder(deps, resumed);
      }
      if (!(err instanceof PayoutSequenceConflict)) throw err;
      if (tries >= MAX_SEQUENCE_TRIES)
        throw new StoreUnavailableError('Too many concurrent payout creations on this batch; nothing was created, retry shortly.', err);
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (tries + 1))); // jitter: concurrent losers do not collide again in step
      batch = (await deps.batches.get(input.batch_id))!;
    }
  }

  return placeFirstOrder(deps, payout);
}

/**
 * POST /payments/farmer-payout: a payout a person asks for. Money needs two keys: ADMIN, or a
 * COOPERATIVE token with the MANAGER duty of the batch's cooperative (any other duty, an AGENT, an
 * MFI: 403 INSUFFICIENT_PERMISSIONS). Then `createFarmerPayout` with the batch-value cap (422
 * PAYOUT_EXCEEDS_BATCH_VALUE) and the cooperative's cap for the UTC day, `dailyLimitUsdMicro`
 * (MANUAL_PAYOUT_DAILY_LIMIT_USDC; 422 DAILY_PAYOUT_LIMIT_REACHED), both decided in the payout's
 * creating transaction. Other errors as `createFarmerPayout`.
 */
export async function createManualPayout(
  deps: PayoutCreationDeps,
  caller: Caller,
  input: { farmer_id: string; batch_id: string; cooperative_id: string; reason: PayoutReason; amount_usd_micro: number },
  limits: { dailyLimitUsdMicro: number },
): Promise<Payout> {
  assertMayMoveMoney(caller);
  return createFarmerPayout(
    deps,
    caller,
    {
      farmer_id: input.farmer_id,
      batch_id: input.batch_id,
      cooperative_id: input.cooperative_id,
      reason: input.reason,
      amount: { usd_micro: input.amount_usd_micro },
    },
    undefined,
    { daily_limit_usd_micro: limits.dailyLimitUsdMicro },
  );
}

/**
 * Steps 4–5 of `createFarmerPayout` for a PENDING payout (a new one, or one a retry claimed):
 * the attempt-1 order under the reference `<payout_id>-A1` (idempotent at the provider, so a
 * resumed payout can never make a second order), then PROCESSING and the state machine.
 */
async function placeFirstOrder(deps: PayoutCreationDeps, payout: Payout): Promise<Payout> {
  let order;
  try {
    await checkRecipient(deps.provider, payout);
    order = await deps.provider.createOrder({
      reference: providerReference(payout.payment_id, 1),
      ...(payout.quote_id ? { quote_id: payout.quote_id } : {}),
      amount_usd_micro: payout.amount_usd_micro,
      exchange_rate: payout.exchange_rate,
      recipient: { phone: payout.phone, name: payout.recipient_name },
    });
  } catch (err) {
    if (!(err instanceof ProviderUnavailableError) && !(err instanceof ProviderRejectedError)) throw err;
    if (err instanceof ProviderUnavailableError) {
      // Unreachable is not "not received": an attempt that timed out (or whose answer was lost) may
      // have created the order. It is discarded only when the provider says it has no such order.
      order = await placedOrder(deps, payout);
      if (order === null) {
        await deps.payouts.discardUnsent(payout);
        throw err;
      }
      if (order === undefined) {
        await deps.payouts.markOrderUnknown(payout, deps.now().toISOString());
        throw new ProviderUnavailableError(
          `The payout provider is unreachable; payout ${payout.payment_id} is kept PENDING and resumes (never paid twice) when this request is retried.`,
          err,
          { payout_id: payout.payment_id },
        );
      }
    } else {
      const failed = await deps.payouts.markFirstOrderRejected(
        payout,
        { reason: err.failure, detail: err.reason },
        deps.now().toISOString(),
      );
      await deps.workflow.start(payout.payment_id);
      throw new DomainError(
        'PAYOUT_FAILED',
        `The payout provider rejected the order (${err.reason}); payout ${failed.payment_id} ${isRetryableFailure(err.failure) ? 'is queued for retry' : 'goes to manual review (not retryable)'}.`,
        {
          details: { payout_id: failed.payment_id, status: failed.status, failure_reason: err.failure },
        },
      );
    }
  }
  let processing: Payout;
  try {
    processing = await deps.payouts.markProcessing(payout, order, deps.now().toISOString());
  } catch (err) {
    // Reconciliation adopted the same order meanwhile: the payout is in flight all the same.
    if (!(err instanceof PayoutTransitionRejected)) throw err;
    const fresh = await deps.payouts.get(payout.payment_id);
    if (!fresh || fresh.status === 'PENDING') throw err;
    processing = fresh;
  }
  await deps.workflow.start(payout.payment_id);
  logger.info('payout started', {
    payout_id: processing.payment_id,
    batch_id: processing.batch_id,
    reason: processing.reason,
    amount_usd_micro: processing.amount_usd_micro,
    provider_order_id: order.order_id,
    provider: order.provider,
  });
  return processing;
}

/**
 * Reads a payout or loan disbursement (`PAY-…`, `DISB-…`) with the access rules of
 * GET /payments/{id}: ADMIN all; a cooperative only its own; an MFI only its own deposits (so never a payout). Errors: PAYMENT_NOT_FOUND (404),
 * INSUFFICIENT_PERMISSIONS (403).
 */
export async function readPayment(payouts: Pick<PayoutStore, 'get'>, caller: Caller, paymentId: string): Promise<Payout> {
  const p = /^(PAY|DISB)-/.test(paymentId) ? await payouts.get(paymentId) : null;
  if (!p) throw new DomainError('PAYMENT_NOT_FOUND', `Payment ${paymentId} is not recognised.`);
  if (canSeePayment(caller, p)) return p;
  throw new DomainError('INSUFFICIENT_PERMISSIONS', `This token has no access to payment ${paymentId}.`);
}

// ------------------------------------------------------------------ state-machine tasks

/**
 * Task `AttemptN` (.waitForTaskToken): makes sure attempt N's provider order exists (reference
 * `<payout_id>-A<N>`, idempotent) and parks the task token on the payout, for the settlement
 * webhook to resume. When the payout was settled or failed before the token could be parked,
 * resumes or fails the task at once. A provider rejection fails the task (`OrderFailed`).
 */
export async function runPayoutAttempt(
  deps: Pick<PayoutDeps, 'payouts' | 'provider' | 'workflow' | 'now'>,
  input: { payout_id: string; attempt: number; task_token: string },
): Promise<void> {
  const { payout_id: payoutId, attempt, task_token: token } = input;
  const payout = await deps.payouts.get(payoutId);
  if (!payout) throw new Error(`payout ${payoutId} not found`);
  if (payout.status === 'COMPLETED') return deps.workflow.resume(token, settlementOutput(payout));
  if (payout.status === 'MANUAL_REVIEW') return deps.workflow.fail(token, 'PayoutFinal', 'payout is in manual review');
  if (payout.status === 'FAILED' && payout.attempt === attempt)
    return deps.workflow.fail(token, 'OrderFailed', payout.last_failure_reason ?? 'order failed');

  // 1. the attempt and its token first, 2. then the order: a settlement or failure can only come after.
  const blocked = await deps.payouts.registerAttempt(payoutId, attempt, token, deps.now().toISOString());
  if (blocked) {
    if (blocked.status === 'COMPLETED') return deps.workflow.resume(token, settlementOutput(blocked));
    if (blocked.status === 'FAILED' && blocked.attempt === attempt)
      return deps.workflow.fail(token, 'OrderFailed', blocked.last_failure_reason ?? 'order failed');
    throw new Error(`payout ${payoutId} cannot start attempt ${attempt} from status ${blocked.status} (attempt ${blocked.attempt})`);
  }
  try {
    await checkRecipient(deps.provider, payout);
    const order = await deps.provider.createOrder({
      reference: providerReference(payoutId, attempt),
      ...(attempt === 1 && payout.quote_id ? { quote_id: payout.quote_id } : {}),
      amount_usd_micro: payout.amount_usd_micro,
      exchange_rate: payout.exchange_rate,
      recipient: { phone: payout.phone, name: payout.recipient_name },
      // A repeated attempt whose order is placed already goes to the provider holding it, never to another.
      ...(payout.attempt === attempt && payout.provider_order_id && payout.provider ? { provider: payout.provider } : {}),
    });
    await deps.payouts.setAttemptOrder(payoutId, attempt, order.order_id, order.provider);
  } catch (err) {
    if (err instanceof ProviderRejectedError) {
      await deps.payouts.recordFailure(
        { ...payout, attempt },
        attempt,
        { reason: err.failure, detail: err.reason },
        deps.now().toISOString(),
      );
      return deps.workflow.fail(token, 'OrderFailed', err.reason);
    }
    throw err;
  }
}

/**
 * The recipient name check before an order is placed (docs/api/payouts.md#recipient-name-check): the
 * provider's account-holder lookup of the payout's phone. Not a wallet: ProviderRejectedError
 * INVALID_MSISDN; a holder name that does not match the farmer's registered name (`namesMatch`):
 * ProviderRejectedError RECIPIENT_NAME_MISMATCH — neither is retried, so nothing is paid and the
 * payout goes to manual review. A provider that does not disclose the name lets the order go on.
 * Errors: ProviderUnavailableError when the lookup cannot be made (nothing was placed).
 */
async function checkRecipient(provider: Pick<PayoutProvider, 'lookupAccountHolder'>, payout: Payout): Promise<void> {
  const holder = await provider.lookupAccountHolder(payout.phone);
  if (!holder.found) throw new ProviderRejectedError('ACCOUNT_NOT_FOUND: the number is not a mobile-money wallet', 'INVALID_MSISDN');
  if (holder.name === null) {
    logger.info('recipient name not disclosed by the provider; order placed without the name check', { payout_id: payout.payment_id });
    return;
  }
  if (!namesMatch(payout.recipient_name, holder.name)) {
    logger.warn('recipient name check failed: the wallet holder is not the registered farmer; nothing paid', {
      payout_id: payout.payment_id,
      phone: maskPhone(payout.phone),
    });
    throw new ProviderRejectedError(
      `RECIPIENT_NAME_MISMATCH: the wallet is registered to "${holder.name}", not to the farmer "${payout.recipient_name}"`,
      'RECIPIENT_NAME_MISMATCH',
    );
  }
}

/** Outcome of checking an attempt that failed or timed out. */
export type CheckOutcome = 'COMPLETED' | 'PENDING' | 'RETRY' | 'EXHAUSTED';

/**
 * Task `CheckAttemptN`: after attempt N failed or its wait timed out, read the attempt's final
 * status from the provider (never pay again on a guess, docs/api/payouts.md#payout-lifecycle):
 * settled → recorded as COMPLETED; still pending → wait again; failed or never created →
 * RETRY_N (N ≤ 3) or EXHAUSTED (N = 4, manual review follows).
 */
export async function checkPayoutAttempt(
  deps: Pick<PayoutDeps, 'payouts' | 'provider' | 'now'>,
  input: { payout_id: string; attempt: number },
): Promise<{ outcome: CheckOutcome }> {
  const payout = await deps.payouts.get(input.payout_id);
  if (!payout) throw new Error(`payout ${input.payout_id} not found`);
  if (payout.status === 'COMPLETED') return { outcome: 'COMPLETED' };
  if (payout.status === 'MANUAL_REVIEW') return { outcome: 'EXHAUSTED' };
  // The attempt never started (its function failed before registering it): run it again — unless
  // the payout is in a state no attempt can start from, which a person must look at.
  if (payout.attempt < input.attempt) {
    return { outcome: allowedFrom({ type: 'ATTEMPT_STARTED', attempt: input.attempt }).includes(payout.status) ? 'PENDING' : 'EXHAUSTED' };
  }
  const order = await deps.provider.findOrderByReference(providerReference(input.payout_id, input.attempt));
  if (order?.status === 'SETTLED') {
    await deps.payouts.recordSettlement(
      payout,
      {
        attempt: input.attempt,
        order_id: order.order_id,
        ...(order.provider ? { provider: order.provider } : {}),
        amount_ugx: order.amount_ugx,
        exchange_rate: order.exchange_rate,
        mobile_money_transaction_id: order.mobile_money_transaction_id ?? '',
        settled_at: order.settled_at ?? deps.now().toISOString(),
      },
      deps.now().toISOString(),
    );
    return { outcome: 'COMPLETED' };
  }
  if (order?.status === 'PENDING') return { outcome: 'PENDING' };
  let reason = payout.failure_reason;
  if (payout.status !== 'FAILED') {
    const failure = order?.failure ?? unexplainedFailure('no order at the provider');
    await deps.payouts.recordFailure(payout, input.attempt, failure, deps.now().toISOString());
    reason = failure.reason;
  }
  // Only a failure another attempt may cure is retried (docs/api/payouts.md#failure-reasons): an invalid number goes to manual review at once.
  if (!isRetryableFailure(reason)) {
    logger.info('payout failure not retryable; manual review follows', {
      payout_id: input.payout_id,
      attempt: input.attempt,
      failure_reason: reason,
    });
    return { outcome: 'EXHAUSTED' };
  }
  // The step within the attempt's round (docs/api/payouts.md#manual-review: a resolution retry runs attempts 4r+1 … 4r+4).
  if (attemptStep(input.attempt) >= MAX_ATTEMPTS) return { outcome: 'EXHAUSTED' };
  await deps.payouts.scheduleRetry(payout, attemptStep(input.attempt) as 1 | 2 | 3, deps.now().toISOString()).catch((err) => {
    if (!(err instanceof PayoutTransitionRejected)) throw err;
  });
  return { outcome: 'RETRY' };
}

/**
 * Task `ManualReview`: all retries exhausted (spec: RETRY_3 → MANUAL_REVIEW). The payout becomes
 * MANUAL_REVIEW, its USDC is held for the cooperative, and the cooperative's manager is notified
 * through SNS with `cooperative_id` as a message attribute (so each manager's subscription filters
 * to its own cooperative). The message names the farmer, the batch receipt and the amount.
 */
export async function moveToManualReview(
  deps: Pick<PayoutDeps, 'payouts' | 'registry' | 'now'> & { notifier: Notifier },
  input: { payout_id: string },
): Promise<{ status: string }> {
  const payout = await deps.payouts.get(input.payout_id);
  if (!payout) throw new Error(`payout ${input.payout_id} not found`);
  if (payout.status === 'COMPLETED') return { status: 'COMPLETED' };
  const at = deps.now().toISOString();
  if (payout.status !== 'MANUAL_REVIEW') await deps.payouts.markManualReview(payout, at);
  const fresh = (await deps.payouts.get(input.payout_id))!;
  if (fresh.status !== 'MANUAL_REVIEW') return { status: fresh.status };
  // At least once: a retried task publishes again only if the first publish was not recorded.
  if (!fresh.manager_notified_at) {
    const coop = await deps.registry.getCooperative(fresh.cooperative_id);
    await deps.notifier.publish({
      subject: `Payout ${fresh.payment_id} needs manual review`,
      message: [
        `Cooperative ${coop?.name ?? fresh.cooperative_id}: the mobile-money payout to farmer ${fresh.recipient_name} (${fresh.farmer_id}, ${maskPhone(fresh.phone)}) failed after ${fresh.retry_count} retries${fresh.failure_reason ? ` (${fresh.failure_reason})` : ''}.`,
        `Batch receipt: ${fresh.batch_id}. Payout: ${fresh.payment_id} (${fresh.reason}).`,
        `Amount: ${microToUsdc(fresh.amount_usd_micro)} USDC (about ${fresh.estimated_ugx.toLocaleString('en-US')} UGX), now held in the cooperative's holding balance.`,
        `Last provider answer: ${fresh.last_failure_reason ?? 'none'}.`,
        `The farmer can collect the payment at the cooperative office against the batch receipt ${fresh.batch_id}.`,
      ].join('\n'),
      attributes: { cooperative_id: fresh.cooperative_id, event: 'payout.manual_review', payout_id: fresh.payment_id },
    });
    await deps.payouts.markManagerNotified(fresh.payment_id, deps.now().toISOString());
  }
  return { status: 'MANUAL_REVIEW' };
}

function settlementOutput(p: Payout): Record<string, unknown> {
  return { status: p.status, provider_order_id: p.provider_order_id ?? null, completed_at: p.completed_at ?? null };
}

/**
 * The attempt-1 order of a PENDING payout whose creation call failed as unreachable: the order
 * (it was placed after all), `null` (the provider says there is none), or `undefined` when the
 * provider cannot say either (the payout then stays PENDING for reconciliation, never discarded
 * blind: a second payout would be a second order, a double payment).
 */
async function placedOrder(deps: Pick<PayoutCreationDeps, 'provider'>, payout: Payout): Promise<ProviderOrder | null | undefined> {
  try {
    return await deps.provider.findOrderByReference(providerReference(payout.payment_id, 1));
  } catch (err) {
    logger.warn('provider order look-up failed after an unreachable order creation; the payout stays PENDING for reconciliation', {
      payout_id: payout.payment_id,
      error: err as Error,
    });
    return undefined;
  }
}

/**
 * Starts the NET_COFFEE_PAYMENT of a submitted batch (docs/api/conventions.md#identifiers-money-and-time: the USDC that buys
 * `payment_amount_ugx` at the quoted rate). Idempotent: an existing payout (DUPLICATE_PAYOUT)
 * means it was started already. A farmer without a phone makes the batch NOT_PAYABLE; a provider
 * rejection leaves the payout on its retry path. Provider unreachable: throws, so the queue retries.
 */
export async function startBatchPayout(deps: PayoutDeps, batchId: string): Promise<void> {
  const batch = await deps.batches.get(batchId);
  if (!batch) throw new Error(`batch ${batchId} not found`);
  try {
    await createFarmerPayout(deps, SYSTEM_CALLER, {
      farmer_id: batch.farmer_id,
      batch_id: batch.batch_id,
      cooperative_id: batch.cooperative_id,
      reason: 'NET_COFFEE_PAYMENT',
      amount: { ugx: batch.payment_amount_ugx },
      batch, // read just now: not read a second time
    });
  } catch (err) {
    if (err instanceof DomainError) {
      if (err.code === 'DUPLICATE_PAYOUT' || err.code === 'PAYOUT_FAILED') return;
      if (err.code === 'PAYOUT_EXCEEDS_BATCH_VALUE') {
        // Manual payouts took the batch's value already: paying the net payment too would pay the coffee twice.
        await deps.batches.setPaymentStatus(batchId, 'NOT_PAYABLE');
        logger.error("batch payment not payable: the batch's farmer payouts already reach its value", {
          batch_id: batchId,
          alarm: 'PAYOUT_EXCEEDS_BATCH_VALUE',
          details: err.details,
        });
        return;
      }
      if (err.code === 'PHONE_NOT_FOUND') {
        await deps.batches.setPaymentStatus(batchId, 'NOT_PAYABLE');
        logger.warn('batch payment not payable: the farmer has no phone on record', { batch_id: batchId });
        return;
      }
    }
    throw err;
  }
}

/**
 * GET /payments?batch_id=: the batch's payments oldest first, a page of `limit` (1–100) after
 * `nextToken`. Errors: BATCH_NOT_FOUND (404), INSUFFICIENT_PERMISSIONS (403), VALIDATION_ERROR for
 * a token this listing did not issue.
 */
export async function listBatchPayments(
  deps: { batches: Pick<BatchStore, 'get'>; payouts: Pick<PayoutStore, 'listByBatch'> },
  caller: Caller,
  input: { batch_id: string; limit: number; next_token?: string },
): Promise<{ items: Payout[]; total: number; next_token?: string }> {
  const batch = await deps.batches.get(input.batch_id);
  if (!batch) throw new DomainError('BATCH_NOT_FOUND', `Batch ${input.batch_id} is not recognised.`);
  assertActsFor(caller, batch.cooperative_id);
  return deps.payouts.listByBatch(input.batch_id, input.limit, input.next_token);
}
