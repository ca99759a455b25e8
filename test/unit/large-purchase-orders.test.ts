import type { Settlement } from '../../shared/domain/lending';
import {
  CONFIRMATION_STEP_BATCHES,
  ORDER_TRANSACTION_MAX_BATCHES,
  ORDER_WORK_BUDGET_MS,
  SETTLEMENT_STEP_BATCHES,
} from '../../shared/domain/purchase-order-limits';
import { StageConflictError } from '../../shared/domain/errors';
import type { AuditEntry, Batch, PurchaseOrder, Stage } from '../../shared/domain/records';
import type { OrderWorkMessage } from '../../shared/domain/ports/batches';
import { runOrderWork, type OrderWorkDeps } from '../../shared/use-cases/order-work';
import { confirmPurchaseOrder } from '../../shared/use-cases/purchase-orders';
import { aBatch, aLedgerTx, batchReads, fakeCustodyStore, fakeEvidenceKeeping, memoryOrderWorkIndex } from './support/fakes';

/**
 * Confirming a purchase order above one transaction's size (docs/api/batches-and-custody.md#purchase-orders-of-many-batches):
 * the call makes it CONFIRMING and queues the work; the order worker confirms it in per-batch
 * steps with recorded progress; a crash half-way resumes on the redelivered message, writes each
 * batch's audit entry once, commits each WAREHOUSED batch once and counts every batch once. The in-memory store keeps the repository's rules: DRAFT → CONFIRMING only from DRAFT;
 * an order event once per batch (its mark); progress recorded only from the count it started at.
 */
const COOP = 'COOP-1';
const caller = { role: 'COOPERATIVE', sub: 'exporter-1', cooperative_id: COOP, duties: ['EXPORTER'] } as never;

