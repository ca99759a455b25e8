import { LedgerUnavailableError, ProviderUnavailableError } from '../../shared/domain/errors';
import type { Hex } from 'viem';
import type { ChainCursorStore, ChainLogSource, WatchedChainLog } from '../../shared/domain/ports/chain-watch';
import type { PurchaseOrderPayment } from '../../shared/domain/ports/lending';
import type { Batch, Payout, Stage, StageHistoryEntry } from '../../shared/domain/records';
import { logger } from '../../shared/runtime/logger';
import type { ChainEventDeps } from '../../shared/use-cases/chain-events';
import { chainEventId, runChainWatch, type ChainWatchConfig, type ChainWatchDeps } from '../../shared/use-cases/chain-watch';
import type { SettlementDeps } from '../../shared/use-cases/settlement';
import {
  aBatch,
  aCooperative,
  aFarmer,
  fakeBatchStore,
  fakeCustodyStore,
  fakeEvidenceKeeping,
  fakePayoutProvider,
  fakeGuardedPayoutStore,
  fakePayoutStore,
  fakePayoutWorkflow,
  fakeRegistryStore,
  fakeTraceLogReader,
  fakeWorkQueue,
} from './support/fakes';

/**
 * The scheduled chain watcher's run (shared/use-cases/chain-watch.ts) over a simulated chain, a
 * cursor store with the DynamoDB store's conditions (lease, cursor moved only from where its holder
 * found it), and the chain-events webhook's real use cases (applyChainEvent, applyBuyerPayment)
 * on fake ports: confirmations, ranges, chain order, failures that keep the cursor, idempotent
 * replays, and two runs at once.
 */

