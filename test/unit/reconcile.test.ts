import { SFNClient, SendTaskSuccessCommand, StartExecutionCommand, TaskTimedOut, ExecutionAlreadyExists } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { StepFunctionsPayoutWorkflow } from '../../shared/adapters/aws/payout-workflow';
import { DomainError, ProviderUnavailableError } from '../../shared/domain/errors';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import type { ProviderOrder } from '../../shared/domain/ports/payouts';
import type { Payout } from '../../shared/domain/records';
import { requeueStaleLedgerWrites } from '../../shared/use-cases/ledger-writer';
import { PAYOUT_CREATION_WINDOW_SECONDS } from '../../shared/domain/payout-lifecycle';
import { reconcilePayouts } from '../../shared/use-cases/reconcile';
import {
  aBatch,
  aCooperative,
  aFarmer,
  aLedgerTx,
  aPayout,
  fakeBatchStore,
  fakeCustodyStore,
  fakePayoutProvider,
  fakePayoutStore,
  fakePayoutWorkflow,
  fakeRegistryStore,
  fakeWorkQueue,
} from './support/fakes';

/** Reconciliation asks the provider before it does anything, and never pays again. */

const now = new Date('2026-11-22T10:00:00.000Z');
const payout = (over: Partial<Payout>): Payout =>
  aPayout({
    payment_id: 'PAY-2026-000001-01',
    batch_id: 'BATCH-2026-000001',
    farmer_id: 'F1',
    cooperative_id: 'C1',
    reason: 'NET_COFFEE_PAYMENT',
    status: 'PROCESSING',
    amount_usd_micro: 10_000_000,
    amount_ugx: 37002,
    estimated_ugx: 37002,
    exchange_rate: '3700.25',
    phone: '+256772000123',
    recipient_name: 'Joseph',
    attempt: 1,
    retry_count: 0,
    created_at: '2026-11-22T09:00:00.000Z',
    updated_at: '2026-11-22T09:00:00.000Z',
    created_by: 'x',
    ...over,
  });
const order = (status: ProviderOrder['status']): ProviderOrder => ({
  order_id: 'ord_1',
  reference: 'PAY-2026-000001-01-A1',
  status,
  amount_usd_micro: 10_000_000,
  amount_ugx: 37002,
  exchange_rate: '3700.25',
  recipient: { phone: '+256772000123', name: 'Joseph' },
  created_at: '2026-11-22T09:00:00.000Z',
  ...(status === 'SETTLED' ? { mobile_money_transaction_id: 'MP1', settled_at: '2026-11-22T09:00:03.000Z' } : {}),
  ...(status === 'FAILED' ? { failure: { reason: 'PROVIDER_ERROR' as const, detail: 'wallet closed' } } : {}),
});

function fakes(open: Payout[], providerOrder: ProviderOrder | null) {
  const calls: string[] = [];
  const stored = new Map(open.map((p) => [p.payment_id, { ...p }]));
  const deps: Parameters<typeof reconcilePayouts>[0] = {
    now: () => now,
    payouts: fakePayoutStore({
      openBefore: async (before) => {
        calls.push(`openBefore ${before}`);
        return open;
      },
      get: async (id) => stored.get(id) ?? null,
      recordSettlement: async (p) => {
        calls.push(`settle ${p.payment_id}`);
        stored.set(p.payment_id, { ...p, status: 'COMPLETED' });
        return 'APPLIED';
      },
      recordFailure: async (p, attempt, reason) => {
        calls.push(`fail ${p.payment_id} A${attempt} ${reason.detail}`);
        return 'APPLIED';
      },
      markProcessing: async (p) => {
        calls.push(`processing ${p.payment_id}`);
        return p;
      },
      discardUnsent: async (p) => {
        calls.push(`discard ${p.payment_id}`);
      },
    }),
    provider: fakePayoutProvider({
      findOrderByReference: async (ref) => {
        calls.push(`ask ${ref}`);
        return providerOrder;
      },
      createOrder: async () => {
        throw new Error('reconciliation must never create an order');
      },
    }),
    workflow: fakePayoutWorkflow({
      start: async (id) => {
        calls.push(`start ${id}`);
      },
      resume: async (token) => {
        calls.push(`resume ${token}`);
      },
      fail: async (token, error) => {
        calls.push(`failtask ${token} ${error}`);
      },
    }),
    batches: fakeBatchStore({ awaitingPayoutBefore: async () => [] }),
    registry: fakeRegistryStore(),
  };
  return { deps, calls };
}

