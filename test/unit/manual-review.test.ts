/**
 * Closing manual reviews (docs/api/payouts.md#manual-review): POST /payments/farmer-payout/{id}/resolve (use case
 * resolveFarmerPayout), PATCH /farmers/{id} (updateFarmerPhone), the round numbering of attempts
 * in the payout lifecycle, the request schemas and the views.
 */
import * as v from 'valibot';
import { maskPhone } from '../../shared/domain/masking';
import type { Caller } from '../../shared/domain/caller';
import { PayoutTransitionRejected } from '../../shared/domain/errors';
import { allowedFrom, attemptNumber, attemptStep, MAX_RESOLUTION_ROUNDS, roundOf, transition } from '../../shared/domain/payout-lifecycle';
import type { Payout } from '../../shared/domain/records';
import { ResolvePayoutSchema, UpdateFarmerSchema } from '../../shared/http/manual-review-schemas';
import { farmerView, paymentRecordView, payoutStatusView } from '../../shared/http/views';
import { updateFarmerPhone } from '../../shared/use-cases/farmer-updates';
import { resolveFarmerPayout, type ManualReviewDeps } from '../../shared/use-cases/manual-review';
import { checkPayoutAttempt } from '../../shared/use-cases/payouts';
import { reconcilePayouts } from '../../shared/use-cases/reconcile';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { StepFunctionsPayoutWorkflow } from '../../shared/adapters/aws/payout-workflow';
import { domainErrorOf, onTheWire } from './support/errors';
import {
  aFarmer,
  aPayout,
  fakeBatchStore,
  fakeFarmerPhoneStore,
  fakePayoutProvider,
  fakePayoutResolutionStore,
  fakePayoutStore,
  fakePayoutWorkflow,
  fakeRegistryStore,
  aCooperative,
  fakeNotifier,
} from './support/fakes';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const manager: Caller = { sub: 'mgr-1', role: 'COOPERATIVE', cooperative_id: 'COOP-1', duties: ['MANAGER'] };
const admin: Caller = { sub: 'admin-1', role: 'ADMIN', duties: [] };
const inReview = aPayout({
  status: 'MANUAL_REVIEW',
  attempt: 4,
  retry_count: 3,
  phone: '+256700000001',
  manager_notified_at: '2026-11-22T09:10:00.000Z',
});
const cash = { resolution: 'PAID_IN_CASH' as const, receipt_number: 'RCPT/2026/0042', paid_at: '2026-11-22T11:30:00Z' };

function world(payout: Payout | null = inReview, farmer = aFarmer({ phone: '+256772999888' })) {
  const calls: string[] = [];
  const deps: ManualReviewDeps = {
    now: () => NOW,
    payouts: fakePayoutStore({ get: async (id) => (payout && id === payout.payment_id ? payout : null) }),
    resolutions: fakePayoutResolutionStore({
      resolvePaidInCash: async (p, c, at) => {
        calls.push(`cash ${p.payment_id} ${c.receipt_number} ${c.paid_at} ${c.actor} ${at}`);
        return {
          ...p,
          status: 'COMPLETED',
          settlement_channel: 'CASH_AT_OFFICE',
          cash_receipt_number: c.receipt_number,
          cash_paid_at: c.paid_at,
          completed_at: at,
        };
      },
      resolveRetry: async (p, r) => {
        calls.push(`retry ${p.payment_id} round ${r.round} attempt ${r.attempt} ${r.phone} ${r.recipient_name} ${r.actor}`);
        return { ...p, status: 'PROCESSING', attempt: r.attempt, retry_count: 0, phone: r.phone, resolution_round: r.round };
      },
    }),
    registry: fakeRegistryStore({
      getFarmer: async (id) => (id === farmer.farmer_id ? farmer : null),
      getCooperative: async () => aCooperative({ cooperative_id: farmer.cooperative_id }),
    }),
    workflow: fakePayoutWorkflow({
      start: async (id, round) => {
        calls.push(`start ${id} ${round}`);
      },
    }),
  };
  return { deps, calls };
}

