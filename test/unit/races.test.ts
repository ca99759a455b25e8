import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { CustodyRepository } from '../../shared/adapters/dynamodb/custody-repo';
import { PayoutRepository } from '../../shared/adapters/dynamodb/payout-repo';
import type { Caller } from '../../shared/domain/caller';
import { PayoutSequenceConflict, StageConflictError, StoreUnavailableError } from '../../shared/domain/errors';
import type { Payout } from '../../shared/domain/records';
import { logger } from '../../shared/runtime/logger';
import { createFarmerPayout, type PayoutDeps } from '../../shared/use-cases/payouts';
import { domainErrorOf, onTheWire } from './support/errors';
import {
  aBatch,
  aFarmer,
  fakeBatchStore,
  fakePayoutProvider,
  fakePayoutStore,
  fakePayoutWorkflow,
  fakeRegistryStore,
  aCooperative,
} from './support/fakes';

/**
 * Issue 9 defect 6: what a concurrent loser sees from DynamoDB, answered without a 500.
 * Real DynamoDB cancels a transaction that conflicts with a concurrent one (`TransactionConflict`,
 * other items `None`, their conditions not evaluated); DynamoDB Local serializes transactions and
 * never does, so these cases are reproduced here with the SDK mocked. The condition-failure races
 * run on DynamoDB Local in test/integration/races.int.test.ts.
 */

const ddb = mockClient(DynamoDBDocumentClient);

const canceled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

beforeAll(() => {
  logger.setLogLevel('SILENT');
  process.env.TABLE_NAME = 't';
  process.env.AWS_REGION = 'eu-west-1';
});

beforeEach(() => {
  ddb.reset();
  ddb.onAnyCommand().rejects(new Error('unexpected DynamoDB command in this test'));
});

const headItem = (over: Record<string, unknown> = {}) => ({
  PK: 'BATCH#BATCH-2026-000042',
  SK: 'META',
  batch_id: 'BATCH-2026-000042',
  stage: 'DELIVERED',
  mint_status: 'CONFIRMED',
  audit_seq: 3,
  audit_head_hash: 'ab'.repeat(32),
  stage_history: [{ stage: 'DELIVERED' }],
  ...over,
});

describe('CustodyRepository.commitStage: a loser of concurrent stage changes', () => {
  const commit = () =>
    new CustodyRepository().commitStage({
      batchId: 'BATCH-2026-000042',
      tokenId: '42',
      from: 'DELIVERED',
      to: 'GRADED',
      at: '2026-11-22T10:00:00.000Z',
      actor: 'grader',
      evidenceCid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
      payload: {},
    });

  it('is StageConflictError when the ledger write (id <batch>-<seq>) failed together with the head: the winner took that sequence', async () => {
    // Prepare: the loser read seq 3 at DELIVERED; the winner committed seq 4 (ledger tx BATCH-…-4) and GRADED.
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: headItem() })
      .resolves({ Item: headItem({ stage: 'GRADED', audit_seq: 4 }) });
    ddb.on(TransactWriteCommand).rejects(canceled('ConditionalCheckFailed', 'ConditionalCheckFailed', 'ConditionalCheckFailed'));

    // Act
    const err = await commit().then(
      () => null,
      (e: unknown) => e,
    );

    // Assess
    expect(err).toBeInstanceOf(StageConflictError);
    expect((err as StageConflictError).current).toBe('GRADED');
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('is StageConflictError when a concurrent transaction conflicted, once the re-read shows the stage moved', async () => {
    // Prepare
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: headItem() })
      .resolves({ Item: headItem({ stage: 'GRADED', audit_seq: 4 }) });
    ddb.on(TransactWriteCommand).rejects(canceled('None', 'TransactionConflict', 'None'));

    // Act
    const err = await commit().then(
      () => null,
      (e: unknown) => e,
    );

    // Assess
    expect(err).toBeInstanceOf(StageConflictError);
  });

  it('answers 503 AUDIT_LOG_UNAVAILABLE, not 500, when concurrent transactions keep conflicting', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: headItem() });
    ddb.on(TransactWriteCommand).rejects(canceled('None', 'TransactionConflict', 'None'));

    // Act
    const err = await commit().then(
      () => null,
      (e: unknown) => e,
    );

    // Assess
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(onTheWire(err)).toMatchObject({ code: 'AUDIT_LOG_UNAVAILABLE', status: 503, headers: { 'Retry-After': '5' } });
  }, 15_000);
});

