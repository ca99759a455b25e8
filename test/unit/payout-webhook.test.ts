import { ProviderUnavailableError } from '../../shared/domain/errors';
import type { ProviderOrder, SettlementFacts } from '../../shared/domain/ports/payouts';
import type { Payout } from '../../shared/domain/records';
import { logger } from '../../shared/runtime/logger';
import { applyPayoutWebhook, type PayoutProviderEvent, type PayoutWebhookDeps } from '../../shared/use-cases/payout-webhook';
import { domainErrorOf, onTheWire } from './support/errors';
import { aPayout, fakePayoutProvider, fakePayoutStore, fakePayoutWorkflow, fakeWebhookReceiptStore } from './support/fakes';

/**
 * POST /api/webhooks/payout-provider after the signature check (issue 9 defect 4): a signed event
 * is a claim, not a fact. The provider's own order (looked up by our reference) decides; the
 * webhook's numbers are never stored; a disagreement changes nothing but the webhook receipt.
 */

const NOW = new Date('2026-11-22T10:00:00.000Z');
const processing = aPayout({ status: 'PROCESSING', provider_order_id: 'ord_real', task_token: 'tok-1', task_token_attempt: 1 });
const REF = `${processing.payment_id}-A1`;

/** The provider's order for attempt 1 of `processing`: settled, 10 USD at 3,700.25 → 37,002 UGX. */
function providerOrder(over: Partial<ProviderOrder> = {}): ProviderOrder {
  return {
    order_id: 'ord_real',
    reference: REF,
    status: 'SETTLED',
    amount_usd_micro: 10_000_000,
    amount_ugx: 37_002,
    exchange_rate: '3700.25',
    recipient: { phone: processing.phone, name: processing.recipient_name },
    mobile_money_transaction_id: 'MP1234567890',
    settled_at: '2026-11-22T09:59:58.000Z',
    created_at: '2026-11-22T09:59:50.000Z',
    ...over,
  };
}

function genuineSettled(over: Partial<PayoutProviderEvent['data']> = {}): PayoutProviderEvent {
  return {
    type: 'order.settled',
    data: {
      order_id: 'ord_real',
      reference: REF,
      amount_ugx: 37_002,
      exchange_rate: '3700.25',
      mobile_money_transaction_id: 'MP1234567890',
      settled_at: '2026-11-22T09:59:58.000Z',
      failure_reason: null,
      ...over,
    },
  };
}

/** The reported attack: signed, our reference, another order id and made-up numbers. */
const forged: PayoutProviderEvent = {
  type: 'order.settled',
  data: {
    order_id: 'ord_forged',
    reference: REF,
    amount_ugx: 1,
    exchange_rate: '0.1',
    mobile_money_transaction_id: 'MPFAKE',
    settled_at: '1999-01-01T00:00:00.000Z',
  },
};

function world(opts: { payout?: Payout; order?: () => Promise<ProviderOrder | null>; seen?: boolean } = {}) {
  const calls: string[] = [];
  const settlements: SettlementFacts[] = [];
  let payout = opts.payout ?? processing;
  const deps: PayoutWebhookDeps = {
    now: () => NOW,
    payouts: fakePayoutStore({
      get: async (id) => (id === payout.payment_id ? payout : null),
      recordSettlement: async (p, s, at, webhook) => {
        calls.push(`settle ${p.payment_id} ${webhook?.source}#${webhook?.id}`);
        settlements.push(s);
        payout = {
          ...payout,
          status: 'COMPLETED',
          amount_ugx: s.amount_ugx,
          exchange_rate: s.exchange_rate,
          provider_order_id: s.order_id,
          settled_at: s.settled_at,
          completed_at: at,
        };
        return 'APPLIED';
      },
      recordFailure: async (p, attempt, failure, _at, webhook) => {
        calls.push(`fail ${p.payment_id} A${attempt} ${failure.reason} ${failure.detail} ${webhook?.source}#${webhook?.id}`);
        payout = { ...payout, status: 'FAILED', last_failure_reason: failure.detail, failure_reason: failure.reason };
        return 'APPLIED';
      },
    }),
    provider: fakePayoutProvider({
      findOrderByReference: async (ref) => {
        calls.push(`lookup ${ref}`);
        return (opts.order ?? (async () => providerOrder()))();
      },
    }),
    receipts: fakeWebhookReceiptStore({
      hasWebhook: async (source, id) => {
        calls.push(`seen? ${source}#${id}`);
        return opts.seen ?? false;
      },
      claimWebhook: async (source, id) => {
        calls.push(`receipt ${source}#${id}`);
        return true;
      },
    }),
    workflow: fakePayoutWorkflow({
      resume: async (token, output) => {
        calls.push(`resume ${token} ${JSON.stringify(output)}`);
      },
      fail: async (token, error) => {
        calls.push(`workflow-fail ${token} ${error}`);
      },
    }),
  };
  return { deps, calls, settlements, payout: () => payout };
}

