import { canSeePayment } from '../domain/access';
import type { Caller } from '../domain/caller';
import { depositId, depositWriteId, isDepositId, reversalWriteId } from '../domain/deposits';
import { DomainError, ProviderRejectedError, ProviderUnavailableError } from '../domain/errors';
import type { Deposit } from '../domain/lending';
import { dueByForDaysPastDue, PAR_DAYS_PAST_DUE, par30UsdMicro } from '../domain/loan-terms';
import type { Hex } from 'viem';
import type { DepositStore, LoanStore, OnRamp, OnRampOrder, VaultReader, VaultState, VaultWriteQueue } from '../domain/ports/lending';
import type { WebhookReceiptStore } from '../domain/ports/messaging';
import { logger } from '../runtime/logger';

/** Receipt source of the on-ramp's webhooks (`WEBHOOK#onramp#<webhook-id>`). */
const ONRAMP_WEBHOOK_SOURCE = 'onramp';
/** Key of the error log line an on-ramp event the on-ramp does not confirm raises (metric filter / alarm). */
export const ONRAMP_MISMATCH_ALARM = 'FORGED_OR_MISMATCHED_ONRAMP_WEBHOOK';

/** The ports of the deposit use cases. */
export interface DepositDeps {
  deposits: DepositStore;
  onRamp: OnRamp;
  /** Webhook receipts (replays are answered without asking the on-ramp). */
  receipts: WebhookReceiptStore;
  /** The single ledger writer's queue: vault deposits and reversals. */
  vaultWrites: VaultWriteQueue;
  /** The service treasury on the ledger (the ledger signer's address): where the on-ramp delivers USDC. */
  treasury: () => Promise<Hex>;
  now: () => Date;
}

/** What `POST /mfi/deposits` asks for (validated by the transport: currency in the supported set, amount bounded). */
export interface CreateDepositInput {
  /** ADMIN only (required for ADMIN); an MFI token deposits for its own `mfi_id`. */
  mfi_id?: string;
  source_currency: string;
  source_amount: number;
}

/**
 * POST /mfi/deposits (docs/api/lending.md#mfi-deposits): an MFI deposit into the lending vault through the fiat
 * on-ramp. The MFI whose deposit it is: an MFI token's own `mfi_id` (another `mfi_id` in the body:
 * 403 INSUFFICIENT_PERMISSIONS); ADMIN must name it (`mfi_id`, else 400 VALIDATION_ERROR).
 * 1. the deposit `DEP-<yyyy>-<nnnnnn>` is stored PROCESSING (amount 0 until the on-ramp delivers);
 * 2. the on-ramp order is created with reference = the payment id (idempotent at the on-ramp),
 *    destination = the service treasury; its `ramp_payment_id` is recorded.
 * On-ramp unreachable (or answering nonsense): the deposit is marked FAILED
 * (`failure_reason: ONRAMP_UNAVAILABLE…`) and 503 PROVIDER_UNAVAILABLE names it; nothing else was
 * done, a retry creates a new deposit. Should the lost call have placed the order after all, its
 * confirmed completion webhook revives the FAILED deposit (see `applyOnRampWebhook`), so no
 * delivered USDC is left unaccounted. On-ramp refusal: FAILED and 400 VALIDATION_ERROR with the
 * on-ramp's reason. @returns the deposit (PROCESSING)
 */
export async function createMfiDeposit(deps: DepositDeps, caller: Caller, input: CreateDepositInput): Promise<Deposit> {
  const mfiId = depositorOf(caller, input.mfi_id);
  const treasury = await deps.treasury();
  const created = deps.now();
  const at = created.toISOString();
  const paymentId = depositId(created.getUTCFullYear(), await deps.deposits.nextDepositNumber(created.getUTCFullYear()));
  const deposit: Deposit = {
    payment_id: paymentId,
    payment_type: 'MFI_DEPOSIT',
    mfi_id: mfiId,
    status: 'PROCESSING',
    source_currency: input.source_currency,
    source_amount: input.source_amount,
    amount_usd_micro: 0,
    created_at: at,
    created_by: caller.sub,
    updated_at: at,
  };
  await deps.deposits.create(deposit);
  let order: OnRampOrder;
  try {
    order = await deps.onRamp.createOrder({
      reference: paymentId,
      source_currency: input.source_currency,
      source_amount: input.source_amount,
      destination_address: treasury,
    });
  } catch (err) {
    const rejected = err instanceof ProviderRejectedError;
    const reason = rejected ? `ONRAMP_REJECTED: ${err.reason}` : `ONRAMP_UNAVAILABLE: ${(err as Error).message}`;
    await deps.deposits.transition(
      paymentId,
      ['PROCESSING'],
      'FAILED',
      { failure_reason: reason.slice(0, 1000) },
      deps.now().toISOString(),
    );
    logger.warn('mfi deposit: on-ramp order not placed; deposit FAILED', { payment_id: paymentId, reason });
    if (rejected) {
      throw new DomainError('VALIDATION_ERROR', `The on-ramp refused the deposit ${paymentId}: ${err.reason}`, {
        details: [{ path: 'source_amount', message: err.reason }],
      });
    }
    throw new ProviderUnavailableError(
      `The fiat on-ramp is unreachable; deposit ${paymentId} was marked FAILED and nothing was ordered. Retry the deposit.`,
      err,
      { payment_id: paymentId },
    );
  }
  await deps.deposits.transition(
    paymentId,
    ['PROCESSING'],
    'PROCESSING',
    { ramp_payment_id: order.ramp_payment_id },
    deps.now().toISOString(),
  );
  return (await deps.deposits.get(paymentId)) ?? { ...deposit, ramp_payment_id: order.ramp_payment_id };
}