describe('PayoutRepository.createPending: a loser of concurrent identical creations', () => {
  const payout = {
    payment_id: 'PAY-2026-000042-02',
    batch_id: 'BATCH-2026-000042',
    reason: 'MANUAL',
    created_at: '2026-11-22T10:00:00.000Z',
  } as Payout;

  it.each([
    ['the guard', ['TransactionConflict', 'None', 'None']],
    ['the batch sequence', ['None', 'TransactionConflict', 'None']],
  ])('is DUPLICATE_PAYOUT (409) when a conflict on %s cancelled it and the guard exists by now', async (_on, codes) => {
    // Prepare
    ddb.on(TransactWriteCommand).rejects(canceled(...codes));
    ddb.on(GetCommand).resolves({ Item: { PK: 'BATCH#BATCH-2026-000042' } }); // the (batch, MANUAL) guard, written by the winner

    // Act
    const err = await domainErrorOf(new PayoutRepository().createPending(payout, 1));

    // Assess
    expect(err.code).toBe('DUPLICATE_PAYOUT');
    expect(onTheWire(err).status).toBe(409);
    expect(ddb.commandCalls(GetCommand)[0]!.args[0].input).toMatchObject({ ConsistentRead: true });
  });

  it('is PayoutSequenceConflict (retry) when a conflict cancelled it and no guard exists yet', async () => {
    // Prepare
    ddb.on(TransactWriteCommand).rejects(canceled('None', 'TransactionConflict', 'None'));
    ddb.on(GetCommand).resolves({});

    // Act
    const err = await new PayoutRepository().createPending(payout, 1).then(
      () => null,
      (e: unknown) => e,
    );

    // Assess
    expect(err).toBeInstanceOf(PayoutSequenceConflict);
  });
});

describe('createFarmerPayout: the sequence keeps being taken', () => {
  it('answers 503 AUDIT_LOG_UNAVAILABLE with nothing created after 10 retries, not a 500', async () => {
    // Prepare
    let attempts = 0;
    const caller: Caller = { sub: 'officer', role: 'COOPERATIVE', cooperative_id: 'C1', duties: [] };
    const deps: PayoutDeps = {
      now: () => new Date('2026-11-22T10:00:00.000Z'),
      registry: fakeRegistryStore({
        getFarmer: async () => aFarmer({ farmer_id: 'F1', cooperative_id: 'C1', phone: '+256772000123' }),
        getCooperative: async () => aCooperative({ cooperative_id: 'C1' }),
      }),
      batches: fakeBatchStore({
        get: async () => aBatch({ batch_id: 'BATCH-2026-000042', cooperative_id: 'C1', farmer_id: 'F1', payout_seq: attempts }),
      }),
      payouts: fakePayoutStore({
        createPending: async () => {
          attempts += 1;
          throw new PayoutSequenceConflict();
        },
      }),
      provider: fakePayoutProvider({ quote: async () => ({ quote_id: 'q1', rate: '3700.25', expires_at: '2026-11-22T10:01:00.000Z' }) }),
      workflow: fakePayoutWorkflow(),
    };

    // Act
    const err = await domainErrorOf(
      createFarmerPayout(deps, caller, {
        farmer_id: 'F1',
        batch_id: 'BATCH-2026-000042',
        cooperative_id: 'C1',
        reason: 'MANUAL',
        amount: { usd_micro: 1_000_000 },
      }),
    );

    // Assess
    expect(err.code).toBe('AUDIT_LOG_UNAVAILABLE');
    expect(onTheWire(err).headers).toEqual({ 'Retry-After': '5' });
    expect(attempts).toBe(11);
  }, 15_000);
});