describe('resolveFarmerPayout: PAID_IN_CASH', () => {
  it('closes the payout as paid at the office: one conditional write with the receipt, paid_at normalised, the caller as actor', async () => {
    const { deps, calls } = world();
    const done = await resolveFarmerPayout(deps, manager, inReview.payment_id, cash);
    expect(done).toMatchObject({ status: 'COMPLETED', settlement_channel: 'CASH_AT_OFFICE', cash_receipt_number: 'RCPT/2026/0042' });
    expect(calls).toEqual([`cash ${inReview.payment_id} RCPT/2026/0042 2026-11-22T11:30:00.000Z mgr-1 2026-11-22T12:00:00.000Z`]);
  });

  it('a loan disbursement (DISB-…) in manual review is closed the same way', async () => {
    const disb = aPayout({
      ...inReview,
      payment_id: 'DISB-2026-000001',
      payment_type: 'LOAN_DISBURSEMENT',
      reason: 'LOAN_DISBURSEMENT',
      loan_id: 'LOAN-2026-000001',
    });
    const { deps, calls } = world(disb);
    expect(await resolveFarmerPayout(deps, manager, 'DISB-2026-000001', cash)).toMatchObject({
      status: 'COMPLETED',
      settlement_channel: 'CASH_AT_OFFICE',
    });
    expect(calls).toEqual([`cash DISB-2026-000001 RCPT/2026/0042 2026-11-22T11:30:00.000Z mgr-1 2026-11-22T12:00:00.000Z`]);
  });

  it("ADMIN may resolve any cooperative's payout", async () => {
    const { deps, calls } = world();
    await resolveFarmerPayout(deps, admin, inReview.payment_id, cash);
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['in the future', '2026-11-22T12:00:01Z'],
    ['before the payout was created', '2026-11-22T08:59:59Z'],
  ])('refuses paid_at %s: 400 VALIDATION_ERROR on paid_at, nothing written', async (_what, paidAt) => {
    const { deps, calls } = world();
    const err = await domainErrorOf(resolveFarmerPayout(deps, manager, inReview.payment_id, { ...cash, paid_at: paidAt }));
    expect([err.code, onTheWire(err).status]).toEqual(['VALIDATION_ERROR', 400]);
    expect(err.details).toEqual([expect.objectContaining({ path: 'paid_at' })]);
    expect(calls).toEqual([]);
  });

  it('the loser of concurrent resolutions gets 422 STAGE_OUT_OF_ORDER with the status the winner left', async () => {
    const { deps } = world();
    let reads = 0;
    deps.payouts = fakePayoutStore({ get: async () => (reads++ === 0 ? inReview : { ...inReview, status: 'COMPLETED' }) });
    deps.resolutions = fakePayoutResolutionStore({
      resolvePaidInCash: async (p) => {
        throw new PayoutTransitionRejected(p.payment_id, 'CASH_PAID');
      },
    });
    const err = await domainErrorOf(resolveFarmerPayout(deps, manager, inReview.payment_id, cash));
    expect([err.code, onTheWire(err).status]).toEqual(['STAGE_OUT_OF_ORDER', 422]);
    expect(err.details).toMatchObject({ status: 'COMPLETED', required_status: 'MANUAL_REVIEW' });
  });
});

describe('resolveFarmerPayout: RETRY', () => {
  it('re-reads the farmer and starts round 1 (attempts 5…8) to the CURRENT phone as execution round 1', async () => {
    const { deps, calls } = world();
    const retried = await resolveFarmerPayout(deps, manager, inReview.payment_id, { resolution: 'RETRY' });
    expect(retried).toMatchObject({ status: 'PROCESSING', attempt: 5, phone: '+256772999888', resolution_round: 1 });
    expect(calls).toEqual([
      `retry ${inReview.payment_id} round 1 attempt 5 +256772999888 Joseph Wamala mgr-1`,
      `start ${inReview.payment_id} 1`,
    ]);
  });

  it('a second retry continues the numbering: round 2, attempt 9', async () => {
    const { deps, calls } = world({ ...inReview, attempt: 8, resolution_round: 1 });
    await resolveFarmerPayout(deps, manager, inReview.payment_id, { resolution: 'RETRY' });
    expect(calls[0]).toContain('round 2 attempt 9');
    expect(calls[1]).toBe(`start ${inReview.payment_id} 2`);
  });

  it('a farmer without a phone: 422 PHONE_NOT_FOUND, nothing written, nothing started', async () => {
    const { deps, calls } = world(inReview, aFarmer({ phone: undefined }));
    const err = await domainErrorOf(resolveFarmerPayout(deps, manager, inReview.payment_id, { resolution: 'RETRY' }));
    expect([err.code, onTheWire(err).status]).toEqual(['PHONE_NOT_FOUND', 422]);
    expect(calls).toEqual([]);
  });

  it(`after ${MAX_RESOLUTION_ROUNDS} retries (attempt numbers must fit the reference) a RETRY is refused: 422`, async () => {
    const last = attemptNumber(MAX_RESOLUTION_ROUNDS, 4);
    expect(last).toBeLessThanOrEqual(99);
    const { deps, calls } = world({ ...inReview, attempt: last, resolution_round: MAX_RESOLUTION_ROUNDS });
    const err = await domainErrorOf(resolveFarmerPayout(deps, manager, inReview.payment_id, { resolution: 'RETRY' }));
    expect(err.code).toBe('STAGE_OUT_OF_ORDER');
    expect(calls).toEqual([]);
  });
});