/** The MFI a deposit is for: see `createMfiDeposit`. */
function depositorOf(caller: Caller, bodyMfiId: string | undefined): string {
  if (caller.role === 'MFI') {
    if (!caller.mfi_id) throw new DomainError('INSUFFICIENT_PERMISSIONS', 'This MFI token carries no mfi_id.');
    if (bodyMfiId !== undefined && bodyMfiId !== caller.mfi_id)
      throw new DomainError('INSUFFICIENT_PERMISSIONS', `An MFI token may deposit only for its own MFI (${caller.mfi_id}).`);
    return caller.mfi_id;
  }
  if (caller.role === 'ADMIN') {
    if (!bodyMfiId)
      throw new DomainError('VALIDATION_ERROR', 'ADMIN deposits must name the MFI (mfi_id).', {
        details: [{ path: 'mfi_id', message: 'required for ADMIN' }],
      });
    return bodyMfiId;
  }
  throw new DomainError('INSUFFICIENT_PERMISSIONS', 'Deposits are made by MFI or ADMIN tokens.');
}

/**
 * GET /payments/DEP-… : the deposit with the access rules of payments (readPayment): ADMIN all; an
 * MFI only its own deposits; a COOPERATIVE never (403). Errors: PAYMENT_NOT_FOUND (404),
 * INSUFFICIENT_PERMISSIONS (403).
 */
export async function readDeposit(deposits: Pick<DepositStore, 'get'>, caller: Caller, paymentId: string): Promise<Deposit> {
  const d = isDepositId(paymentId) ? await deposits.get(paymentId) : null;
  if (!d) throw new DomainError('PAYMENT_NOT_FOUND', `Payment ${paymentId} is not recognised.`);
  if (canSeePayment(caller, d)) return d;
  throw new DomainError('INSUFFICIENT_PERMISSIONS', `This token has no access to payment ${paymentId}.`);
}

// ------------------------------------------------------------------ the on-ramp's webhooks

/**
 * An on-ramp event, its Standard Webhooks signature verified and its body validated by the
 * transport (shared/http/deposit-schemas.ts OnRampWebhookSchema). A claim, not a fact.
 */
export interface OnRampEvent {
  type: 'onramp.order.completed' | 'onramp.order.reversed' | 'onramp.order.failed';
  data: {
    ramp_payment_id: string;
    /** Our reference: the deposit's payment id. */
    reference: string;
    source_currency?: string | null;
    source_amount?: number | null;
    /** Decimal USDC string. */
    usdc_amount?: string | null;
    transfer_tx_hash?: string | null;
    completed_at?: string | null;
    reversed_at?: string | null;
    failure_reason?: string | null;
  };
}

/** APPLIED; DUPLICATE_WEBHOOK (webhook id seen); IGNORED (nothing left to do); UNKNOWN_REFERENCE; MISMATCH (not confirmed by the on-ramp). */
export type OnRampWebhookOutcome = 'APPLIED' | 'DUPLICATE_WEBHOOK' | 'IGNORED' | 'UNKNOWN_REFERENCE' | 'MISMATCH';

