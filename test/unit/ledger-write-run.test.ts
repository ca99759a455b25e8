import type { SQSEvent } from 'aws-lambda';
import type { Ledger, LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import type { LedgerTx, VaultLedgerTx } from '../../shared/domain/records';
import { logger } from '../../shared/runtime/logger';
import { setMetricsSink } from '../../shared/runtime/metrics';
import { sqsFifoGroupConsumer } from '../../shared/runtime/sqs-consumer';
import { landQueuedMessages, type QueuedMessagesDeps } from '../../shared/use-cases/ledger-write-run';
import { lambdaContext } from './support/api-event';
import { world, write } from './support/ledger-pipeline-world';

/**
 * The single ledger writer over a batch of queue messages (docs/ledger.md#batches-of-queue-messages):
 * the FIFO message groups of a batch side by side, each in order (sqsFifoGroupConsumer); a group's
 * writes read ahead in batch, the member messages of a sent group ended from that read, and a time
 * budget before a message that may wait (landQueuedMessages), against the pipelined writer's
 * in-memory world (./support/ledger-pipeline-world.ts).
 */

beforeAll(() => {
  setMetricsSink(() => undefined);
  logger.setLogLevel('SILENT');
});
afterAll(() => setMetricsSink(undefined));

/** An SQS event of FIFO records: [group, body] pairs, message ids m0, m1, … */
function fifoEvent(records: Array<[string, unknown]>): SQSEvent {
  return {
    Records: records.map(([group, body], i) => ({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body: JSON.stringify(body),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: '0',
        MessageGroupId: group,
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:ledger-write-queue.fifo',
      awsRegion: 'eu-west-1',
    })),
  };
}

describe('a FIFO batch: message groups side by side, each in order', () => {
  it('a slow group (a receipt check waiting for its receipt) does not hold the writes of the same batch back', async () => {
    const done: string[] = [];
    let writesDone!: () => void;
    const writesFinished = new Promise<void>((r) => {
      writesDone = r;
    });
    const consumer = sqsFifoGroupConsumer<{ n: number }>(async (bodies) => {
      if (bodies[0]!.n >= 100) {
        // The receipt check: waits until the writes are done — or 2 s, when groups ran one after the other.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([writesFinished, new Promise((r) => (timer = setTimeout(r, 2_000)))]);
        clearTimeout(timer);
        done.push('check');
      } else {
        for (const b of bodies) done.push(`write ${b.n}`);
        writesDone();
      }
      return { handled: bodies.length };
    });
    const started = Date.now();
    const res = await consumer(
      fifoEvent([
        ['ledger-receipt-checks', { n: 100 }],
        ['trace-log-writer', { n: 1 }],
        ['trace-log-writer', { n: 2 }],
      ]),
      lambdaContext(),
    );
    expect(res.batchItemFailures).toEqual([]);
    expect(done).toEqual(['write 1', 'write 2', 'check']);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('a failure stops only its own group: it and the later records of that group are reported, the other group goes on', async () => {
    const seen: number[] = [];
    const consumer = sqsFifoGroupConsumer<{ n: number }>(async (bodies) => {
      for (const [i, b] of bodies.entries()) {
        if (b.n === 2) return { handled: i, failure: { error: new Error('not mined') } };
        if (b.n === 13) return { handled: i, deferred: 'no time left' };
        seen.push(b.n);
      }
      return { handled: bodies.length };
    });
    const res = await consumer(
      fifoEvent([
        ['writes', { n: 1 }],
        ['checks', { n: 11 }],
        ['writes', { n: 2 }],
        ['checks', { n: 12 }],
        ['writes', { n: 3 }],
        ['other', { n: 13 }],
        ['other', { n: 14 }],
      ]),
      lambdaContext(),
    );
    expect(seen.sort((a, b) => a - b)).toEqual([1, 11, 12]);
    // writes: n 2 and 3 (m2, m4); other: deferred n 13 and 14 (m5, m6); checks: none.
    expect(res.batchItemFailures).toEqual(['m2', 'm4', 'm5', 'm6'].map((itemIdentifier) => ({ itemIdentifier })));
  });
});

const notHere = async (): Promise<never> => {
  throw new Error('a write signed alone: not part of this test');
};

/** The single writer's ports over the pipelined world: stage records (no mint side effects), a receipt-check queue, parking. */
function writerWorld(n: number) {
  const w = world(Array.from({ length: n }, (_, i) => write(i + 1, 'TRACE_STAGE')));
  const attempts: string[] = [];
  const vaultCalls: string[] = [];
  const deps: QueuedMessagesDeps = {
    custody: {
      getLedgerTx: (id) => w.deps.getLedgerTx(id) as Promise<LedgerTx | null>,
      keepSigned: async () => {
        throw new Error('nothing is signed alone here');
      },
      confirm: async (tx) => {
        w.txs.get(tx.ledger_tx_id)!.status = 'CONFIRMED';
      },
      markFailed: async (id) => {
        w.txs.get(id)!.status = 'FAILED';
      },
    },
    // The batched writer's part of the ledger (the world's chain); nothing is signed alone here.
    ledger: {
      ...w.deps.ledger,
      batchedCallsDeployed: async () => true,
      mintBatchTokenKept: notHere,
      recordStageKept: notHere,
      anchorAuditRootKept: notHere,
    } satisfies Ledger,
    batches: {} as QueuedMessagesDeps['batches'],
    payoutQueue: { send: async () => undefined },
    now: w.deps.now,
    groups: w.deps.groups,
    receiptCheckQueue: {
      send: async (msg: LedgerWriteMessage, opts) => {
        const key = opts!.deduplicationId!.slice(msg.receipt_check!.length + 1);
        if (!w.checks.some((c) => c.group === msg.receipt_check && c.key === key)) w.checks.push({ group: msg.receipt_check!, key });
      },
    },
    groupPace: { lastLookMs: {} },
    vault: {
      ledger: {} as never,
      reader: {} as never,
      outcomes: {} as never,
    },
    parking: {
      recordFailedAttempt: async (id) => {
        attempts.push(id);
        return attempts.filter((a) => a === id).length;
      },
      park: async () => true,
    },
  };
  // A vault write touched at all is visible: its (empty) vault ledger throws.
  deps.vault!.ledger = new Proxy(
    {},
    { get: (_t, p) => () => vaultCalls.push(String(p)) && Promise.reject(new Error('vault down')) },
  ) as never;
  const msgs = (ids: string[]): LedgerWriteMessage[] => ids.map((ledger_tx_id) => ({ ledger_tx_id }));
  const opts = (remainingMs = 60_000) => ({
    receiptWaitMs: 30_000,
    receiptCheckWaitMs: 4_000,
    maxAttempts: 8,
    remainingMs: () => remainingMs,
  });
  const allReads = () => w.reads.groups + w.reads.writes + w.reads.batches;
  const resetReads = () => Object.assign(w.reads, { groups: 0, writes: 0, batches: 0 });
  return { w, deps, attempts, vaultCalls, msgs, opts, allReads, resetReads };
}

describe('landQueuedMessages: the writes of a batch read ahead in one go', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `b${i + 1}-1`);

  it('10 member messages of a SENT group cost one batch read (two round trips), not a write and a group read each', async () => {
    const { w, deps, msgs, opts, allReads, resetReads } = writerWorld(10);
    // The first member's delivery forms and sends the group of all ten (not mined yet).
    expect(await landQueuedMessages(deps, msgs(['b1-1']), opts())).toEqual({ handled: 1 });
    expect(w.signed).toHaveLength(1);
    expect([...w.groups.values()][0]).toMatchObject({ status: 'SENT', members: ids(10) });
    resetReads();

    expect(await landQueuedMessages(deps, msgs(ids(10)), opts())).toEqual({ handled: 10 });
    expect(w.reads).toEqual({ groups: 0, writes: 0, batches: 1 });
    expect(allReads()).toBeLessThanOrEqual(2);
    expect(w.signed).toHaveLength(1); // nothing signed again
    // The first member's delivery queues the group's receipt check again (the queue drops the repeat).
    expect(w.checks.map((c) => c.key)).toEqual(['sent']);
  });

  it('a write right after a slow one sees the group that one formed: the read ahead is made again after it', async () => {
    const { w, deps, msgs, opts } = writerWorld(3);
    expect(await landQueuedMessages(deps, msgs(ids(3)), opts())).toEqual({ handled: 3 });
    expect(w.signed).toHaveLength(1);
    expect(w.signed[0]!.tokenIds).toEqual([1n, 2n, 3n]);
    // One read ahead before b1-1, one after it (b2-1 and b3-1 found held by its SENT group); b1-1's own
    // delivery read it once; b2-1 and b3-1 were never read one by one.
    expect(w.reads.batches).toBe(2);
    expect(w.reads.writes).toBe(1);
  });

  it('settled writes end from the read; a write that fails stops the run: it is counted, nothing after it is touched', async () => {
    const { w, deps, msgs, opts, attempts } = writerWorld(2);
    w.txs.get('b1-1')!.status = 'CONFIRMED';
    const outcome = await landQueuedMessages(deps, msgs(['b1-1', 'gone-1', 'b2-1']), opts());
    expect(outcome).toMatchObject({
      handled: 1,
      failure: { error: expect.objectContaining({ message: 'ledger write gone-1 not found' }) },
    });
    expect(attempts).toEqual(['gone-1']);
    expect(w.signed).toHaveLength(0); // b2-1 never started
  });
});

describe('landQueuedMessages: the time budget', () => {
  const vaultWrite = (id: string): VaultLedgerTx => ({
    ledger_tx_id: id,
    kind: 'VAULT',
    vault_call: { kind: 'CANCEL_LOAN', ref: 'LOAN-1' },
    status: 'PENDING',
    created_at: '2026-01-01T00:00:09Z',
  });
  /** The world's table holds batched writes; a vault write is put beside them. */
  const putVaultWrite = (w: ReturnType<typeof writerWorld>['w'], id: string) => (w.txs as Map<string, LedgerTx>).set(id, vaultWrite(id));

  it('a vault write (up to 30 s for its receipt) is not started with 20 s left: returned untouched, no failed attempt counted', async () => {
    const { w, deps, msgs, opts, attempts, vaultCalls } = writerWorld(1);
    putVaultWrite(w, 'v-1');
    const outcome = await landQueuedMessages(deps, msgs(['b1-1', 'v-1']), opts(20_000));
    expect(outcome).toEqual({ handled: 1, deferred: expect.stringContaining('40000 ms needed') });
    expect(w.signed).toHaveLength(1); // the stage record before it landed
    expect(vaultCalls).toEqual([]);
    expect(attempts).toEqual([]);
    expect(w.txs.get('v-1')).toEqual(vaultWrite('v-1'));
  });

  it('with the time it needs, the same vault write is started (here its ledger fails: one failed attempt)', async () => {
    const { w, deps, msgs, opts, attempts, vaultCalls } = writerWorld(1);
    putVaultWrite(w, 'v-1');
    const outcome = await landQueuedMessages(deps, msgs(['b1-1', 'v-1']), opts(45_000));
    expect(outcome).toMatchObject({ handled: 1, failure: { error: expect.any(Error) } });
    expect(vaultCalls.length).toBeGreaterThan(0);
    expect(attempts).toEqual(['v-1']);
  });

  it('the first message of a call is always started, whatever the time left (so every call makes progress)', async () => {
    const { w, deps, msgs, opts, vaultCalls } = writerWorld(0);
    putVaultWrite(w, 'v-1');
    const outcome = await landQueuedMessages(deps, msgs(['v-1']), opts(1_000));
    expect(outcome.failure).toBeDefined();
    expect(vaultCalls.length).toBeGreaterThan(0);
  });

  it('a receipt check after a slow one is deferred too when less than its wait is left', async () => {
    const { deps, msgs, opts } = writerWorld(1);
    const outcome = await landQueuedMessages(deps, [...msgs(['b1-1']), { ledger_tx_id: 'b1-1', receipt_check: 'G-1' }], opts(5_000));
    expect(outcome).toEqual({ handled: 1, deferred: expect.stringContaining('14000 ms needed') });
  });
});