describe('resolveFarmerPayout: who and what', () => {
  it.each<[string, Caller]>([
    ['an AGENT', { sub: 'a', role: 'AGENT', cooperative_id: 'COOP-1', duties: [] }],
    ['a COOPERATIVE without MANAGER', { sub: 'q', role: 'COOPERATIVE', cooperative_id: 'COOP-1', duties: ['QUALITY_OFFICER', 'EXPORTER'] }],
    ['a MANAGER of another cooperative', { sub: 'm2', role: 'COOPERATIVE', cooperative_id: 'COOP-2', duties: ['MANAGER'] }],
    ['an MFI', { sub: 'mfi', role: 'MFI', mfi_id: 'MFI-1', duties: [] }],
  ])('%s: 403 INSUFFICIENT_PERMISSIONS, nothing written', async (_who, caller) => {
    const { deps, calls } = world();
    const err = await domainErrorOf(resolveFarmerPayout(deps, caller, inReview.payment_id, cash));
    expect([err.code, onTheWire(err).status]).toEqual(['INSUFFICIENT_PERMISSIONS', 403]);
    expect(calls).toEqual([]);
  });

  it('an unknown payout: 404 PAYMENT_NOT_FOUND', async () => {
    const { deps } = world(null);
    const err = await domainErrorOf(resolveFarmerPayout(deps, manager, 'PAY-2026-000999-01', cash));
    expect([err.code, onTheWire(err).status]).toEqual(['PAYMENT_NOT_FOUND', 404]);
  });

  it.each(['PROCESSING', 'RETRY_2', 'COMPLETED', 'FAILED'] as const)(
    'a payout in %s: 422 STAGE_OUT_OF_ORDER naming its status, for either resolution',
    async (status) => {
      const { deps, calls } = world({ ...inReview, status });
      for (const body of [cash, { resolution: 'RETRY' as const }]) {
        const err = await domainErrorOf(resolveFarmerPayout(deps, manager, inReview.payment_id, body));
        expect([err.code, onTheWire(err).status]).toEqual(['STAGE_OUT_OF_ORDER', 422]);
        expect(err.details).toMatchObject({ status });
      }
      expect(calls).toEqual([]);
    },
  );
});

describe('payout lifecycle rounds (docs/api/payouts.md#manual-review)', () => {
  it('numbers attempts across rounds: round r runs 4r+1 … 4r+4, each a step 1–4', () => {
    expect([1, 4, 5, 8, 9].map((a) => [roundOf(a), attemptStep(a)])).toEqual([
      [0, 1],
      [0, 4],
      [1, 1],
      [1, 4],
      [2, 1],
    ]);
    expect(attemptNumber(1, 1)).toBe(5);
  });

  it("a round's first attempt starts from PROCESSING (where RETRY_REQUESTED leaves it), its later ones from RETRY_n", () => {
    expect(allowedFrom({ type: 'ATTEMPT_STARTED', attempt: 5 })).toEqual(['PENDING', 'PROCESSING']);
    expect(allowedFrom({ type: 'ATTEMPT_STARTED', attempt: 6 })).toEqual(['RETRY_1']);
    expect(allowedFrom({ type: 'ATTEMPT_STARTED', attempt: 8 })).toEqual(['RETRY_3']);
  });

  it('only a payout in MANUAL_REVIEW is resolved: CASH_PAID → COMPLETED, RETRY_REQUESTED → PROCESSING', () => {
    expect(transition('MANUAL_REVIEW', { type: 'CASH_PAID' })).toEqual({ status: 'COMPLETED' });
    expect(transition('MANUAL_REVIEW', { type: 'RETRY_REQUESTED' })).toEqual({ status: 'PROCESSING' });
    for (const from of ['PENDING', 'PROCESSING', 'FAILED', 'RETRY_3', 'COMPLETED'] as const) {
      expect(transition(from, { type: 'CASH_PAID' })).toBeNull();
      expect(transition(from, { type: 'RETRY_REQUESTED' })).toBeNull();
    }
  });

  it('checkPayoutAttempt: a failed attempt 5 schedules RETRY_1 (its step), the failed attempt 8 is EXHAUSTED', async () => {
    const scheduled: number[] = [];
    const mk = (attempt: number) => ({
      now: () => NOW,
      payouts: fakePayoutStore({
        get: async () => aPayout({ status: 'FAILED', attempt, resolution_round: 1 }),
        scheduleRetry: async (p, retry) => {
          scheduled.push(retry);
          return p;
        },
      }),
      provider: fakePayoutProvider({
        findOrderByReference: async (ref) => ({
          order_id: `o-${ref}`,
          reference: ref,
          status: 'FAILED' as const,
          amount_usd_micro: 10_000_000,
          amount_ugx: 37_002,
          exchange_rate: '3700.25',
          recipient: { phone: '+256700000001', name: 'Joseph Wamala' },
          failure: { reason: 'PROVIDER_ERROR' as const, detail: 'wallet closed' },
          created_at: NOW.toISOString(),
        }),
      }),
    });
    expect(await checkPayoutAttempt(mk(5), { payout_id: 'PAY-2026-000001-01', attempt: 5 })).toEqual({ outcome: 'RETRY' });
    expect(scheduled).toEqual([1]);
    expect(await checkPayoutAttempt(mk(8), { payout_id: 'PAY-2026-000001-01', attempt: 8 })).toEqual({ outcome: 'EXHAUSTED' });
    expect(scheduled).toEqual([1]);
  });
});