describe('reconcilePayouts', () => {
  it('looks only at payouts idle for longer than the threshold', async () => {
    const { deps, calls } = fakes([], null);
    await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls[0]).toBe('openBefore 2026-11-22T09:55:00.000Z');
  });

  it('completes a payout whose order the provider settled without a webhook, and resumes its task', async () => {
    const { deps, calls } = fakes([payout({ task_token: 'tok-1', task_token_attempt: 1 })], order('SETTLED'));
    const report = await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls).toEqual([
      'openBefore 2026-11-22T09:55:00.000Z',
      'ask PAY-2026-000001-01-A1',
      'settle PAY-2026-000001-01',
      'resume tok-1',
    ]);
    expect(report).toMatchObject({ examined: 1, completed: 1 });
  });

  it('records a failure the provider reports and fails the waiting task, so the state machine retries', async () => {
    const { deps, calls } = fakes([payout({ task_token: 'tok-1', task_token_attempt: 1 })], order('FAILED'));
    await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls.slice(1)).toEqual(['ask PAY-2026-000001-01-A1', 'fail PAY-2026-000001-01 A1 wallet closed', 'failtask tok-1 OrderFailed']);
  });

  it('only makes sure the lifecycle runs while the order is still pending', async () => {
    const { deps, calls } = fakes([payout({})], order('PENDING'));
    await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls.slice(1)).toEqual(['ask PAY-2026-000001-01-A1', 'start PAY-2026-000001-01']);
  });

  it('removes a PENDING payout whose order never reached the provider, and adopts one that did', async () => {
    const lost = fakes([payout({ status: 'PENDING' })], null);
    await reconcilePayouts(lost.deps, { staleAfterSeconds: 300 });
    expect(lost.calls.slice(1)).toEqual(['ask PAY-2026-000001-01-A1', 'discard PAY-2026-000001-01']);
    const placed = fakes([payout({ status: 'PENDING' })], order('PENDING'));
    await reconcilePayouts(placed.deps, { staleAfterSeconds: 300 });
    expect(placed.calls.slice(1)).toEqual(['ask PAY-2026-000001-01-A1', 'processing PAY-2026-000001-01', 'start PAY-2026-000001-01']);
  });

  it('keeps a PENDING payout without an order while its creating call may still be placing it (unsentAfterSeconds), then discards it', async () => {
    // Failed before the fix: a payout idle for 10 min (past the 300 s threshold) was discarded while
    // its order could still land, for a deleted payout that a new payout would then pay again.
    const young = fakes([payout({ status: 'PENDING', updated_at: '2026-11-22T09:50:00.000Z' })], null);
    const kept = await reconcilePayouts(young.deps, { staleAfterSeconds: 300, unsentAfterSeconds: PAYOUT_CREATION_WINDOW_SECONDS });
    expect(young.calls.slice(1)).toEqual(['ask PAY-2026-000001-01-A1']);
    expect(kept).toMatchObject({ examined: 1, discarded: 0 });
    const old = fakes([payout({ status: 'PENDING', updated_at: '2026-11-22T09:44:59.000Z' })], null);
    const gone = await reconcilePayouts(old.deps, { staleAfterSeconds: 300, unsentAfterSeconds: PAYOUT_CREATION_WINDOW_SECONDS });
    expect(old.calls.slice(1)).toEqual(['ask PAY-2026-000001-01-A1', 'discard PAY-2026-000001-01']);
    expect(gone).toMatchObject({ discarded: 1 });
  });

  it('asks about the current attempt of a payout in retry', async () => {
    const { deps, calls } = fakes([payout({ status: 'RETRY_2', attempt: 3, retry_count: 2 })], null);
    await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls[1]).toBe('ask PAY-2026-000001-01-A3');
  });
});