function world(n: number, warehoused: (i: number) => boolean) {
  const ids = Array.from({ length: n }, (_, i) => `BATCH-2026-${String(i + 1).padStart(6, '0')}`);
  const batches = new Map<string, Batch>(
    ids.map((id, i) => [id, aBatch({ batch_id: id, cooperative_id: COOP, stage: (warehoused(i) ? 'WAREHOUSED' : 'MILLED') as Stage })]),
  );
  let order: PurchaseOrder = {
    purchase_order_id: 'PO-1',
    status: 'DRAFT',
    cooperative_id: COOP,
    batch_ids: ids,
    buyer: 'Hamburg Coffee Importers GmbH',
    price_usd_per_kg: 6.4,
    created_at: '2026-11-27T00:00:00.000Z',
    created_by: 'exporter-1',
  };
  const marks = new Set<string>();
  const confirmEntries: string[] = [];
  /** The heads the confirmation's audit appends and stage commits were given (undefined: read by the store). */
  const confirmHeads: Array<Batch | undefined> = [];
  const commitHeads: Array<Batch | undefined> = [];
  const commits: string[] = [];
  const progress: Array<[number, number]> = [];
  let failAt: { call: number; calls: number } | null = null;
  let failCommitOf: string | null = null;
  const custody = fakeCustodyStore({
    getPurchaseOrder: async () => structuredClone(order),
    beginPurchaseOrderConfirmation: async (_po, actor, at) => {
      if (order.status === 'DRAFT')
        order = { ...order, status: 'CONFIRMING', confirmed_at: at, confirmed_by: actor, confirmed_batch_count: 0 };
      return structuredClone(order);
    },
    confirmPurchaseOrderBatch: async (po, batchId, head) => {
      if (failAt && ++failAt.calls === failAt.call) throw new Error('crash: the function stopped half-way');
      const mark = `PURCHASE_ORDER_CONFIRMED#${po.purchase_order_id}#${batchId}`;
      confirmHeads.push(head);
      if (marks.has(mark)) return null;
      marks.add(mark);
      confirmEntries.push(batchId);
      // As the repository: the entry follows the batch's head, which it advances.
      const b = batches.get(batchId)!;
      const entry = { batch_id: batchId, sequence_number: b.audit_seq + 1, hash: `hash-${batchId}-${b.audit_seq + 1}` } as AuditEntry;
      batches.set(batchId, { ...b, audit_seq: entry.sequence_number, audit_head_hash: entry.hash });
      return entry;
    },
    recordConfirmationProgress: async (_id, from, to, complete) => {
      if (order.status !== 'CONFIRMING' || order.confirmed_batch_count !== from) return false;
      order = { ...order, confirmed_batch_count: to, ...(complete ? { status: 'CONFIRMED' as const } : {}) };
      progress.push([from, to]);
      return true;
    },
    commitStage: async (input) => {
      const b = batches.get(input.batchId)!;
      commitHeads.push(input.head);
      if (failCommitOf === input.batchId) {
        failCommitOf = null;
        throw new Error('crash: the function stopped between the entry and the commit');
      }
      // As the repository: the stage change is conditioned on the stage it moves from (and a head given on it being current).
      if (b.stage !== input.from) throw new StageConflictError(b.stage);
      if (input.head && (input.head.audit_seq !== b.audit_seq || input.head.audit_head_hash !== b.audit_head_hash))
        throw new Error(`${input.batchId}: the head given is not the batch's audit head`);
      batches.set(input.batchId, { ...b, stage: input.to });
      commits.push(input.batchId);
      return { entry: { sequence_number: 9 } as never, ledgerTx: aLedgerTx({ batch_id: input.batchId, stage: input.to }) };
    },
  });
  const queued: OrderWorkMessage[] = [];
  const unused = async (): Promise<never> => {
    throw new Error('not part of a confirmation');
  };
  /** Batch reads: one at a time (`get`), and batched (`getMany`, the size of each call). */
  const reads = { single: 0, batched: [] as number[] };
  const deps: OrderWorkDeps = {
    batches: {
      get: async (id) => {
        reads.single++;
        return structuredClone(batches.get(id) ?? null);
      },
      getMany: async (batchIds) => {
        reads.batched.push(batchIds.length);
        return batchIds.map((id) => structuredClone(batches.get(id) ?? null));
      },
    },
    custody,
    evidence: fakeEvidenceKeeping(),
    ledgerQueue: { send: async () => undefined },
    orderWork: {
      send: async (m) => {
        queued.push(m);
      },
    },
    orderWorkIndex: memoryOrderWorkIndex(),
    // Only the settlement steps (below) read these.
    settlements: {
      get: unused,
      start: unused,
      payments: unused,
      recordAmountDue: unused,
      completeOrderAudits: unused,
      recordSettledProgress: unused,
      markWritesRequested: unused,
      claimRun: unused,
      releaseRun: unused,
    },
    loans: { activeForBatches: unused },
    payouts: { get: unused },
    vaultWrites: { request: unused },
    now: () => new Date('2026-11-27T01:00:00.000Z'),
  };
  /** The order worker over every queued message until none is left; returns how many runs it made. */
  const drain = async (): Promise<number> => {
    let runs = 0;
    while (queued.length > 0) {
      const m = queued[0]!;
      await runOrderWork(deps, m); // a throw leaves the message queued: redelivered
      queued.shift();
      runs++;
    }
    return runs;
  };
  return {
    deps,
    queued,
    drain,
    ids,
    order: () => order,
    reads,
    marks,
    confirmEntries,
    confirmHeads,
    commitHeads,
    commits,
    progress,
    crashOnCall: (call: number) => {
      failAt = { call, calls: 0 };
    },
    noCrash: () => {
      failAt = null;
    },
    crashCommitOf: (batchId: string) => {
      failCommitOf = batchId;
    },
  };
}

/** The steps a confirmation of `n` batches records: [from, to] by CONFIRMATION_STEP_BATCHES. */
function steps(n: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let from = 0; from < n; from += CONFIRMATION_STEP_BATCHES) out.push([from, Math.min(n, from + CONFIRMATION_STEP_BATCHES)]);
  return out;
}