describe('the execution of a resolution retry', () => {
  it('is named <payout_id>-R<round> with input {payout_id, round}; round 0 keeps the payout id and input', async () => {
    const sfn = mockClient(SFNClient);
    sfn.on(StartExecutionCommand).resolves({});
    process.env.PAYOUT_STATE_MACHINE_ARN = 'arn:aws:states:eu-west-1:1:stateMachine:m';
    const wf = new StepFunctionsPayoutWorkflow();
    await wf.start('PAY-2026-000001-01');
    await wf.start('PAY-2026-000001-01', 2);
    expect(sfn.commandCalls(StartExecutionCommand).map((c) => [c.args[0].input.name, c.args[0].input.input])).toEqual([
      ['PAY-2026-000001-01', '{"payout_id":"PAY-2026-000001-01"}'],
      ['PAY-2026-000001-01-R2', '{"payout_id":"PAY-2026-000001-01","round":2}'],
    ]);
    sfn.restore();
  });

  it('is what reconciliation (re)starts for a stale round-1 payout whose attempt 5 has no order yet; it asks for -A5', async () => {
    const calls: string[] = [];
    const stale = aPayout({ status: 'PROCESSING', attempt: 5, resolution_round: 1 });
    await reconcilePayouts(
      {
        now: () => NOW,
        payouts: fakePayoutStore({ openBefore: async () => [stale] }),
        provider: fakePayoutProvider({
          findOrderByReference: async (ref) => {
            calls.push(`ask ${ref}`);
            return null;
          },
        }),
        workflow: fakePayoutWorkflow({
          start: async (id, round) => {
            calls.push(`start ${id} ${round}`);
          },
        }),
        batches: fakeBatchStore({ awaitingPayoutBefore: async () => [] }),
        registry: fakeRegistryStore(),
      },
      { staleAfterSeconds: 300 },
    );
    expect(calls).toEqual([`ask ${stale.payment_id}-A5`, `start ${stale.payment_id} 1`]);
  });
});