/**
 * POST /api/webhooks/onramp, after the transport verified the signature and parsed the event.
 * 1. the reference must name one of our deposits (else UNKNOWN_REFERENCE); a webhook id received
 *    before is DUPLICATE_WEBHOOK without asking the on-ramp;
 * 2. the event is confirmed with the on-ramp's order (`getOrder(ramp_payment_id)`; unreachable:
 *    503 PROVIDER_UNAVAILABLE, nothing recorded, the sender retries): the order must exist, carry
 *    the deposit's reference, currency and amount, the treasury as destination, the ramp id the
 *    deposit recorded (if any), the event's status (`completed`: COMPLETED, or REVERSED after a
 *    completion; `reversed`: REVERSED; `failed`: FAILED), and every value the event carries
 *    (usdc_amount, transfer_tx_hash) must equal the order's. Else MISMATCH: alarm logged, the
 *    webhook id remembered, nothing changed;
 * 3. `completed`: the on-ramp's USDC amount and id are recorded (PROCESSING — or FAILED after a lost
 *    create answer — → PROCESSING) and the vault deposit `VAULT_DEPOSIT` is requested from the
 *    single ledger writer (id `<payment_id>-deposit`, stored once); `vaultDepositConfirmed` then
 *    completes the deposit;
 *    `reversed`: the completion is recorded first if it was not (events may come in any order),
 *    then `reversed_at`; a COMPLETED deposit gets its `VAULT_REVERSE_DEPOSIT` (its shares) requested
 *    at once, a deposit whose vault write is not mined yet gets it from `vaultDepositConfirmed`;
 *    `failed`: a PROCESSING deposit without delivered USDC becomes FAILED.
 * Every effect is conditional and every request keyed, so an event delivered twice (even with
 * another webhook id) changes nothing more. Answers 200 `{received: true, outcome}` except the 503.
 */
export async function applyOnRampWebhook(
  deps: DepositDeps,
  input: { webhookId: string; event: OnRampEvent },
): Promise<{ received: true; outcome: OnRampWebhookOutcome }> {
  const { event } = input;
  const deposit = isDepositId(event.data.reference) ? await deps.deposits.get(event.data.reference) : null;
  if (!deposit) {
    logger.error('on-ramp webhook for an unknown reference', {
      reference: event.data.reference,
      ramp_payment_id: event.data.ramp_payment_id,
    });
    return { received: true, outcome: 'UNKNOWN_REFERENCE' };
  }
  if (await deps.receipts.hasWebhook(ONRAMP_WEBHOOK_SOURCE, input.webhookId)) return { received: true, outcome: 'DUPLICATE_WEBHOOK' };
  const order = await onRampOrder(deps.onRamp, event.data.ramp_payment_id);
  const problems = disagreements(event, order, deposit, await deps.treasury());
  const at = deps.now().toISOString();
  if (!order || problems.length) {
    logger.error('on-ramp webhook not confirmed by the on-ramp; not applied', {
      alarm: ONRAMP_MISMATCH_ALARM,
      problems,
      webhook_id: input.webhookId,
      type: event.type,
      payment_id: deposit.payment_id,
      deposit_status: deposit.status,
      webhook_ramp_payment_id: event.data.ramp_payment_id,
      onramp_status: order?.status ?? null,
      onramp_reference: order?.reference ?? null,
    });
    const first = await deps.receipts.claimWebhook(ONRAMP_WEBHOOK_SOURCE, input.webhookId, at);
    return { received: true, outcome: first ? 'MISMATCH' : 'DUPLICATE_WEBHOOK' };
  }

  let outcome: OnRampWebhookOutcome;
  if (event.type === 'onramp.order.failed') {
    const moved =
      deposit.amount_usd_micro === 0 &&
      (await deps.deposits.transition(
        deposit.payment_id,
        ['PROCESSING'],
        'FAILED',
        { failure_reason: `ONRAMP_FAILED: ${order.failure_reason ?? 'order failed'}`.slice(0, 1000) },
        at,
      ));
    outcome = moved ? 'APPLIED' : 'IGNORED';
  } else {
    const recorded = await recordCompletion(deps, deposit, order, at);
    if (event.type === 'onramp.order.completed') outcome = recorded ? 'APPLIED' : 'IGNORED';
    else outcome = (await recordReversal(deps, deposit.payment_id, order.reversed_at ?? at, at)) ? 'APPLIED' : 'IGNORED';
  }
  await deps.receipts.claimWebhook(ONRAMP_WEBHOOK_SOURCE, input.webhookId, at);
  if (outcome === 'IGNORED')
    logger.info('on-ramp webhook changed nothing', { payment_id: deposit.payment_id, type: event.type, status: deposit.status });
  return { received: true, outcome };
}

