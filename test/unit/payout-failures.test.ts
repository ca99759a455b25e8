import { ProviderRejectedError } from '../../shared/domain/errors';
import { FAILURE_REASONS, isRetryableFailure, type PayoutFailure } from '../../shared/domain/payout-failures';
import type { ProviderOrder } from '../../shared/domain/ports/payouts';
import { providerFailure } from '../../shared/adapters/payout-provider/http-payout-provider';
import { checkPayoutAttempt, runPayoutAttempt } from '../../shared/use-cases/payouts';
import { aPayout, fakePayoutProvider, fakePayoutStore, fakePayoutWorkflow } from './support/fakes';

/** Normalised payout failures (docs/api/payouts.md#failure-reasons): mapping, and which ones are retried. */

const NOW = new Date('2026-11-22T12:00:00.000Z');
const ID = 'PAY-2026-000001-01';

function failedOrder(ref: string, failure: PayoutFailure): ProviderOrder {
  return {
    order_id: `o-${ref}`,
    reference: ref,
    status: 'FAILED',
    amount_usd_micro: 10_000_000,
    amount_ugx: 37_002,
    exchange_rate: '3700.25',
    recipient: { phone: '+256700000008', name: 'Joseph Wamala' },
    failure,
    created_at: NOW.toISOString(),
  };
}

describe('normalised failure reasons', () => {
  it('retries only a provider error and a short merchant balance', () => {
    expect(FAILURE_REASONS.filter(isRetryableFailure)).toEqual(['INSUFFICIENT_BALANCE', 'PROVIDER_ERROR']);
    expect(isRetryableFailure(undefined)).toBe(true);
  });

  it("maps the provider's codes; any other code is PROVIDER_ERROR", () => {
    expect(providerFailure('INVALID_MSISDN: the number is not registered for mobile money')).toEqual({
      reason: 'INVALID_MSISDN',
      detail: 'INVALID_MSISDN: the number is not registered for mobile money',
    });
    expect(providerFailure('INSUFFICIENT_FUNDS: merchant balance too low').reason).toBe('INSUFFICIENT_BALANCE');
    expect(providerFailure('RECIPIENT_LIMIT_EXCEEDED: daily limit').reason).toBe('WALLET_LIMIT_EXCEEDED');
    expect(providerFailure('RECIPIENT_NAME_MISMATCH').reason).toBe('RECIPIENT_NAME_MISMATCH');
    expect(providerFailure('MOBILE_NETWORK_TIMEOUT: no confirmation').reason).toBe('PROVIDER_ERROR');
    expect(providerFailure('wallet closed').reason).toBe('PROVIDER_ERROR');
  });
});