describe('confirming a purchase order above one transaction', () => {
  const N = 3 * CONFIRMATION_STEP_BATCHES + 50;
  const warehoused = (i: number) => i % 3 === 0;

  it('the call makes it CONFIRMING and queues the work; the worker confirms it in steps: every batch confirmed once, every WAREHOUSED batch committed once', async () => {
    expect(N).toBeGreaterThan(ORDER_TRANSACTION_MAX_BATCHES);
    const w = world(N, warehoused);
    const { po, committed } = await confirmPurchaseOrder(w.deps, caller, 'PO-1');
    expect(po).toMatchObject({ status: 'CONFIRMING', confirmed_batch_count: 0, confirmed_by: 'exporter-1' });
    expect(committed).toEqual([]);
    expect(w.confirmEntries).toHaveLength(0); // nothing per batch on the request path
    expect(w.queued).toEqual([{ purchase_order_id: 'PO-1', work: 'CONFIRM' }]);
    await w.drain();
    expect(w.order()).toMatchObject({ status: 'CONFIRMED', confirmed_batch_count: N });
    expect(new Set(w.confirmEntries).size).toBe(N);
    expect(w.confirmEntries).toHaveLength(N);
    const expected = w.ids.filter((_, i) => warehoused(i));
    expect([...w.commits].sort()).toEqual(expected);
    expect(w.progress).toEqual(steps(N));
    // Each step's batches in one batched read, then all of them once for the amount due; no batch read on its own.
    expect(w.reads.batched).toEqual([...steps(N).map(([from, to]) => to - from), N]);
    expect(w.reads.single).toBe(0);
  });

  it('each batch is written from the batched read of its step: its confirmation entry on that head, its commit on the head the entry made; none read again', async () => {
    const w = world(N, warehoused);
    await confirmPurchaseOrder(w.deps, caller, 'PO-1');
    await w.drain();
    expect(w.order()).toMatchObject({ status: 'CONFIRMED', confirmed_batch_count: N });
    expect(w.confirmHeads).toHaveLength(N);
    expect(w.confirmHeads.every((h) => h !== undefined && h.audit_seq === 1)).toBe(true);
    const expected = w.ids.filter((_, i) => warehoused(i));
    // Every commit was given the head its batch's confirmation entry made (sequence 2); the fake store refuses any other.
    expect(w.commitHeads).toHaveLength(expected.length);
    expect(w.commitHeads.every((h) => h?.audit_seq === 2 && h.audit_head_hash === `hash-${h.batch_id}-2`)).toBe(true);
    expect(w.reads.single).toBe(0);
  });

  it('a step done again (the entry there already, the commit not) gives the commit no head: the store reads the batch', async () => {
    const w = world(N, warehoused);
    await confirmPurchaseOrder(w.deps, caller, 'PO-1');
    const crashed = w.ids.find((_, i) => i > CONFIRMATION_STEP_BATCHES && warehoused(i))!; // in the second step
    w.crashCommitOf(crashed);
    await expect(w.drain()).rejects.toThrow('crash');
    const before = w.commitHeads.length;
    await w.drain();
    expect(w.order()).toMatchObject({ status: 'CONFIRMED', confirmed_batch_count: N });
    expect(w.commits).toContain(crashed);
    // Its entry was written before the crash: done again, the append writes nothing and gives no head, so the commit is not built on a stale one.
    const redone = w.commitHeads.slice(before).filter((h) => h === undefined);
    expect(redone.length).toBe(1);
    expect(w.confirmEntries.filter((b) => b === crashed)).toHaveLength(1);
    expect(new Set(w.commits).size).toBe(w.commits.length);
  });

  it('a worker crash half-way leaves it CONFIRMING with its progress; the redelivered message continues and nothing is written or counted twice', async () => {
    const w = world(N, warehoused);
    await confirmPurchaseOrder(w.deps, caller, 'PO-1');
    w.crashOnCall(3 * CONFIRMATION_STEP_BATCHES + 7); // in the fourth step
    await expect(w.drain()).rejects.toThrow('crash');
    expect(w.order()).toMatchObject({ status: 'CONFIRMING', confirmed_batch_count: 3 * CONFIRMATION_STEP_BATCHES });
    const entriesBefore = w.confirmEntries.length;
    expect(entriesBefore).toBeGreaterThanOrEqual(3 * CONFIRMATION_STEP_BATCHES);
    expect(entriesBefore).toBeLessThan(N);

    w.noCrash();
    expect(w.queued).toHaveLength(1); // the message is redelivered
    await w.drain();
    expect(w.order()).toMatchObject({ status: 'CONFIRMED', confirmed_batch_count: N });
    expect(w.confirmEntries).toHaveLength(N);
    expect(new Set(w.confirmEntries).size).toBe(N);
    const expected = w.ids.filter((_, i) => warehoused(i));
    expect(w.commits).toHaveLength(expected.length);
    expect([...w.commits].sort()).toEqual(expected);
    // The progress advanced once per step, each from the count the step started at.
    expect(w.progress).toEqual(steps(N));

    // Confirming again is a no-op, and queues nothing.
    const again = await confirmPurchaseOrder(w.deps, caller, 'PO-1');
    expect(again).toEqual({ po: expect.objectContaining({ status: 'CONFIRMED' }), committed: [] });
    expect(w.queued).toHaveLength(0);
    expect(w.confirmEntries).toHaveLength(N);
  });

  it('two runs of the work at once (a message delivered twice) confirm each batch once and count every batch once', async () => {
    const w = world(N, warehoused);
    await confirmPurchaseOrder(w.deps, caller, 'PO-1');
    const m = w.queued.shift()!;
    await Promise.all([runOrderWork(w.deps, m), runOrderWork(w.deps, m)]);
    expect(w.order()).toMatchObject({ status: 'CONFIRMED', confirmed_batch_count: N });
    expect(new Set(w.confirmEntries).size).toBe(N);
    expect(w.confirmEntries).toHaveLength(N);
    expect(new Set(w.commits).size).toBe(w.commits.length);
  });

  it('a run starts no step after its time budget: the rest goes back on the queue as the same message', async () => {
    const w = world(N, () => false);
    let clock = Date.parse('2026-11-27T01:00:00.000Z');
    // Every reading of the clock is half the budget later than the one before: one step per run.
    w.deps.now = () => {
      clock += ORDER_WORK_BUDGET_MS / 2;
      return new Date(clock);
    };
    await confirmPurchaseOrder(w.deps, caller, 'PO-1');
    await runOrderWork(w.deps, w.queued.shift()!);
    const done = w.order().confirmed_batch_count!;
    expect(w.order().status).toBe('CONFIRMING');
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(N);
    expect(w.queued).toEqual([{ purchase_order_id: 'PO-1', work: 'CONFIRM' }]);
    expect(await w.drain()).toBeGreaterThan(1);
    expect(w.order()).toMatchObject({ status: 'CONFIRMED', confirmed_batch_count: N });
    expect(w.confirmEntries).toHaveLength(N);
    expect(w.progress).toEqual(steps(N));
  });

  it('an order of at most 40 batches keeps the one-transaction confirmation', async () => {
    const w = world(ORDER_TRANSACTION_MAX_BATCHES, () => false);
    let confirmedInOne = 0;
    w.deps.custody.confirmPurchaseOrder = async () => {
      confirmedInOne++;
      return true;
    };
    await confirmPurchaseOrder(w.deps, caller, 'PO-1');
    expect(confirmedInOne).toBe(1);
    expect(w.confirmEntries).toHaveLength(0);
  });
});