/**
 * Records the on-ramp's delivery on a PROCESSING (or FAILED) deposit and requests the vault
 * deposit. @returns false when the deposit is already past that (COMPLETED, REFUNDED)
 */
async function recordCompletion(deps: DepositDeps, deposit: Deposit, order: OnRampOrder, at: string): Promise<boolean> {
  const moved = await deps.deposits.transition(
    deposit.payment_id,
    ['PROCESSING', 'FAILED'],
    'PROCESSING',
    {
      ramp_payment_id: order.ramp_payment_id,
      amount_usd_micro: order.usdc_amount_usd_micro,
      failure_reason: undefined,
    },
    at,
  );
  if (!moved) return false;
  await deps.vaultWrites.request(
    depositWriteId(deposit.payment_id),
    { kind: 'VAULT_DEPOSIT', ref: deposit.payment_id, mfiId: deposit.mfi_id, assetsUsdMicro: BigInt(order.usdc_amount_usd_micro) },
    at,
  );
  return true;
}

/**
 * Remembers the on-ramp's reversal on the deposit (PROCESSING or COMPLETED) and, once the deposit
 * is COMPLETED, requests the vault reversal. @returns false when there was nothing to do (REFUNDED)
 */
async function recordReversal(deps: DepositDeps, paymentId: string, reversedAt: string, at: string): Promise<boolean> {
  const marked =
    (await deps.deposits.transition(paymentId, ['PROCESSING'], 'PROCESSING', { reversed_at: reversedAt }, at)) ||
    (await deps.deposits.transition(paymentId, ['COMPLETED'], 'COMPLETED', { reversed_at: reversedAt }, at));
  if (!marked) return false;
  await requestReversalIfCompleted(deps, paymentId, at);
  return true;
}

/** The vault reversal of a COMPLETED deposit whose on-ramp order was reversed (keyed: asking twice is a no-op). */
async function requestReversalIfCompleted(
  deps: Pick<DepositDeps, 'deposits' | 'vaultWrites'>,
  paymentId: string,
  at: string,
): Promise<void> {
  const d = await deps.deposits.get(paymentId);
  if (d?.status !== 'COMPLETED' || !d.reversed_at || d.vault_shares_issued === undefined) return;
  await deps.vaultWrites.request(
    reversalWriteId(paymentId),
    { kind: 'VAULT_REVERSE_DEPOSIT', ref: paymentId, mfiId: d.mfi_id, shares: BigInt(d.vault_shares_issued) },
    at,
  );
}

/** The on-ramp's order; any failure to get a readable answer is ProviderUnavailableError (503, the sender retries). */
async function onRampOrder(onRamp: OnRamp, rampPaymentId: string): Promise<OnRampOrder | null> {
  try {
    return await onRamp.getOrder(rampPaymentId);
  } catch (err) {
    if (err instanceof ProviderUnavailableError) throw err;
    logger.error('on-ramp webhook: the order could not be read', { ramp_payment_id: rampPaymentId, error: err as Error });
    throw new ProviderUnavailableError('The fiat on-ramp could not confirm the event; nothing was recorded, retry.', err);
  }
}

/** Why `order` does not confirm `event` for `deposit` (empty when it does). */
function disagreements(event: OnRampEvent, order: OnRampOrder | null, deposit: Deposit, treasury: Hex): string[] {
  if (!order) return ['no order at the on-ramp with that ramp_payment_id'];
  const d = event.data;
  const out: string[] = [];
  const want: Record<OnRampEvent['type'], OnRampOrder['status'][]> = {
    'onramp.order.completed': ['COMPLETED', 'REVERSED'],
    'onramp.order.reversed': ['REVERSED'],
    'onramp.order.failed': ['FAILED'],
  };
  if (!want[event.type].includes(order.status)) out.push(`on-ramp order is ${order.status}, event is ${event.type}`);
  if (event.type !== 'onramp.order.failed' && !(order.completed_at && order.usdc_amount_usd_micro > 0))
    out.push('on-ramp order has no completed delivery');
  if (order.reference !== deposit.payment_id) out.push('on-ramp order reference differs from the deposit');
  if (deposit.ramp_payment_id && deposit.ramp_payment_id !== order.ramp_payment_id)
    out.push('on-ramp order differs from the order recorded on the deposit');
  if (order.source_currency !== deposit.source_currency || order.source_amount !== deposit.source_amount)
    out.push('on-ramp order source differs from the deposit');
  if (order.destination_address.toLowerCase() !== treasury.toLowerCase()) out.push('on-ramp order destination is not the treasury');
  if (d.source_currency != null && d.source_currency !== order.source_currency) out.push("source_currency differs from the on-ramp's");
  if (d.source_amount != null && d.source_amount !== order.source_amount) out.push("source_amount differs from the on-ramp's");
  if (d.usdc_amount != null && event.type !== 'onramp.order.failed' && !sameMicro(d.usdc_amount, order.usdc_amount_usd_micro))
    out.push("usdc_amount differs from the on-ramp's");
  if (d.transfer_tx_hash != null && d.transfer_tx_hash !== (order.transfer_tx_hash ?? null))
    out.push("transfer_tx_hash differs from the on-ramp's");
  return out;
}