const CODES: Record<Stage, number> = { DELIVERED: 0, GRADED: 1, MILLED: 2, WAREHOUSED: 3, COMMITTED: 4, EXPORTED: 5, SETTLED: 6 };
const tx = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`;
const BATCH_A = 'BATCH-2026-000001';
const BATCH_B = 'BATCH-2026-000002';

/** A stage log of `batchId` at (block, logIndex) in its own transaction `tx(block * 100 + logIndex)`. */
function stageLog(batchId: string | null, stage: Stage | number, block: number, logIndex = 0): WatchedChainLog {
  const token = BigInt(aBatch({ batch_id: batchId ?? BATCH_A }).token_id);
  return {
    kind: 'StageRecorded',
    blockNumber: BigInt(block),
    logIndex,
    txHash: tx(block * 100 + logIndex),
    tokenId: token,
    stage: typeof stage === 'number' ? stage : CODES[stage],
    batchId,
  };
}

function paidLog(purchaseOrderId: string, block: number, logIndex = 0): WatchedChainLog {
  return {
    kind: 'PurchaseOrderPaid',
    blockNumber: BigInt(block),
    logIndex,
    txHash: tx(block * 100 + logIndex),
    purchaseOrderId,
    payer: `0x${'be'.repeat(20)}`,
    amountUsdMicro: 5_000_000n,
  };
}

/** A batch at `stage` whose history has every stage up to it, none of them mined yet (the ledger check carries the proof). */
function batchAt(batchId: string, stage: Stage): Batch {
  const order: Stage[] = ['DELIVERED', 'GRADED', 'MILLED', 'WAREHOUSED', 'COMMITTED', 'EXPORTED'];
  const history: StageHistoryEntry[] = order.slice(0, order.indexOf(stage) + 1).map((s, i) => ({
    stage: s,
    at: `2026-11-${String(10 + i).padStart(2, '0')}T08:00:00.000Z`,
    actor: 'coop-user',
    chain_tx_hash: null,
    audit_log_sequence_number: String(i + 1),
    evidence_ipfs_cid: null,
  }));
  return aBatch({ batch_id: batchId, stage, stage_history: history });
}

/** The chain: its head and its logs; `logsIn` answers from them, `failOn` makes a range's read fail. */
class FakeChain implements ChainLogSource {
  head = 0n;
  logs: WatchedChainLog[] = [];
  reads: Array<[number, number]> = [];
  failOn: ((from: bigint, to: bigint) => boolean) | undefined;
  gate: Promise<void> | undefined;

  async headBlock(): Promise<bigint> {
    return this.head;
  }

  async logsIn(from: bigint, to: bigint): Promise<WatchedChainLog[]> {
    this.reads.push([Number(from), Number(to)]);
    if (this.gate) await this.gate;
    if (this.failOn?.(from, to)) throw new LedgerUnavailableError('Ledger RPC failed during eth_getLogs: fetch failed');
    // Deliberately not in chain order: the run sorts.
    return this.logs.filter((l) => l.blockNumber >= from && l.blockNumber <= to).reverse();
  }
}

/** The cursor item with the DynamoDB store's conditional updates (shared/adapters/dynamodb/chain-cursor.ts). */
class FakeCursor implements ChainCursorStore {
  item: { next_block: number; lease_owner?: string; lease_until_ms: number } | undefined;

  async claim(owner: string, now: Date, leaseUntil: Date, startBlock: bigint) {
    if (this.item && this.item.lease_until_ms > now.getTime()) return null;
    this.item = { next_block: this.item?.next_block ?? Number(startBlock), lease_owner: owner, lease_until_ms: leaseUntil.getTime() };
    return { nextBlock: BigInt(this.item.next_block) };
  }

  async advance(owner: string, fromBlock: bigint, nextBlock: bigint) {
    if (!this.item || this.item.lease_owner !== owner || this.item.next_block !== Number(fromBlock)) return false;
    this.item.next_block = Number(nextBlock);
    return true;
  }

  async release(owner: string) {
    if (this.item?.lease_owner === owner) this.item = { next_block: this.item.next_block, lease_until_ms: 0 };
  }
}

/**
 * The world the events act on: batches, the trace log (answering from the simulated chain),
 * payouts with the (batch, reason) guard, webhook receipts, and the vault's buyer payments.
 */
function world(chain: FakeChain, opts: { providerDown?: () => boolean } = {}) {
  const batches = new Map<string, Batch>([
    [BATCH_A, batchAt(BATCH_A, 'EXPORTED')],
    [BATCH_B, batchAt(BATCH_B, 'MILLED')],
  ]);
  const receipts = new Set<string>();
  const applied: string[] = [];
  const created: Payout[] = [];
  let clock = new Date('2026-11-22T10:00:00.000Z');
  const now = () => clock;
  const receiptStore = {
    hasWebhook: async (source: string, id: string) => {
      applied.push(id);
      return receipts.has(`${source}#${id}`);
    },
    claimWebhook: async (source: string, id: string) => {
      const k = `${source}#${id}`;
      if (receipts.has(k)) return false;
      receipts.add(k);
      return true;
    },
  };
  const stageEvents: ChainEventDeps = {
    now,
    registry: fakeRegistryStore({
      getCooperative: async (id) => aCooperative({ cooperative_id: id, export_premium_ugx_per_kg: 400 }),
      getFarmer: async (id) => aFarmer({ farmer_id: id, phone: '+256772000123' }),
    }),
    batches: fakeBatchStore({ get: async (id) => batches.get(id) ?? null, setPaymentStatus: async () => undefined }),
    payouts: fakeGuardedPayoutStore(created),
    provider: fakePayoutProvider({
      quote: async () => ({ quote_id: 'q1', rate: '3700.25', expires_at: '2026-11-22T10:01:00.000Z' }),
      createOrder: async (o) => {
        if (opts.providerDown?.()) throw new ProviderUnavailableError();
        return {
          order_id: `ord_${o.reference}`,
          reference: o.reference,
          status: 'PENDING',
          amount_usd_micro: o.amount_usd_micro,
          amount_ugx: 96_300,
          exchange_rate: '3700.25',
          recipient: o.recipient,
          created_at: clock.toISOString(),
        };
      },
      findOrderByReference: async () => null,
    }),
    workflow: fakePayoutWorkflow({ start: async () => undefined }),
    receipts: receiptStore,
    traceLog: fakeTraceLogReader({
      stageRecordedAt: async (txHash, logIndex) => {
        const l = chain.logs.find((x) => x.txHash === txHash && x.logIndex === logIndex);
        return l?.kind === 'StageRecorded'
          ? { tokenId: l.tokenId, stage: l.stage, evidenceCid: 'bafk', auditHash: `0x${'cd'.repeat(32)}`, blockNumber: l.blockNumber }
          : null;
      },
    }),
  };
  // Buyer payments for purchase orders the service does not know: checked against the vault's log, then UNKNOWN_PURCHASE_ORDER.
  const notHere = (what: string) => async (): Promise<never> => {
    throw new Error(`${what} is not reached: the watcher's purchase orders are unknown`);
  };
  const buyerPayments: SettlementDeps = {
    receipts: receiptStore,
    batches: fakeBatchStore({ get: notHere('batches.get') }),
    loans: { activeForBatches: notHere('loans.activeForBatches') },
    payouts: fakePayoutStore({ get: notHere('payouts.get') }),
    settlements: {
      start: notHere('settlements.start'),
      completeOrderAudits: notHere('settlements.completeOrderAudits'),
      recordSettledProgress: notHere('settlements.recordSettledProgress'),
      markWritesRequested: notHere('settlements.markWritesRequested'),
      claimRun: notHere('settlements.claimRun'),
      releaseRun: notHere('settlements.releaseRun'),
      requestSettlement: notHere('settlements.requestSettlement'),
      get: notHere('settlements.get'),
      recordRepayment: notHere('settlements.recordRepayment'),
      recordRemainder: notHere('settlements.recordRemainder'),
      // A payment for an unknown order is kept as an unapplied payment (refundable), nothing else.
      recordPayment: async (payment) => {
        expect(payment).toMatchObject({ status: 'UNAPPLIED', unapplied_reason: 'UNKNOWN_PURCHASE_ORDER' });
        return { payment, created: true };
      },
      payments: notHere('settlements.payments'),
      getPayment: notHere('settlements.getPayment'),
      recordAmountDue: notHere('settlements.recordAmountDue'),
      requestRefund: notHere('settlements.requestRefund'),
      recordRefund: notHere('settlements.recordRefund'),
    },
    vaultWrites: { request: notHere('vaultWrites.request') },
    evidence: fakeEvidenceKeeping(),
    ledgerQueue: fakeWorkQueue('ledger-write-queue'),
    orderWork: { send: notHere('orderWork.send') },
    orderWorkIndex: { markSettleWork: notHere('orderWorkIndex.markSettleWork') },
    vault: {
      purchaseOrderPaymentsInTx: async (txHash: Hex): Promise<PurchaseOrderPayment[]> =>
        chain.logs.flatMap((l) =>
          l.kind === 'PurchaseOrderPaid' && l.txHash === txHash
            ? [
                {
                  purchaseOrderId: l.purchaseOrderId!,
                  payer: l.payer,
                  amountUsdMicro: l.amountUsdMicro,
                  txHash: l.txHash,
                  logIndex: l.logIndex,
                  blockNumber: l.blockNumber,
                },
              ]
            : [],
        ),
    },
    custody: fakeCustodyStore({ getPurchaseOrder: async () => null }),
    now,
  };
  const cursor = new FakeCursor();
  const deps: ChainWatchDeps = { source: chain, cursor, stageEvents, buyerPayments, now };
  return {
    deps,
    cursor,
    batches,
    receipts,
    applied,
    created,
    tick: (ms: number) => {
      clock = new Date(clock.getTime() + ms);
    },
  };
}