describe('applyPayoutWebhook: the provider confirms before anything is applied', () => {
  let errors: jest.SpyInstance;
  beforeEach(() => {
    errors = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => errors.mockRestore());

  it('does not apply the reported forgery (other order id, 1 UGX, rate 0.1, 1999): MISMATCH, payout unchanged, alarm logged', async () => {
    const w = world();
    const r = await applyPayoutWebhook(w.deps, { webhookId: 'msg_forged', event: forged });
    expect(r).toEqual({ received: true, outcome: 'MISMATCH' });
    expect(w.payout()).toBe(processing);
    expect(w.calls).toEqual([`seen? payout-provider#msg_forged`, `lookup ${REF}`, 'receipt payout-provider#msg_forged']);
    expect(errors).toHaveBeenCalledWith(
      expect.any(String),
      expect.objectContaining({
        alarm: 'FORGED_OR_MISMATCHED_WEBHOOK',
        payout_id: processing.payment_id,
        webhook_order_id: 'ord_forged',
        provider_order_id: 'ord_real',
      }),
    );
  });

  it.each([
    ['amount_ugx', { amount_ugx: 1 }],
    ['exchange_rate', { exchange_rate: '0.1' }],
    ['settled_at', { settled_at: '1999-01-01T00:00:00.000Z' }],
    ['mobile_money_transaction_id', { mobile_money_transaction_id: 'MPFAKE' }],
  ])('does not apply an event naming the right order with a forged %s', async (_field, over) => {
    const w = world();
    const r = await applyPayoutWebhook(w.deps, { webhookId: 'msg_x', event: genuineSettled(over) });
    expect(r.outcome).toBe('MISMATCH');
    expect(w.payout()).toBe(processing);
    expect(w.calls.filter((c) => c.startsWith('settle') || c.startsWith('resume'))).toEqual([]);
  });

  it('does not apply a settlement the provider has not made (order still PENDING, FAILED or unknown)', async () => {
    for (const order of [
      providerOrder({ status: 'PENDING', settled_at: undefined, mobile_money_transaction_id: undefined }),
      providerOrder({ status: 'FAILED', failure: { reason: 'PROVIDER_ERROR', detail: 'x' } }),
      null,
    ]) {
      const w = world({ order: async () => order });
      const r = await applyPayoutWebhook(w.deps, { webhookId: 'msg_early', event: genuineSettled() });
      expect(r.outcome).toBe('MISMATCH');
      expect(w.payout()).toBe(processing);
    }
  });

  it("does not apply an order whose USD amount is not the payout's, nor one unlike the recorded order of the attempt", async () => {
    for (const [order, payout] of [
      [providerOrder({ amount_usd_micro: 9_000_000 }), processing],
      [providerOrder(), { ...processing, provider_order_id: 'ord_other' }],
    ] as const) {
      const w = world({ order: async () => order, payout });
      expect((await applyPayoutWebhook(w.deps, { webhookId: 'm', event: genuineSettled() })).outcome).toBe('MISMATCH');
      expect(w.payout()).toBe(payout);
    }
  });

  it("applies a genuine settlement with the provider's values and resumes the waiting attempt", async () => {
    const w = world();
    // The sender's representation may differ (rate as a number, settled_at without millis): same values.
    const r = await applyPayoutWebhook(w.deps, {
      webhookId: 'msg_real',
      event: genuineSettled({ exchange_rate: 3700.25, settled_at: '2026-11-22T09:59:58Z' }),
    });
    expect(r).toEqual({ received: true, outcome: 'APPLIED' });
    expect(w.settlements).toEqual([
      {
        attempt: 1,
        order_id: 'ord_real',
        amount_ugx: 37_002,
        exchange_rate: '3700.25',
        mobile_money_transaction_id: 'MP1234567890',
        settled_at: '2026-11-22T09:59:58.000Z',
      },
    ]);
    expect(w.calls).toEqual([
      'seen? payout-provider#msg_real',
      `lookup ${REF}`,
      `settle ${processing.payment_id} payout-provider#msg_real`,
      'resume tok-1 {"status":"COMPLETED","provider_order_id":"ord_real"}',
    ]);
    expect(errors).not.toHaveBeenCalled();
  });

  it("applies a genuine settlement that carries no numbers, with the provider's", async () => {
    const w = world();
    const r = await applyPayoutWebhook(w.deps, {
      webhookId: 'msg_bare',
      event: { type: 'order.settled', data: { order_id: 'ord_real', reference: REF } },
    });
    expect(r.outcome).toBe('APPLIED');
    expect(w.settlements[0]).toMatchObject({ amount_ugx: 37_002, exchange_rate: '3700.25', settled_at: '2026-11-22T09:59:58.000Z' });
  });

  it('answers 503 PROVIDER_UNAVAILABLE and records nothing (no receipt) when the provider cannot be asked', async () => {
    for (const failure of [new ProviderUnavailableError(), new Error('Unexpected payout provider response: order is not an object')]) {
      const w = world({
        order: async () => {
          throw failure;
        },
      });
      const err = await domainErrorOf(applyPayoutWebhook(w.deps, { webhookId: 'msg_real', event: genuineSettled() }));
      expect([onTheWire(err).status, err.code]).toEqual([503, 'PROVIDER_UNAVAILABLE']);
      expect(w.calls).toEqual(['seen? payout-provider#msg_real', `lookup ${REF}`]);
      expect(w.payout()).toBe(processing);
    }
  });

  it('does not record a forged failure (the provider says SETTLED or PENDING): no retry that could pay twice', async () => {
    for (const order of [providerOrder(), providerOrder({ status: 'PENDING', settled_at: undefined })]) {
      const w = world({ order: async () => order });
      const r = await applyPayoutWebhook(w.deps, {
        webhookId: 'msg_ff',
        event: { type: 'order.failed', data: { order_id: 'ord_real', reference: REF, failure_reason: 'forged' } },
      });
      expect(r.outcome).toBe('MISMATCH');
      expect(w.calls.filter((c) => c.startsWith('fail') || c.startsWith('workflow-fail'))).toEqual([]);
      expect(w.payout()).toBe(processing);
    }
  });

  it("records a failure the provider confirms, with the provider's reason, and fails the waiting attempt", async () => {
    const w = world({
      order: async () =>
        providerOrder({
          status: 'FAILED',
          settled_at: undefined,
          mobile_money_transaction_id: undefined,
          failure: { reason: 'INVALID_MSISDN', detail: 'INVALID_MSISDN: not a wallet' },
        }),
    });
    const r = await applyPayoutWebhook(w.deps, {
      webhookId: 'msg_f',
      event: { type: 'order.failed', data: { order_id: 'ord_real', reference: REF, failure_reason: 'whatever the sender says' } },
    });
    expect(r.outcome).toBe('APPLIED');
    expect(w.calls.slice(2)).toEqual([
      `fail ${processing.payment_id} A1 INVALID_MSISDN INVALID_MSISDN: not a wallet payout-provider#msg_f`,
      'workflow-fail tok-1 OrderFailed',
    ]);
  });

  it('answers a replayed webhook id without asking the provider', async () => {
    const w = world({ seen: true });
    const r = await applyPayoutWebhook(w.deps, { webhookId: 'msg_forged', event: forged });
    expect(r.outcome).toBe('DUPLICATE_WEBHOOK');
    expect(w.calls).toEqual(['seen? payout-provider#msg_forged']);
  });

  it('acknowledges an unknown reference without asking the provider', async () => {
    const w = world();
    const r = await applyPayoutWebhook(w.deps, { webhookId: 'm', event: genuineSettled({ reference: 'PAY-2026-999999-01-A1' }) });
    expect(r.outcome).toBe('UNKNOWN_REFERENCE');
    expect(w.calls).toEqual([]);
  });
});