describe('updateFarmerPhone (PATCH /farmers/{id})', () => {
  const farmer = aFarmer();
  function registry(over: { publish?: () => Promise<{ messageId: string }>; getFarmer?: () => Promise<typeof farmer | null> } = {}) {
    const writes: unknown[] = [];
    const published: Array<{ subject: string; message: string; attributes: Record<string, string> }> = [];
    const sms: Array<{ phone: string; message: string }> = [];
    return {
      writes,
      published,
      sms,
      store: {
        registry: fakeRegistryStore({
          getFarmer: over.getFarmer ?? (async (id) => (id === farmer.farmer_id ? farmer : null)),
          getCooperative: async () => aCooperative({ cooperative_id: farmer.cooperative_id }),
        }),
        phones: fakeFarmerPhoneStore({
          updateFarmerPhone: async (input) => {
            writes.push(input);
            return { ...farmer, phone: input.phone, phone_updated_at: input.at, updated_by: input.actor, phone_changes: [input.change] };
          },
        }),
        notifier: fakeNotifier({
          publish:
            over.publish ??
            (async (m) => {
              published.push(m);
              return { messageId: 'm-1' };
            }),
          sendSms: async (m) => {
            sms.push(m);
            return { messageId: 's-1' };
          },
        }),
      },
    };
  }
  const manager: Caller = { sub: 'mgr-1', role: 'COOPERATIVE', cooperative_id: 'COOP-1', duties: ['MANAGER'] };

  it.each<[string, Caller]>([
    ['a COOPERATIVE token with the MANAGER duty', manager],
    ['ADMIN', admin],
  ])('%s changes the phone in one conditional write with its audit entry; the view masks it and hides updated_by', async (_who, caller) => {
    const { store, writes } = registry();
    const updated = await updateFarmerPhone(store, caller, 'F-1', { phone: '+256772999888' }, NOW);
    const change = {
      at: NOW.toISOString(),
      actor: caller.sub,
      actor_role: caller.role,
      previous_phone: maskPhone(farmer.phone!),
      phone: maskPhone('+256772999888'),
    };
    expect(writes).toEqual([
      {
        farmer_id: 'F-1',
        cooperative_id: 'COOP-1',
        phone: '+256772999888',
        previous_phone: farmer.phone,
        actor: caller.sub,
        at: NOW.toISOString(),
        change,
      },
    ]);
    const view = farmerView(updated);
    expect(view.phone).not.toContain('999888');
    expect(view.phone).toMatch(/888$/);
    expect(view).toMatchObject({ phone_updated_at: NOW.toISOString(), phone_changes: [change] });
    expect(JSON.stringify(view)).not.toContain('772999888');
    expect(view).not.toHaveProperty('updated_by');
  });

  it('notifies the cooperative manager (numbers masked) and the old number by SMS', async () => {
    const { store, published, sms } = registry();
    await updateFarmerPhone(store, manager, 'F-1', { phone: '+256772999888' }, NOW);
    expect(published).toHaveLength(1);
    expect(published[0]!.attributes).toMatchObject({ cooperative_id: 'COOP-1', event: 'farmer.phone_changed', farmer_id: 'F-1' });
    expect(published[0]!.message).toContain(maskPhone(farmer.phone!));
    expect(published[0]!.message).toContain(maskPhone('+256772999888'));
    expect(published[0]!.message).not.toContain(farmer.phone!);
    expect(published[0]!.message).not.toContain('+256772999888');
    expect(sms).toEqual([expect.objectContaining({ phone: farmer.phone })]);
    expect(sms[0]!.message).toContain(maskPhone('+256772999888'));
    expect(sms[0]!.message).not.toContain('+256772999888');
  });

  it('a notice that cannot be sent does not undo the change (it is logged for an operator)', async () => {
    const { store, writes, sms } = registry({
      publish: async () => {
        throw new Error('SNS down');
      },
    });
    const updated = await updateFarmerPhone(store, manager, 'F-1', { phone: '+256772999888' }, NOW);
    expect(updated.phone).toBe('+256772999888');
    expect(writes).toHaveLength(1);
    expect(sms).toHaveLength(1);
  });

  it('the same number again: nothing written, nobody notified', async () => {
    const { store, writes, published, sms } = registry();
    await updateFarmerPhone(store, manager, 'F-1', { phone: farmer.phone! }, NOW);
    expect([writes, published, sms]).toEqual([[], [], []]);
  });

  it('a number that is not a Ugandan mobile (a Kampala landline): 400 VALIDATION_ERROR on phone', async () => {
    const { store, writes } = registry();
    const err = await domainErrorOf(updateFarmerPhone(store, admin, 'F-1', { phone: '+256414123456' }, NOW));
    expect([err.code, onTheWire(err).status]).toEqual(['VALIDATION_ERROR', 400]);
    expect(writes).toEqual([]);
  });

  it.each<[string, Caller]>([
    ['an AGENT of the cooperative', { sub: 'agent-7', role: 'AGENT', cooperative_id: 'COOP-1', duties: [] }],
    [
      'a COOPERATIVE token of the cooperative without the MANAGER duty',
      { sub: 'q', role: 'COOPERATIVE', cooperative_id: 'COOP-1', duties: ['QUALITY_OFFICER', 'WAREHOUSE_MANAGER'] },
    ],
    ['a MANAGER of another cooperative', { sub: 'x', role: 'COOPERATIVE', cooperative_id: 'COOP-2', duties: ['MANAGER'] }],
    ['an MFI', { sub: 'mfi', role: 'MFI', mfi_id: 'MFI-1', duties: [] }],
  ])('%s: 403 INSUFFICIENT_PERMISSIONS, nothing written, nobody notified', async (_who, caller) => {
    const { store, writes, published, sms } = registry();
    const err = await domainErrorOf(updateFarmerPhone(store, caller, 'F-1', { phone: '+256772999888' }, NOW));
    expect([err.code, onTheWire(err).status]).toEqual(['INSUFFICIENT_PERMISSIONS', 403]);
    expect([writes, published, sms]).toEqual([[], [], []]);
  });

  it('an unknown farmer, or one whose conditional write finds no such farmer of that cooperative: 404 FARMER_NOT_REGISTERED', async () => {
    const { store } = registry();
    expect((await domainErrorOf(updateFarmerPhone(store, admin, 'F-404', { phone: '+256772999888' }, NOW))).code).toBe(
      'FARMER_NOT_REGISTERED',
    );
    let reads = 0;
    const gone = {
      ...registry().store,
      registry: fakeRegistryStore({ getFarmer: async () => (reads++ === 0 ? farmer : null), getCooperative: async () => null }),
      phones: fakeFarmerPhoneStore({ updateFarmerPhone: async () => null }),
    };
    expect((await domainErrorOf(updateFarmerPhone(gone, admin, 'F-1', { phone: '+256772999888' }, NOW))).code).toBe(
      'FARMER_NOT_REGISTERED',
    );
  });

  it('a concurrent change of the same phone in between: 409 DUPLICATE_REQUEST, nobody notified', async () => {
    const { store, published, sms } = registry();
    const raced = { ...store, phones: fakeFarmerPhoneStore({ updateFarmerPhone: async () => null }) };
    expect((await domainErrorOf(updateFarmerPhone(raced, admin, 'F-1', { phone: '+256772999888' }, NOW))).code).toBe('DUPLICATE_REQUEST');
    expect([published, sms]).toEqual([[], []]);
  });
});