const CONFIG: ChainWatchConfig = { confirmations: 3, startBlock: 0n, maxBlocksPerRange: 4, maxRangesPerRun: 10, leaseMs: 120_000 };

beforeAll(() => logger.setLogLevel('SILENT'));

describe('runChainWatch', () => {
  it('reads from the cursor to head − confirmations in bounded ranges, applies every event in chain order, and advances past each range', async () => {
    const chain = new FakeChain();
    chain.head = 12n;
    chain.logs = [
      stageLog(BATCH_A, 'GRADED', 2, 1),
      paidLog('PO-2026-000009', 2, 0),
      stageLog(BATCH_A, 'EXPORTED', 7),
      stageLog(BATCH_B, 'MILLED', 11),
    ];
    const w = world(chain);

    const report = await runChainWatch(w.deps, CONFIG, 'run-1');

    // safe head 12 − 3 = 9: blocks 0–9 in ranges of 4; block 11 is not deep enough yet
    expect(chain.reads).toEqual([
      [0, 3],
      [4, 7],
      [8, 9],
    ]);
    expect(report).toEqual({
      outcome: 'CAUGHT_UP',
      from_block: 0,
      next_block: 10,
      head_block: 12,
      ranges: 3,
      outcomes: { UNKNOWN_PURCHASE_ORDER: 1, NOTED: 1, STARTED: 1 },
      skipped: 0,
    });
    expect(w.applied).toEqual([chainEventId(tx(200), 0), chainEventId(tx(201), 1), chainEventId(tx(700), 0)]);
    expect(w.created.map((p) => [p.batch_id, p.reason, p.estimated_ugx])).toEqual([[BATCH_A, 'TOP_UP', 96_300]]);
    expect(w.cursor.item).toEqual({ next_block: 10, lease_until_ms: 0 }); // advanced, lease given up

    // Three more blocks: block 11 is now 3 deep
    chain.head = 14n;
    const next = await runChainWatch(w.deps, CONFIG, 'run-2');
    expect(next).toMatchObject({ outcome: 'CAUGHT_UP', from_block: 10, next_block: 12, ranges: 1, outcomes: { NOTED: 1 } });
    expect(w.applied.at(-1)).toBe(chainEventId(tx(1100), 0));
    expect(w.created).toHaveLength(1);
  });

  it("applies a range's buyer payments before its stage events (each in chain order): stage events never hold a payment back", async () => {
    const chain = new FakeChain();
    chain.head = 6n;
    chain.logs = [
      stageLog(BATCH_A, 'GRADED', 1),
      stageLog(BATCH_B, 'MILLED', 1, 1),
      stageLog(BATCH_A, 'EXPORTED', 2),
      paidLog('PO-2026-000010', 3, 0),
      paidLog('PO-2026-000011', 3, 1),
    ];
    const w = world(chain);
    const report = await runChainWatch(w.deps, { ...CONFIG, confirmations: 0, maxBlocksPerRange: 10 }, 'run-1');
    expect(report).toMatchObject({ outcome: 'CAUGHT_UP', ranges: 1, outcomes: { UNKNOWN_PURCHASE_ORDER: 2, NOTED: 2, STARTED: 1 } });
    expect(w.applied).toEqual([
      chainEventId(tx(300), 0),
      chainEventId(tx(301), 1),
      chainEventId(tx(100), 0),
      chainEventId(tx(101), 1),
      chainEventId(tx(200), 0),
    ]);
  });

  it('reads nothing while no block is deep enough; confirmations 0 reads up to the head', async () => {
    const chain = new FakeChain();
    chain.head = 2n;
    chain.logs = [stageLog(BATCH_A, 'EXPORTED', 2)];
    const w = world(chain);
    expect(await runChainWatch(w.deps, { ...CONFIG, confirmations: 3 }, 'r1')).toMatchObject({
      outcome: 'CAUGHT_UP',
      from_block: 0,
      next_block: 0,
      ranges: 0,
    });
    expect(chain.reads).toEqual([]);
    expect(await runChainWatch(w.deps, { ...CONFIG, confirmations: 0 }, 'r2')).toMatchObject({
      outcome: 'CAUGHT_UP',
      next_block: 3,
      outcomes: { STARTED: 1 },
    });
  });

  it('starts a new cursor at the start block', async () => {
    const chain = new FakeChain();
    chain.head = 100n;
    chain.logs = [stageLog(BATCH_A, 'EXPORTED', 20)];
    const w = world(chain);
    const r = await runChainWatch(w.deps, { ...CONFIG, confirmations: 0, startBlock: 50n, maxBlocksPerRange: 100 }, 'r1');
    expect(chain.reads).toEqual([[50, 100]]);
    expect(r).toMatchObject({ from_block: 50, next_block: 101, outcomes: {} });
    expect(w.created).toEqual([]);
  });

  it('stops after maxRangesPerRun ranges (MORE_TO_READ); the next run goes on from there', async () => {
    const chain = new FakeChain();
    chain.head = 20n;
    const w = world(chain);
    const cfg = { ...CONFIG, confirmations: 0, maxBlocksPerRange: 5, maxRangesPerRun: 2 };
    expect(await runChainWatch(w.deps, cfg, 'r1')).toMatchObject({ outcome: 'MORE_TO_READ', next_block: 10, ranges: 2 });
    expect(await runChainWatch(w.deps, cfg, 'r2')).toMatchObject({ outcome: 'MORE_TO_READ', from_block: 10, next_block: 20, ranges: 2 });
    expect(await runChainWatch(w.deps, cfg, 'r3')).toMatchObject({ outcome: 'CAUGHT_UP', from_block: 20, next_block: 21, ranges: 1 });
    expect(chain.reads).toEqual([
      [0, 4],
      [5, 9],
      [10, 14],
      [15, 19],
      [20, 20],
    ]);
  });

  it('a failed range leaves the cursor before it; the next run reads it again and what was applied is a replay', async () => {
    const chain = new FakeChain();
    chain.head = 10n;
    chain.logs = [stageLog(BATCH_A, 'GRADED', 5, 0), stageLog(BATCH_A, 'EXPORTED', 6, 0)];
    let providerDown = true;
    const w = world(chain, { providerDown: () => providerDown });
    const cfg = { ...CONFIG, confirmations: 0 };

    // The payout provider is unreachable: GRADED (block 5) is applied, EXPORTED (block 6) throws
    const failed = await runChainWatch(w.deps, cfg, 'r1');
    expect(failed).toMatchObject({ outcome: 'FAILED', from_block: 0, next_block: 4, ranges: 1, outcomes: { NOTED: 1 } });
    expect(failed.error).toMatch(/payout provider|unavailable/i);
    expect(w.cursor.item).toEqual({ next_block: 4, lease_until_ms: 0 });
    expect(w.created).toEqual([]);

    // The ledger endpoint fails on that range: nothing moves
    providerDown = false;
    chain.failOn = (from) => from === 4n;
    expect(await runChainWatch(w.deps, cfg, 'r2')).toMatchObject({
      outcome: 'FAILED',
      next_block: 4,
      ranges: 0,
      error: expect.stringMatching(/eth_getLogs/),
    });

    // Both back: the range is read again; GRADED is a replay, EXPORTED starts the TOP_UP once
    chain.failOn = undefined;
    expect(await runChainWatch(w.deps, cfg, 'r3')).toMatchObject({
      outcome: 'CAUGHT_UP',
      from_block: 4,
      next_block: 11,
      outcomes: { DUPLICATE_WEBHOOK: 1, STARTED: 1 },
    });
    expect(w.created.map((p) => p.reason)).toEqual(['TOP_UP']);
  });

  it('events a provider webhook already reported are replays: nothing is done twice', async () => {
    const chain = new FakeChain();
    chain.head = 8n;
    chain.logs = [stageLog(BATCH_A, 'EXPORTED', 3), paidLog('PO-2026-000009', 4)];
    const w = world(chain);
    // The webhook path delivered both under the same ids
    w.receipts.add(`chain-events#${chainEventId(tx(300), 0)}`);
    w.receipts.add(`chain-events#${chainEventId(tx(400), 0)}`);
    expect(await runChainWatch(w.deps, { ...CONFIG, confirmations: 0 }, 'r1')).toMatchObject({
      outcome: 'CAUGHT_UP',
      outcomes: { DUPLICATE_WEBHOOK: 2 },
    });
    expect(w.created).toEqual([]);

    // A cursor set back (or a watcher run in two places) re-reads everything: still nothing twice
    const again = world(chain);
    expect(await runChainWatch(again.deps, { ...CONFIG, confirmations: 0 }, 'a1')).toMatchObject({
      outcomes: { STARTED: 1, UNKNOWN_PURCHASE_ORDER: 1 },
    });
    again.cursor.item = { next_block: 0, lease_until_ms: 0 };
    expect(await runChainWatch(again.deps, { ...CONFIG, confirmations: 0 }, 'a2')).toMatchObject({ outcomes: { DUPLICATE_WEBHOOK: 2 } });
    expect(again.created).toHaveLength(1);
  });

  it('skips logs that cannot be events (unknown stage code, token without a batch id) and goes on', async () => {
    const chain = new FakeChain();
    chain.head = 5n;
    chain.logs = [stageLog(null, 'GRADED', 1), stageLog(BATCH_A, 42, 2), stageLog(BATCH_A, 'EXPORTED', 3)];
    const w = world(chain);
    expect(await runChainWatch(w.deps, { ...CONFIG, confirmations: 0 }, 'r1')).toMatchObject({
      outcome: 'CAUGHT_UP',
      skipped: 2,
      outcomes: { STARTED: 1 },
      next_block: 6,
    });
  });

  it('two runs at once: one holds the lease and reads, the other is BUSY and reads nothing', async () => {
    const chain = new FakeChain();
    chain.head = 9n;
    chain.logs = [stageLog(BATCH_A, 'EXPORTED', 3)];
    const w = world(chain);
    let open!: () => void;
    chain.gate = new Promise<void>((resolve) => (open = resolve));
    const first = runChainWatch(w.deps, { ...CONFIG, confirmations: 0 }, 'r1');
    const second = await runChainWatch(w.deps, { ...CONFIG, confirmations: 0 }, 'r2');
    expect(second).toEqual({ outcome: 'BUSY', ranges: 0, outcomes: {}, skipped: 0 });
    open();
    expect(await first).toMatchObject({ outcome: 'CAUGHT_UP', next_block: 10, outcomes: { STARTED: 1 } });
    expect(chain.reads).toEqual([
      [0, 3],
      [4, 7],
      [8, 9],
    ]); // every range read once, by r1
    expect(w.created).toHaveLength(1);
    // Once r1 gave the lease up, the next run takes it
    expect(await runChainWatch(w.deps, { ...CONFIG, confirmations: 0 }, 'r3')).toMatchObject({
      outcome: 'CAUGHT_UP',
      from_block: 10,
      ranges: 0,
    });
  });

  it('a run whose lease expired cannot move the cursor: the run that took over owns it (LEASE_LOST), and no range starts in the second half of a lease', async () => {
    const chain = new FakeChain();
    chain.head = 9n;
    chain.logs = [stageLog(BATCH_A, 'EXPORTED', 3)];
    const w = world(chain);
    let open!: () => void;
    chain.gate = new Promise<void>((resolve) => (open = resolve));
    const stale = runChainWatch(w.deps, { ...CONFIG, confirmations: 0 }, 'stale');
    await new Promise((r) => setImmediate(r));
    w.tick(CONFIG.leaseMs + 1); // a lease outlived (a function killed mid-run, say)
    chain.gate = undefined;
    const takeover = runChainWatch(w.deps, { ...CONFIG, confirmations: 0 }, 'takeover');
    open();
    expect(await takeover).toMatchObject({ outcome: 'CAUGHT_UP', from_block: 0, next_block: 10 });
    const s = await stale;
    expect(s.outcome).toBe('LEASE_LOST');
    expect(w.cursor.item).toEqual({ next_block: 10, lease_until_ms: 0 });
    expect(w.created).toHaveLength(1); // the payout guard: one TOP_UP however many runs saw the event

    // Half a lease gone before the next range: the run stops there (MORE_TO_READ) and gives the lease up
    chain.head = 30n;
    const slow = {
      ...w.deps,
      source: {
        headBlock: () => chain.headBlock(),
        logsIn: async (f: bigint, t: bigint) => {
          w.tick(CONFIG.leaseMs / 2);
          return chain.logsIn(f, t);
        },
      },
    };
    expect(await runChainWatch(slow, { ...CONFIG, confirmations: 0 }, 'slow')).toMatchObject({
      outcome: 'MORE_TO_READ',
      ranges: 1,
      next_block: 14,
    });
  });

  it('no poison event: an event that fails in every allowed run is parked (kept for operators) and no longer holds the cursor; outages are not counted', async () => {
    const chain = new FakeChain();
    chain.head = 10n;
    const BROKEN = 'BATCH-2026-000099';
    chain.logs = [stageLog(BROKEN, 'GRADED', 2, 0), stageLog(BATCH_B, 'GRADED', 5, 0)];
    const w = world(chain);
    const readBatch = w.deps.stageEvents.batches.get;
    let outage = false;
    w.deps.stageEvents.batches.get = async (id) => {
      if (outage) throw new ProviderUnavailableError();
      if (id === BROKEN) throw new Error('the batch item of BATCH-2026-000099 is corrupt');
      return readBatch(id);
    };
    const failures = new Map<string, number>();
    const parked: Array<{ id: string; reason: string }> = [];
    let metric = 0;
    w.deps.parking = {
      eventFailed: async (id) => {
        failures.set(id, (failures.get(id) ?? 0) + 1);
        return failures.get(id)!;
      },
      park: async (id, _event, reason) => void parked.push({ id, reason }),
      parked: async () => [],
      discard: async () => false,
    };
    w.deps.parkedMetric = () => void metric++;
    const cfg = { ...CONFIG, confirmations: 0, maxEventAttempts: 3 };

    // A transient outage (503-class) is retried without counting: the cursor waits, nothing is parked.
    outage = true;
    for (const run of ['o1', 'o2', 'o3', 'o4'])
      expect(await runChainWatch(w.deps, cfg, run)).toMatchObject({ outcome: 'FAILED', next_block: 0 });
    expect(failures.size).toBe(0);
    outage = false;

    for (const run of ['r1', 'r2']) {
      expect(await runChainWatch(w.deps, cfg, run)).toMatchObject({
        outcome: 'FAILED',
        next_block: 0,
        error: expect.stringMatching(/corrupt/),
      });
    }
    const third = await runChainWatch(w.deps, cfg, 'r3');
    expect(third).toMatchObject({ outcome: 'CAUGHT_UP', next_block: 11, parked: 1, outcomes: { NOTED: 1 } });
    expect(parked).toEqual([{ id: chainEventId(tx(200), 0), reason: expect.stringMatching(/^parked after 3 failed runs: .*corrupt/) }]);
    expect(metric).toBe(1);
    expect(w.cursor.item).toEqual({ next_block: 11, lease_until_ms: 0 });
  });
});