describe('settling a purchase order above one transaction (the order worker)', () => {
  const N = 3 * SETTLEMENT_STEP_BATCHES + 20;
  const ids = Array.from({ length: N }, (_, i) => `BATCH-2026-${String(i + 1).padStart(6, '0')}`);

  function world() {
    const stages = new Map<string, Stage>(ids.map((id) => [id, 'EXPORTED' as Stage]));
    const order: PurchaseOrder = {
      purchase_order_id: 'PO-1',
      status: 'CONFIRMED',
      cooperative_id: COOP,
      batch_ids: ids,
      buyer: 'B',
      price_usd_per_kg: 6.4,
      created_at: '2026-11-27T00:00:00.000Z',
      created_by: 'exporter-1',
      settled_at: '2026-11-27T02:00:00.000Z',
    };
    let settlement: Settlement = {
      purchase_order_id: 'PO-1',
      cooperative_id: COOP,
      status: 'STARTED',
      payment_tx_hash: '0xpay',
      payment_log_index: 1,
      payer: '0xb',
      amount_usd_micro: 1,
      settled_by: 'system:lending-vault',
      repayments: {
        'LOAN-1': {
          loan_id: 'LOAN-1',
          batch_id: ids[0]!,
          principal_usd_micro: 1,
          interest_usd_micro: 0,
          amount_usd_micro: 1,
          status: 'REQUESTED',
        },
      },
      unpaid_loan_ids: [],
      settled_batch_ids: ids,
      remainder_usd_micro: 0,
      remainder_status: 'NONE',
      created_at: '2026-11-27T02:00:00.000Z',
      updated_at: '2026-11-27T02:00:00.000Z',
    };
    const settledCommits: string[] = [];
    const progress: Array<[number, number]> = [];
    const audits: string[] = [];
    const writes: string[] = [];
    /** What the worker asked for, in order: `vault:<id>`, `ledger:<batch>` (a SETTLED record queued for the writer), `audits`. */
    const events: string[] = [];
    const queued: OrderWorkMessage[] = [];
    /** Messages queued with a delay (looked at again later). */
    const later: OrderWorkMessage[] = [];
    let failAt: { call: number; calls: number } | null = null;
    const unused = async (): Promise<never> => {
      throw new Error('not part of a settlement');
    };
    let clockStep = 0;
    let clock = Date.parse('2026-11-27T03:00:00.000Z');
    const deps: OrderWorkDeps = {
      batches: batchReads(async (id) => aBatch({ batch_id: id, cooperative_id: COOP, stage: stages.get(id)! })),
      custody: fakeCustodyStore({
        getPurchaseOrder: async () => structuredClone(order),
        commitStage: async (input) => {
          if (failAt && ++failAt.calls === failAt.call) throw new Error('crash: the function stopped half-way');
          if (stages.get(input.batchId) !== input.from) throw new StageConflictError(stages.get(input.batchId)!);
          stages.set(input.batchId, input.to);
          settledCommits.push(input.batchId);
          return { entry: { sequence_number: 9 } as never, ledgerTx: aLedgerTx({ batch_id: input.batchId, stage: input.to }) };
        },
        beginPurchaseOrderConfirmation: unused,
        confirmPurchaseOrderBatch: unused,
        recordConfirmationProgress: unused,
      }),
      evidence: fakeEvidenceKeeping(),
      ledgerQueue: {
        send: async (m) => {
          events.push(`ledger:${m.ledger_tx_id}`);
        },
      },
      orderWork: {
        send: async (m, opts) => {
          (opts?.delaySeconds ? later : queued).push(m);
        },
      },
      orderWorkIndex: memoryOrderWorkIndex(),
      // The settlement exists (the worker's start of it returns it as it is): its steps only.
      loans: { activeForBatches: unused },
      payouts: { get: unused },
      settlements: {
        start: unused,
        payments: unused,
        recordAmountDue: unused,
        get: async () => structuredClone(settlement),
        completeOrderAudits: async (poId, batchIds) => {
          audits.push(`${poId}:${batchIds.length}`);
          events.push('audits');
        },
        markWritesRequested: async () => {
          settlement = { ...settlement, writes_requested: true };
        },
        claimRun: async (_id, runId, now, until) => {
          if (settlement.run_until && settlement.run_until >= now && settlement.run_id !== runId) return false;
          settlement = { ...settlement, run_id: runId, run_until: until };
          return true;
        },
        releaseRun: async (_id, runId) => {
          if (settlement.run_id === runId) settlement = { ...settlement, run_id: undefined, run_until: undefined };
        },
        recordSettledProgress: async (_id, from, to) => {
          if ((settlement.settled_batch_count ?? 0) !== from) return false;
          settlement = { ...settlement, settled_batch_count: to };
          progress.push([from, to]);
          return true;
        },
      },
      vaultWrites: {
        request: async (id) => {
          writes.push(id);
          events.push(`vault:${id}`);
        },
      },
      now: () => {
        clock += clockStep;
        return new Date(clock);
      },
    };
    return {
      deps,
      stages,
      settledCommits,
      progress,
      audits,
      writes,
      events,
      queued,
      later,
      settlement: () => settlement,
      crashOnCall: (call: number) => {
        failAt = { call, calls: 0 };
      },
      noCrash: () => {
        failAt = null;
      },
      tick: (ms: number) => {
        clockStep = ms;
      },
    };
  }

  const settleSteps = (n: number) => {
    const out: Array<[number, number]> = [];
    for (let from = 0; from < n; from += SETTLEMENT_STEP_BATCHES) out.push([from, Math.min(n, from + SETTLEMENT_STEP_BATCHES)]);
    return out;
  };

  it("requests the ledger writes first: the vault writes, then every batch's SETTLED record, then the audit fan-out", async () => {
    const w = world();
    await runOrderWork(w.deps, { purchase_order_id: 'PO-1', work: 'SETTLE' });
    const ledger = w.events.filter((e) => e.startsWith('ledger:'));
    expect(ledger).toHaveLength(N);
    expect(w.events[0]).toBe('vault:PO-1-repays-0');
    // The audit fan-out comes last, once every SETTLED record is queued for the ledger writer.
    expect(w.events.indexOf('audits')).toBe(w.events.length - 1);
    expect(w.events.indexOf('audits')).toBeGreaterThan(w.events.lastIndexOf(ledger.at(-1)!));
  });

  it('two runs at once (the message delivered twice): one carries the settlement out, the other is queued again for later; nothing is requested twice', async () => {
    const w = world();
    await Promise.all([
      runOrderWork(w.deps, { purchase_order_id: 'PO-1', work: 'SETTLE' }),
      runOrderWork(w.deps, { purchase_order_id: 'PO-1', work: 'SETTLE' }),
    ]);
    expect(w.later).toEqual([{ purchase_order_id: 'PO-1', work: 'SETTLE' }]);
    expect(w.writes).toEqual(['PO-1-repays-0']);
    expect(w.audits).toEqual([`PO-1:${N}`]);
    const ledger = w.events.filter((e) => e.startsWith('ledger:'));
    expect(ledger).toHaveLength(N);
    expect(new Set(ledger).size).toBe(N);
    expect(w.settlement().run_id).toBeUndefined(); // released
    // The message looked at later finds the work done: nothing asked for again.
    await runOrderWork(w.deps, w.later.shift()!);
    expect(w.writes).toEqual(['PO-1-repays-0']);
    expect(w.events.filter((e) => e.startsWith('ledger:'))).toHaveLength(N);
    expect(w.later).toEqual([]);
  });

  it('fans out the audit entries, requests the vault writes and records every batch SETTLED once, in steps with recorded progress', async () => {
    const w = world();
    await runOrderWork(w.deps, { purchase_order_id: 'PO-1', work: 'SETTLE' });
    expect(w.audits).toEqual([`PO-1:${N}`]);
    expect(w.writes).toEqual(['PO-1-repays-0']);
    expect([...w.settledCommits].sort()).toEqual(ids);
    expect([...w.stages.values()].every((s) => s === 'SETTLED')).toBe(true);
    expect(w.progress).toEqual(settleSteps(N));
    expect(w.queued).toEqual([]);
    // Run again (a redelivered message): nothing settled or counted twice.
    await runOrderWork(w.deps, { purchase_order_id: 'PO-1', work: 'SETTLE' });
    expect(w.settledCommits).toHaveLength(N);
    expect(w.progress).toEqual(settleSteps(N));
  });

  it('a crash half-way: the redelivered message continues from the recorded progress; no batch settled twice, every step counted once', async () => {
    const w = world();
    w.crashOnCall(2 * SETTLEMENT_STEP_BATCHES + 5);
    await expect(runOrderWork(w.deps, { purchase_order_id: 'PO-1', work: 'SETTLE' })).rejects.toThrow('crash');
    expect(w.settlement().settled_batch_count).toBe(2 * SETTLEMENT_STEP_BATCHES);
    w.noCrash();
    await runOrderWork(w.deps, { purchase_order_id: 'PO-1', work: 'SETTLE' });
    expect(w.settledCommits).toHaveLength(N);
    expect(new Set(w.settledCommits).size).toBe(N);
    expect(w.progress).toEqual(settleSteps(N));
    // Nothing requested twice: the vault write once (before the crash), each batch's SETTLED record once.
    expect(w.writes).toEqual(['PO-1-repays-0']);
    const ledger = w.events.filter((e) => e.startsWith('ledger:'));
    expect(ledger).toHaveLength(N);
    expect(new Set(ledger).size).toBe(N);
    expect(w.events.filter((e) => e === 'audits')).toHaveLength(1);
  });

  it('a run starts no step after its budget: the rest is queued as the same message', async () => {
    const w = world();
    w.tick(ORDER_WORK_BUDGET_MS / 5);
    await runOrderWork(w.deps, { purchase_order_id: 'PO-1', work: 'SETTLE' });
    expect(w.queued).toEqual([{ purchase_order_id: 'PO-1', work: 'SETTLE' }]);
    const done = w.settlement().settled_batch_count ?? 0;
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(N);
    while (w.queued.length) await runOrderWork(w.deps, w.queued.shift()!);
    expect(w.settlement().settled_batch_count).toBe(N);
    expect(w.settledCommits).toHaveLength(N);
  });
});