describe('reconcilePayouts: batches still without their NET_COFFEE_PAYMENT payout', () => {
  const B7 = 'BATCH-2026-000007';
  const B8 = 'BATCH-2026-000008';

  /** Two batches of F-1 idle past the threshold; `failQuoteFor` makes the provider unreachable for that batch's quote. */
  function batchFakes(opts: { existing?: string[]; failQuoteFor?: string } = {}) {
    const calls: string[] = [];
    let quoting = '';
    const deps: Parameters<typeof reconcilePayouts>[0] = {
      now: () => now,
      payouts: fakePayoutStore({
        openBefore: async () => [],
        createPending: async (p) => {
          if (opts.existing?.includes(p.batch_id)) throw new DomainError('DUPLICATE_PAYOUT', `batch ${p.batch_id} has its payout`);
          calls.push(`pending ${p.payment_id} ${p.reason}`);
        },
        markProcessing: async (p) => {
          calls.push(`processing ${p.payment_id}`);
          return { ...p, status: 'PROCESSING' };
        },
      }),
      provider: fakePayoutProvider({
        quote: async () => {
          if (quoting === opts.failQuoteFor) throw new ProviderUnavailableError();
          return { quote_id: 'q1', rate: '3700.25', expires_at: '2026-11-22T10:05:00.000Z' };
        },
        createOrder: async (o) => ({ ...order('PENDING'), reference: o.reference }),
      }),
      workflow: fakePayoutWorkflow({
        start: async (id) => {
          calls.push(`start ${id}`);
        },
      }),
      batches: fakeBatchStore({
        awaitingPayoutBefore: async (before) => {
          calls.push(`awaiting ${before}`);
          return [B7, B8];
        },
        get: async (id) => {
          quoting = id;
          return aBatch({ batch_id: id });
        },
      }),
      // The cooperative's export premium is part of the batch's value (the cap on its payouts).
      registry: fakeRegistryStore({
        getFarmer: async (id) => (id === 'F-1' ? aFarmer() : null),
        getCooperative: async () => aCooperative(),
      }),
    };
    return { deps, calls };
  }

  it('starts the payout of each batch idle for longer than the threshold (no queue in between)', async () => {
    const { deps, calls } = batchFakes();
    const report = await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls).toEqual([
      'awaiting 2026-11-22T09:55:00.000Z',
      'pending PAY-2026-000007-01 NET_COFFEE_PAYMENT',
      'processing PAY-2026-000007-01',
      'start PAY-2026-000007-01',
      'pending PAY-2026-000008-01 NET_COFFEE_PAYMENT',
      'processing PAY-2026-000008-01',
      'start PAY-2026-000008-01',
    ]);
    expect(report).toMatchObject({ batchesStarted: 2, batchStartsFailed: 0 });
  });

  it('counts a batch whose payout exists already (DUPLICATE_PAYOUT) as started, and pays nothing twice', async () => {
    const { deps, calls } = batchFakes({ existing: [B7] });
    const report = await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls.filter((c) => c.includes('000007'))).toEqual([]);
    expect(report).toMatchObject({ batchesStarted: 2, batchStartsFailed: 0 });
  });

  it('one batch whose start fails (provider unreachable) does not stop the others; the next run tries it again', async () => {
    const { deps, calls } = batchFakes({ failQuoteFor: B7 });
    const report = await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls.slice(1)).toEqual([
      'pending PAY-2026-000008-01 NET_COFFEE_PAYMENT',
      'processing PAY-2026-000008-01',
      'start PAY-2026-000008-01',
    ]);
    expect(report).toMatchObject({ batchesStarted: 1, batchStartsFailed: 1 });
  });
});

describe('requeueStaleLedgerWrites (the ledger-write reconciler)', () => {
  it('queues again, for the single writer, the writes unconfirmed for longer than the threshold', async () => {
    const sent: Array<{ id: string; dedup?: string }> = [];
    const asked: string[] = [];
    const n = await requeueStaleLedgerWrites(
      {
        now: () => now,
        custody: fakeCustodyStore({
          openLedgerTxsBefore: async (before) => {
            asked.push(before);
            return [aLedgerTx(), aLedgerTx({ audit_sequence_number: 2, kind: 'TRACE_STAGE', stage: 'GRADED' })];
          },
        }),
        ledgerQueue: fakeWorkQueue<LedgerWriteMessage>('ledgerQueue', {
          send: async (m, o) => {
            sent.push({ id: m.ledger_tx_id, ...(o?.deduplicationId ? { dedup: o.deduplicationId } : {}) });
          },
        }),
      },
      300,
    );
    expect(asked).toEqual(['2026-11-22T09:55:00.000Z']);
    expect(n).toBe(2);
    expect(sent.map((m) => m.id)).toEqual(['BATCH-2026-000001-1', 'BATCH-2026-000001-2']);
    for (const m of sent) expect(m.dedup).toMatch(new RegExp(`^${m.id}-\\d+$`));
  });
});

describe('PayoutWorkflow', () => {
  const sfn = mockClient(SFNClient);
  beforeAll(() => {
    process.env.PAYOUT_STATE_MACHINE_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:payouts';
  });
  beforeEach(() => sfn.reset());

  it('treats a closed task token as already handled (SendTaskSuccess on a closed token changes nothing)', async () => {
    sfn.on(SendTaskSuccessCommand).rejects(new TaskTimedOut({ message: 'Task Timed Out', $metadata: {} }));
    await expect(new StepFunctionsPayoutWorkflow().resume('tok', { status: 'COMPLETED' })).resolves.toBeUndefined();
  });

  it('starts one execution per payout: the execution is named after it and a second start is not an error', async () => {
    sfn.on(StartExecutionCommand).rejectsOnce(new ExecutionAlreadyExists({ message: 'exists', $metadata: {} }));
    await expect(new StepFunctionsPayoutWorkflow().start('PAY-2026-000001-01')).resolves.toBeUndefined();
    expect(sfn.commandCalls(StartExecutionCommand)[0]!.args[0].input).toMatchObject({ name: 'PAY-2026-000001-01' });
  });

  it('raises other Step Functions errors', async () => {
    sfn.on(SendTaskSuccessCommand).rejects(new Error('throttled'));
    await expect(new StepFunctionsPayoutWorkflow().resume('tok', {})).rejects.toThrow('throttled');
  });
});