/** Whether the decimal USDC string equals `micro` exactly. */
function sameMicro(decimal: string, micro: number): boolean {
  const m = /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(decimal);
  return !!m && Number(m[1]) * 1_000_000 + Number((m[2] ?? '').padEnd(6, '0')) === micro;
}

// ------------------------------------------------------------------ the ledger writer's callbacks

/**
 * Called by the ledger writer when the deposit's `VAULT_DEPOSIT` write is mined: PROCESSING →
 * COMPLETED with `chain_tx_hash`, `vault_shares_issued` (the shares minted, as a decimal string)
 * and `completed_at` (conditional: a second call changes nothing). When the on-ramp reversed the
 * order meanwhile (`reversed_at`), the vault reversal is requested now.
 */
export async function vaultDepositConfirmed(
  deps: Pick<DepositDeps, 'deposits' | 'vaultWrites' | 'now'>,
  input: { payment_id: string; tx_hash: string; shares: bigint },
): Promise<void> {
  const at = deps.now().toISOString();
  await deps.deposits.transition(
    input.payment_id,
    ['PROCESSING'],
    'COMPLETED',
    { chain_tx_hash: input.tx_hash, vault_shares_issued: input.shares.toString(), completed_at: at },
    at,
  );
  await requestReversalIfCompleted(deps, input.payment_id, at);
}

/** Called by the ledger writer when the `VAULT_REVERSE_DEPOSIT` write is mined: COMPLETED → REFUNDED with `refund_tx_hash`, `refunded_at` (conditional). */
export async function vaultReversalConfirmed(
  deps: Pick<DepositDeps, 'deposits' | 'now'>,
  input: { payment_id: string; tx_hash: string; shares: bigint },
): Promise<void> {
  const at = deps.now().toISOString();
  const moved = await deps.deposits.transition(
    input.payment_id,
    ['COMPLETED'],
    'REFUNDED',
    { refund_tx_hash: input.tx_hash, refunded_at: at },
    at,
  );
  if (!moved)
    logger.info('vault reversal confirmed for a deposit not COMPLETED; nothing changed', {
      payment_id: input.payment_id,
      shares: input.shares.toString(),
    });
}

// ------------------------------------------------------------------ the vault

/**
 * The vault's figures for GET /mfi/vault (micro-USDC and raw on-chain share units), the portfolio
 * at risk, with the MFI's own position for an MFI token.
 */
export interface VaultSummary {
  state: VaultState;
  apr: string;
  /** Principal of ACTIVE loans 30 or more days past due (PAR30), micro-USDC. */
  par30_usd_micro: number;
  position?: { shares: bigint; value_usd_micro: bigint };
}

/**
 * GET /mfi/vault (MFI, ADMIN): the vault's state (written-off principal included), PAR30 from the
 * loans by due date, and, for an MFI token, its own shares and their value.
 * Errors: INSUFFICIENT_PERMISSIONS (403), LEDGER_UNAVAILABLE (503).
 */
export async function readVault(
  deps: { vault: VaultReader; apr: string; loans: Pick<LoanStore, 'activeDueBy'>; now: () => Date },
  caller: Caller,
): Promise<VaultSummary> {
  if (caller.role !== 'MFI' && caller.role !== 'ADMIN')
    throw new DomainError('INSUFFICIENT_PERMISSIONS', 'The vault is shown to MFI and ADMIN tokens.');
  const now = deps.now();
  const [state, position, atRisk] = await Promise.all([
    deps.vault.state(),
    caller.role === 'MFI' && caller.mfi_id ? deps.vault.mfiPosition(caller.mfi_id) : Promise.resolve(undefined),
    deps.loans.activeDueBy(dueByForDaysPastDue(PAR_DAYS_PAST_DUE, now)),
  ]);
  return { state, apr: deps.apr, par30_usd_micro: par30UsdMicro(atRisk, now), ...(position ? { position } : {}) };
}
