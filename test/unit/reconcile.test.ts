import { SFNClient, SendTaskSuccessCommand, StartExecutionCommand, TaskTimedOut, ExecutionAlreadyExists } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { StepFunctionsPayoutWorkflow } from '../../shared/adapters/aws/payout-workflow';
import type { PayoutRequestMessage, ProviderOrder } from '../../shared/domain/ports';
import type { Payout } from '../../shared/domain/records';
import { reconcilePayouts } from '../../shared/use-cases/reconcile';
import { aPayout, fakeBatchStore, fakePayoutProvider, fakePayoutStore, fakePayoutWorkflow, fakeRegistryStore, fakeWorkQueue } from './support/fakes';

/** Reconciliation asks the provider before it does anything, and never pays again. */

const now = new Date('2026-11-22T10:00:00.000Z');
const payout = (over: Partial<Payout>): Payout => aPayout({
  payment_id: 'PAY-2026-000001-01', batch_id: 'BATCH-2026-000001', farmer_id: 'F1', cooperative_id: 'C1', reason: 'NET_COFFEE_PAYMENT',
  status: 'PROCESSING', amount_usd_micro: 10_000_000, amount_ugx: 37002, estimated_ugx: 37002, exchange_rate: '3700.25', phone: '+256772000123', recipient_name: 'Joseph',
  attempt: 1, retry_count: 0, created_at: '2026-11-22T09:00:00.000Z', updated_at: '2026-11-22T09:00:00.000Z', created_by: 'x', ...over,
});
const order = (status: ProviderOrder['status']): ProviderOrder => ({
  order_id: 'ord_1', reference: 'PAY-2026-000001-01-A1', status, amount_usd_micro: 10_000_000, amount_ugx: 37002, exchange_rate: '3700.25',
  recipient: { phone: '+256772000123', name: 'Joseph' }, created_at: '2026-11-22T09:00:00.000Z', ...(status === 'SETTLED' ? { mobile_money_transaction_id: 'MP1', settled_at: '2026-11-22T09:00:03.000Z' } : {}), ...(status === 'FAILED' ? { failure_reason: 'wallet closed' } : {}),
});

function fakes(open: Payout[], providerOrder: ProviderOrder | null, awaiting: string[] = []) {
  const calls: string[] = [];
  const stored = new Map(open.map((p) => [p.payment_id, { ...p }]));
  const deps: Parameters<typeof reconcilePayouts>[0] = {
    now: () => now,
    payouts: fakePayoutStore({
      openBefore: async (before) => { calls.push(`openBefore ${before}`); return open; },
      get: async (id) => stored.get(id) ?? null,
      recordSettlement: async (p) => { calls.push(`settle ${p.payment_id}`); stored.set(p.payment_id, { ...p, status: 'COMPLETED' }); return 'APPLIED'; },
      recordFailure: async (p, attempt, reason) => { calls.push(`fail ${p.payment_id} A${attempt} ${reason}`); return 'APPLIED'; },
      markProcessing: async (p) => { calls.push(`processing ${p.payment_id}`); return p; },
      discardUnsent: async (p) => { calls.push(`discard ${p.payment_id}`); },
    }),
    provider: fakePayoutProvider({
      findOrderByReference: async (ref) => { calls.push(`ask ${ref}`); return providerOrder; },
      createOrder: async () => { throw new Error('reconciliation must never create an order'); },
    }),
    workflow: fakePayoutWorkflow({
      start: async (id) => { calls.push(`start ${id}`); },
      resume: async (token) => { calls.push(`resume ${token}`); },
      fail: async (token, error) => { calls.push(`failtask ${token} ${error}`); },
    }),
    batches: fakeBatchStore({ awaitingPayoutBefore: async () => awaiting }),
    payoutQueue: fakeWorkQueue<PayoutRequestMessage>('payoutQueue', { send: async (m) => { calls.push(`requeue ${m.batch_id}`); } }),
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
    expect(calls).toEqual(['openBefore 2026-11-22T09:55:00.000Z', 'ask PAY-2026-000001-01-A1', 'settle PAY-2026-000001-01', 'resume tok-1']);
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

  it('asks about the current attempt of a payout in retry', async () => {
    const { deps, calls } = fakes([payout({ status: 'RETRY_2', attempt: 3, retry_count: 2 })], null);
    await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls[1]).toBe('ask PAY-2026-000001-01-A3');
  });

  it('queues again the payout request of a batch still without its payout', async () => {
    const { deps, calls } = fakes([], null, ['BATCH-2026-000007']);
    const report = await reconcilePayouts(deps, { staleAfterSeconds: 300 });
    expect(calls).toContain('requeue BATCH-2026-000007');
    expect(report.batchesRequeued).toBe(1);
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