describe('request schemas and views', () => {
  it('ResolvePayoutSchema accepts the two resolutions and nothing else', () => {
    expect(v.safeParse(ResolvePayoutSchema, cash).success).toBe(true);
    expect(v.safeParse(ResolvePayoutSchema, { resolution: 'RETRY' }).success).toBe(true);
    for (const bad of [
      {},
      { resolution: 'REFUND' },
      { resolution: 'RETRY', phone: '+256772999888' },
      { resolution: 'PAID_IN_CASH' },
      { ...cash, receipt_number: '' },
      { ...cash, receipt_number: 'x'.repeat(65) },
      { ...cash, receipt_number: 'R 1' },
      { ...cash, paid_at: '2026-11-22 11:30' },
      { ...cash, paid_at: '2026-11-22T11:30:00+03:00' },
      { ...cash, paid_at: '2026-02-30T11:30:00Z' },
    ])
      expect([bad, v.safeParse(ResolvePayoutSchema, bad).success]).toEqual([bad, false]);
  });

  it('UpdateFarmerSchema: exactly {phone} in E.164', () => {
    expect(v.safeParse(UpdateFarmerSchema, { phone: '+256772999888' }).success).toBe(true);
    expect(v.safeParse(UpdateFarmerSchema, { phone: '0772999888' }).success).toBe(false);
    expect(v.safeParse(UpdateFarmerSchema, { phone: '+256772999888', full_name: 'x' }).success).toBe(false);
  });

  it('payout and payment views show settlement_channel (MOBILE_MONEY by default) and the cash receipt', () => {
    const mobile = aPayout({ status: 'COMPLETED' });
    expect(payoutStatusView(mobile)).toMatchObject({ settlement_channel: 'MOBILE_MONEY', cash_receipt: null });
    const paid = aPayout({
      status: 'COMPLETED',
      settlement_channel: 'CASH_AT_OFFICE',
      cash_receipt_number: 'R-1',
      cash_paid_at: '2026-11-22T11:30:00.000Z',
    });
    expect(paymentRecordView(paid)).toMatchObject({
      settlement_channel: 'CASH_AT_OFFICE',
      cash_receipt: { receipt_number: 'R-1', paid_at: '2026-11-22T11:30:00.000Z' },
    });
  });
});