describe('checkPayoutAttempt with a failed order', () => {
  function world(payoutFailure: PayoutFailure | undefined, orderFailure: PayoutFailure) {
    const calls: string[] = [];
    const deps = {
      now: () => NOW,
      payouts: fakePayoutStore({
        get: async () =>
          payoutFailure
            ? aPayout({ status: 'FAILED', attempt: 1, failure_reason: payoutFailure.reason, last_failure_reason: payoutFailure.detail })
            : aPayout({ status: 'PROCESSING', attempt: 1 }),
        recordFailure: async (_p, attempt, f) => {
          calls.push(`failure A${attempt} ${f.reason}`);
          return 'APPLIED';
        },
        scheduleRetry: async (p, retry) => {
          calls.push(`retry ${retry}`);
          return p;
        },
      }),
      provider: fakePayoutProvider({ findOrderByReference: async (ref) => failedOrder(ref, orderFailure) }),
    };
    return { deps, calls };
  }

  it('an invalid number (recorded by the webhook) goes to manual review at once, no retry scheduled', async () => {
    const w = world({ reason: 'INVALID_MSISDN', detail: 'INVALID_MSISDN: x' }, { reason: 'INVALID_MSISDN', detail: 'INVALID_MSISDN: x' });
    expect(await checkPayoutAttempt(w.deps, { payout_id: ID, attempt: 1 })).toEqual({ outcome: 'EXHAUSTED' });
    expect(w.calls).toEqual([]);
  });

  it('an invalid number found at the check (no webhook) is recorded with its reason and not retried', async () => {
    const w = world(undefined, { reason: 'INVALID_MSISDN', detail: 'INVALID_MSISDN: x' });
    expect(await checkPayoutAttempt(w.deps, { payout_id: ID, attempt: 1 })).toEqual({ outcome: 'EXHAUSTED' });
    expect(w.calls).toEqual(['failure A1 INVALID_MSISDN']);
  });

  it.each(['RECIPIENT_NAME_MISMATCH', 'WALLET_LIMIT_EXCEEDED'] as const)('%s is not retried', async (reason) => {
    const w = world({ reason, detail: reason }, { reason, detail: reason });
    expect(await checkPayoutAttempt(w.deps, { payout_id: ID, attempt: 1 })).toEqual({ outcome: 'EXHAUSTED' });
    expect(w.calls).toEqual([]);
  });

  it.each(['PROVIDER_ERROR', 'INSUFFICIENT_BALANCE'] as const)('%s is retried (RETRY_1)', async (reason) => {
    const w = world(undefined, { reason, detail: reason });
    expect(await checkPayoutAttempt(w.deps, { payout_id: ID, attempt: 1 })).toEqual({ outcome: 'RETRY' });
    expect(w.calls).toEqual([`failure A1 ${reason}`, 'retry 1']);
  });
});

describe('runPayoutAttempt with a rejected order', () => {
  it("records the adapter's normalised reason with the provider's words and fails the task", async () => {
    const calls: string[] = [];
    await runPayoutAttempt(
      {
        now: () => NOW,
        payouts: fakePayoutStore({
          get: async () => aPayout({ status: 'RETRY_1', attempt: 1 }),
          registerAttempt: async () => null,
          recordFailure: async (_p, attempt, f) => {
            calls.push(`failure A${attempt} ${f.reason} ${f.detail}`);
            return 'APPLIED';
          },
        }),
        provider: fakePayoutProvider({
          createOrder: async () => {
            throw new ProviderRejectedError('WALLET_LIMIT_EXCEEDED: monthly limit', 'WALLET_LIMIT_EXCEEDED');
          },
        }),
        workflow: fakePayoutWorkflow({
          fail: async (token, error, cause) => {
            calls.push(`fail ${token} ${error} ${cause}`);
          },
        }),
      },
      { payout_id: ID, attempt: 2, task_token: 'tok' },
    );
    expect(calls).toEqual([
      'failure A2 WALLET_LIMIT_EXCEEDED WALLET_LIMIT_EXCEEDED: monthly limit',
      'fail tok OrderFailed WALLET_LIMIT_EXCEEDED: monthly limit',
    ]);
  });
});

describe('runPayoutAttempt: the recipient name check before each order', () => {
  it('another holder: RECIPIENT_NAME_MISMATCH recorded, no order, the task failed', async () => {
    const calls: string[] = [];
    await runPayoutAttempt(
      {
        now: () => NOW,
        payouts: fakePayoutStore({
          get: async () => aPayout({ status: 'RETRY_1', attempt: 1, recipient_name: 'Joseph Wamala' }),
          registerAttempt: async () => null,
          recordFailure: async (_p, attempt, f) => {
            calls.push(`failure A${attempt} ${f.reason}`);
            return 'APPLIED';
          },
        }),
        provider: fakePayoutProvider({ lookupAccountHolder: async () => ({ found: true, name: 'Grace Nakato' }) }),
        workflow: fakePayoutWorkflow({
          fail: async (_t, error) => {
            calls.push(`fail ${error}`);
          },
        }),
      },
      { payout_id: ID, attempt: 2, task_token: 'tok' },
    );
    expect(calls).toEqual(['failure A2 RECIPIENT_NAME_MISMATCH', 'fail OrderFailed']);
  });
});
