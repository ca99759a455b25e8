import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { WebhookReceipts } from '../../shared/adapters/dynamodb/webhook-receipts';
import { LedgerUnavailableError, ProviderUnavailableError } from '../../shared/domain/errors';
import type { Hex } from 'viem';
import type { RecordedStage } from '../../shared/domain/ports/ledger';
import type { PayoutProvider } from '../../shared/domain/ports/payouts';
import type { Batch, Payout, Stage, StageHistoryEntry } from '../../shared/domain/records';
import { toErrorResponse } from '../../shared/http/handler';
import { logger } from '../../shared/runtime/logger';
import { applyChainEvent, CHAIN_EVENT_ALARM, type ChainEvent, type ChainEventDeps } from '../../shared/use-cases/chain-events';
import { domainErrorOf } from './support/errors';
import {
  aBatch,
  aCooperative,
  aFarmer,
  fakeBatchStore,
  fakePayoutProvider,
  fakeGuardedPayoutStore,
  fakePayoutWorkflow,
  fakeRegistryStore,
  fakeTraceLogReader,
} from './support/fakes';

/**
 * Chain events (docs/api/batches-and-custody.md#batch-submission TOP_UP, docs/api/inbound-webhooks.md#chain-events): what a verified `batch.stage_changed` event does.
 * The transport (signature, webhook-id, JSON, body schema) is tested in webhook.test.ts.
 */

const ddb = mockClient(DynamoDBDocumentClient);
const BATCH_ID = 'BATCH-2026-000777';
const TX = `0x${'ab'.repeat(32)}`;
const TOKEN_ID = '2026000000000777';
const STAGE_ORDER: Stage[] = ['DELIVERED', 'GRADED', 'MILLED', 'WAREHOUSED', 'COMMITTED', 'EXPORTED'];
const CODES: Record<Stage, number> = { DELIVERED: 0, GRADED: 1, MILLED: 2, WAREHOUSED: 3, COMMITTED: 4, EXPORTED: 5, SETTLED: 6 };

/** The stage history of a batch that went up to `stage`; that stage's entry was recorded by `tx` (TX by default). */
function historyUpTo(stage: Stage, tx: string | null = TX): StageHistoryEntry[] {
  return STAGE_ORDER.slice(0, STAGE_ORDER.indexOf(stage) + 1).map((s, i) => ({
    stage: s,
    at: `2026-11-${String(10 + i).padStart(2, '0')}T08:00:00.000Z`,
    actor: 'coop-user',
    chain_tx_hash: s === stage ? tx : `0x${String(i).repeat(64)}`,
    audit_log_sequence_number: String(i + 1),
    evidence_ipfs_cid: null,
  }));
}

/** The StageRecorded log the ledger holds for `stage` of the batch's token (what the fake trace log answers by default). */
const recorded = (stage: Stage, over: Partial<RecordedStage> = {}): RecordedStage => ({
  tokenId: BigInt(TOKEN_ID),
  stage: CODES[stage],
  evidenceCid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
  auditHash: `0x${'cd'.repeat(32)}`,
  blockNumber: 42n,
  ...over,
});

/** The table, as far as webhook receipts go: conditional puts and consistent gets on a Map. */
let table: Map<string, Record<string, unknown>>;

beforeAll(() => {
  logger.setLogLevel('SILENT');
  process.env.TABLE_NAME = 't';
  process.env.DOCS_BASE_URL = 'http://x/docs';
  process.env.AWS_REGION = 'eu-west-1';
});

beforeEach(() => {
  table = new Map();
  ddb.reset();
  ddb.onAnyCommand().rejects(new Error('unexpected DynamoDB command in this test'));
  ddb.on(GetCommand).callsFake((input: { Key: { PK: string; SK: string } }) => ({ Item: table.get(`${input.Key.PK}|${input.Key.SK}`) }));
  ddb.on(PutCommand).callsFake((input: { Item: Record<string, unknown>; ConditionExpression?: string }) => {
    const k = `${String(input.Item.PK)}|${String(input.Item.SK)}`;
    if (input.ConditionExpression === 'attribute_not_exists(PK)' && table.has(k)) {
      throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
    }
    table.set(k, input.Item);
    return {};
  });
});

const batch = (over: Partial<Batch> = {}): Batch =>
  aBatch({
    batch_id: BATCH_ID,
    batch_year: 2026,
    batch_number: 777,
    token_id: '2026000000000777',
    farmer_id: 'F-1',
    cooperative_id: 'COOP-1',
    weight_kg: 240.75,
    grade: 'screen18',
    moisture_pct: 11.5,
    collection_point_gps: { lat: 1.08, lng: 34.17 },
    collector_agent_id: 'A-1',
    stage: 'EXPORTED',
    mint_status: 'CONFIRMED',
    audit_seq: 6,
    audit_head_hash: 'h',
    stage_history: historyUpTo(over.stage ?? 'EXPORTED'),
    payment_status: 'PAYMENT_CONFIRMED',
    payment_amount_ugx: 2_359_350,
    payout_seq: 1,
    submitted_by: 'coop-user',
    created_at: '2026-11-01T08:00:00.000Z',
    updated_at: '2026-11-20T08:00:00.000Z',
    ...over,
  });

const cooperative = (premium: number) => aCooperative({ cooperative_id: 'COOP-1', export_premium_ugx_per_kg: premium });

/**
 * Fake payout ports that behave like the repository where it matters: the (batch, reason) guard
 * makes a second creation DUPLICATE_PAYOUT, and discarding an unsent payout removes its guard.
 * Webhook receipts are the DynamoDB adapter on the mocked client above.
 */
function fakeDeps(
  opts: {
    premium?: number;
    batch?: Batch | null;
    phone?: string | null;
    providerDown?: boolean;
    /** What the trace log holds at (tx, log index): by default the batch's current stage's log at (TX, 0); 'down' throws. */
    ledger?: Map<string, RecordedStage> | 'down' | Error;
  } = {},
) {
  const lookups: Array<[Hex, number]> = [];
  const created: Payout[] = [];
  const quotes: Array<Parameters<PayoutProvider['quote']>[0]> = [];
  const started: string[] = [];
  const b = opts.batch === undefined ? batch() : opts.batch;
  const logs = opts.ledger ?? new Map([[`${TX}#0`, recorded(b?.stage ?? 'EXPORTED')]]);
  const deps: ChainEventDeps = {
    now: () => new Date('2026-11-22T10:00:00.000Z'),
    registry: fakeRegistryStore({
      getCooperative: async (id) => (id === 'COOP-1' ? cooperative(opts.premium ?? 400) : null),
      getFarmer: async (id) =>
        aFarmer({
          farmer_id: id,
          cooperative_id: 'COOP-1',
          full_name: 'Joseph Wamala',
          phone: opts.phone === null ? undefined : (opts.phone ?? '+256772000123'),
        }),
    }),
    batches: fakeBatchStore({ get: async (id) => (b && id === b.batch_id ? b : null), setPaymentStatus: async () => undefined }),
    payouts: fakeGuardedPayoutStore(created),
    provider: fakePayoutProvider({
      quote: async (q) => {
        quotes.push(q);
        return { quote_id: 'q1', rate: '3700.25', expires_at: '2026-11-22T10:01:00.000Z' };
      },
      createOrder: async (o) => {
        if (opts.providerDown) throw new ProviderUnavailableError();
        return {
          order_id: 'ord_1',
          reference: o.reference,
          status: 'PENDING',
          amount_usd_micro: o.amount_usd_micro,
          amount_ugx: 96_300,
          exchange_rate: '3700.25',
          recipient: o.recipient,
          created_at: '2026-11-22T10:00:00.000Z',
        };
      },
      findOrderByReference: async () => null, // asked after an unreachable creation: no order was placed
    }),
    workflow: fakePayoutWorkflow({
      start: async (id) => {
        started.push(id);
      },
    }),
    receipts: new WebhookReceipts(),
    traceLog: fakeTraceLogReader({
      stageRecordedAt: async (txHash, logIndex) => {
        lookups.push([txHash, logIndex]);
        if (logs === 'down') throw new LedgerUnavailableError('Ledger RPC failed during eth_getTransactionReceipt: fetch failed');
        if (logs instanceof Error) throw logs;
        return logs.get(`${txHash}#${logIndex}`) ?? null;
      },
    }),
  };
  return { deps, created, quotes, started, lookups };
}

/** A verified delivery as the transport hands it to the use case. */
function delivery(event: ChainEvent, webhookId = `evt_${TX}_0`) {
  return { webhookId, event };
}

const stageChanged = (over: Partial<ChainEvent['data']> = {}): ChainEvent => ({
  type: 'batch.stage_changed',
  data: { batch_id: BATCH_ID, token_id: TOKEN_ID, stage: 'EXPORTED', tx_hash: TX, block_number: 42, log_index: 0, ...over },
});

const receiptPuts = () => ddb.commandCalls(PutCommand).filter((c) => String(c.args[0].input.Item?.PK).startsWith('WEBHOOK#chain-events#'));

describe('applyChainEvent', () => {
  it('EXPORTED starts the TOP_UP payout once: round(240.75 kg × 400) = 96,300 UGX, then claims the receipt', async () => {
    const f = fakeDeps();
    const r = await applyChainEvent(f.deps, delivery(stageChanged()));
    expect(r).toEqual({ received: true, outcome: 'STARTED', payout_id: 'PAY-2026-000777-02' });
    expect(f.quotes).toEqual([{ amount_ugx: 96_300 }]);
    expect(f.created).toHaveLength(1);
    expect(f.created[0]).toMatchObject({
      reason: 'TOP_UP',
      batch_id: BATCH_ID,
      farmer_id: 'F-1',
      cooperative_id: 'COOP-1',
      created_by: 'system',
      estimated_ugx: 96_300,
    });
    expect(f.started).toEqual(['PAY-2026-000777-02']);
    expect(receiptPuts()).toHaveLength(1);
    expect(table.get(`WEBHOOK#chain-events#evt_${TX}_0|META`)).toMatchObject({
      entity: 'WEBHOOK',
      received_at: '2026-11-22T10:00:00.000Z',
      expires_at_epoch: expect.any(Number),
    });
  });

  it('answers a replayed webhook-id 200 DUPLICATE_WEBHOOK without applying it again', async () => {
    const f = fakeDeps();
    const w = delivery(stageChanged(), 'evt_same');
    expect((await applyChainEvent(f.deps, w)).outcome).toBe('STARTED');
    expect(await applyChainEvent(f.deps, delivery(stageChanged(), 'evt_same'))).toEqual({ received: true, outcome: 'DUPLICATE_WEBHOOK' });
    expect(f.quotes).toHaveLength(1);
    expect(f.created).toHaveLength(1);
    expect(receiptPuts()).toHaveLength(1);
  });

  it('pays once when the same EXPORTED event comes under two webhook-ids: the second is DUPLICATE_PAYOUT → ALREADY_STARTED', async () => {
    const f = fakeDeps();
    expect((await applyChainEvent(f.deps, delivery(stageChanged(), 'evt_a'))).outcome).toBe('STARTED');
    expect(await applyChainEvent(f.deps, delivery(stageChanged(), 'evt_b'))).toEqual({ received: true, outcome: 'ALREADY_STARTED' });
    expect(f.created).toHaveLength(1);
    expect(f.started).toHaveLength(1);
    expect(receiptPuts()).toHaveLength(2); // both ids are now known replays
  });

  it('creates no payout when the cooperative has no export premium (NO_PREMIUM)', async () => {
    const f = fakeDeps({ premium: 0 });
    expect(await applyChainEvent(f.deps, delivery(stageChanged()))).toEqual({ received: true, outcome: 'NO_PREMIUM' });
    expect(f.quotes).toHaveLength(0);
    expect(f.created).toHaveLength(0);
    expect(receiptPuts()).toHaveLength(1);
  });

  it('notes other stages without paying (GRADED → NOTED)', async () => {
    const f = fakeDeps({ batch: batch({ stage: 'GRADED' }) });
    expect(await applyChainEvent(f.deps, delivery(stageChanged({ stage: 'GRADED' })))).toEqual({ received: true, outcome: 'NOTED' });
    expect(f.quotes).toHaveLength(0);
    expect(f.created).toHaveLength(0);
  });

  it("refuses to act on a token id that is not the batch's (TOKEN_MISMATCH) or an unknown batch (UNKNOWN_BATCH)", async () => {
    const f = fakeDeps();
    expect((await applyChainEvent(f.deps, delivery(stageChanged({ token_id: '999' }), 'evt_m'))).outcome).toBe('TOKEN_MISMATCH');
    expect((await applyChainEvent(f.deps, delivery(stageChanged({ batch_id: 'BATCH-2026-000001' }), 'evt_u'))).outcome).toBe(
      'UNKNOWN_BATCH',
    );
    expect(f.created).toHaveLength(0);
  });

  it('farmer without a phone: NOT_PAYABLE, acknowledged', async () => {
    const f = fakeDeps({ phone: null });
    expect((await applyChainEvent(f.deps, delivery(stageChanged()))).outcome).toBe('NOT_PAYABLE');
    expect(f.created).toHaveLength(0);
  });

  it('provider unreachable: 503 PROVIDER_UNAVAILABLE, no payout left and no receipt, so the retry with the same id pays', async () => {
    const down = fakeDeps({ providerDown: true });
    const err = await domainErrorOf(applyChainEvent(down.deps, delivery(stageChanged(), 'evt_retry')));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(toErrorResponse(err, '01J00000000000000000000000').statusCode).toBe(503);
    expect(down.created).toHaveLength(0);
    expect(receiptPuts()).toHaveLength(0);
    expect(table.size).toBe(0);

    // The sender retries with the same webhook-id once the provider is back.
    const up = fakeDeps();
    expect((await applyChainEvent(up.deps, delivery(stageChanged(), 'evt_retry'))).outcome).toBe('STARTED');
    expect(up.created).toHaveLength(1);
    expect(receiptPuts()).toHaveLength(1);
  });
});

describe('applyChainEvent checks the event against the batch and the trace log before acting (issue 9)', () => {
  const FORGED = `0x${'f0'.repeat(32)}`;
  let errors: jest.SpyInstance;
  beforeEach(() => {
    errors = jest.spyOn(logger, 'error');
  });
  afterEach(() => errors.mockRestore());

  /** A MISMATCH: 200-acknowledged, nothing paid, quoted, started or written (not even a receipt), logged as an alarm. */
  const expectMismatch = (r: Awaited<ReturnType<typeof applyChainEvent>>, f: ReturnType<typeof fakeDeps>, reason: RegExp) => {
    expect(r).toEqual({ received: true, outcome: 'MISMATCH' });
    expect(f.quotes).toHaveLength(0);
    expect(f.created).toHaveLength(0);
    expect(f.started).toHaveLength(0);
    expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
    expect(errors).toHaveBeenCalledWith(
      expect.any(String),
      expect.objectContaining({ alarm: CHAIN_EVENT_ALARM, reason: expect.stringMatching(reason) }),
    );
  };

  it('the reported attack: a signed EXPORTED event for a batch still at DELIVERED, with a made-up tx_hash → MISMATCH, no TOP_UP', async () => {
    const f = fakeDeps({ batch: batch({ stage: 'DELIVERED', stage_history: historyUpTo('DELIVERED') }), ledger: new Map() });
    expectMismatch(
      await applyChainEvent(f.deps, delivery(stageChanged({ tx_hash: FORGED }), `evt_${FORGED}_0`)),
      f,
      /has not reached EXPORTED/,
    );
  });

  it('a made-up tx_hash for an EXPORTED batch whose trace-log write is not yet confirmed: no such log on the ledger → MISMATCH', async () => {
    const f = fakeDeps({ batch: batch({ stage_history: historyUpTo('EXPORTED', null) }) });
    expectMismatch(await applyChainEvent(f.deps, delivery(stageChanged({ tx_hash: FORGED }))), f, /no mined StageRecorded log/);
    expect(f.lookups).toEqual([[FORGED, 0]]);
  });

  it('the right transaction but another log index (no StageRecorded log there) → MISMATCH', async () => {
    const f = fakeDeps();
    expectMismatch(await applyChainEvent(f.deps, delivery(stageChanged({ log_index: 3 }))), f, /no mined StageRecorded log/);
    expect(f.lookups).toEqual([[TX, 3]]);
  });

  it('a tx_hash other than the one the batch recorded for that stage → MISMATCH, without asking the ledger', async () => {
    const f = fakeDeps({ ledger: new Map([[`${FORGED}#0`, recorded('EXPORTED')]]) });
    expectMismatch(await applyChainEvent(f.deps, delivery(stageChanged({ tx_hash: FORGED }))), f, /recorded by another transaction/);
    expect(f.lookups).toHaveLength(0);
  });

  it('a real StageRecorded log of another token → MISMATCH', async () => {
    const f = fakeDeps({ ledger: new Map([[`${TX}#0`, recorded('EXPORTED', { tokenId: 2026000000000001n })]]) });
    expectMismatch(await applyChainEvent(f.deps, delivery(stageChanged())), f, /token 2026000000000001/);
  });

  it("a real StageRecorded log of another stage (the batch's GRADED log relabelled EXPORTED) → MISMATCH", async () => {
    const f = fakeDeps({ ledger: new Map([[`${TX}#0`, recorded('GRADED')]]) });
    expectMismatch(await applyChainEvent(f.deps, delivery(stageChanged())), f, /stage code 1, not EXPORTED/);
  });

  it('checks stages that pay nothing too: a GRADED event for a DELIVERED batch → MISMATCH, not NOTED', async () => {
    const f = fakeDeps({ batch: batch({ stage: 'DELIVERED', stage_history: historyUpTo('DELIVERED') }) });
    expectMismatch(await applyChainEvent(f.deps, delivery(stageChanged({ stage: 'GRADED' }))), f, /has not reached GRADED/);
  });

  it("genuine: the batch's EXPORTED entry has the tx, the ledger has its StageRecorded(EXPORTED) log → STARTED, hex case ignored", async () => {
    const f = fakeDeps({ batch: batch({ stage_history: historyUpTo('EXPORTED', TX.toUpperCase().replace('0X', '0x')) }) });
    const r = await applyChainEvent(f.deps, delivery(stageChanged()));
    expect(r).toEqual({ received: true, outcome: 'STARTED', payout_id: 'PAY-2026-000777-02' });
    expect(f.lookups).toEqual([[TX, 0]]);
    expect(f.created).toHaveLength(1);
    expect(errors).not.toHaveBeenCalled();
  });

  it("genuine, reported before the ledger writer confirmed the write (history hash still null) → STARTED on the ledger's proof", async () => {
    const f = fakeDeps({ batch: batch({ stage_history: historyUpTo('EXPORTED', null) }) });
    expect((await applyChainEvent(f.deps, delivery(stageChanged()))).outcome).toBe('STARTED');
    expect(f.created).toHaveLength(1);
  });

  it('genuine event of a stage the batch has since passed (GRADED of an EXPORTED batch) → NOTED', async () => {
    const history = historyUpTo('EXPORTED').map((h) =>
      h.stage === 'GRADED'
        ? { ...h, chain_tx_hash: TX }
        : { ...h, chain_tx_hash: h.stage === 'EXPORTED' ? `0x${'99'.repeat(32)}` : h.chain_tx_hash },
    );
    const f = fakeDeps({ batch: batch({ stage_history: history }), ledger: new Map([[`${TX}#0`, recorded('GRADED')]]) });
    expect((await applyChainEvent(f.deps, delivery(stageChanged({ stage: 'GRADED' })))).outcome).toBe('NOTED');
    expect(f.created).toHaveLength(0);
  });

  it("ledger unreachable: 503 LEDGER_UNAVAILABLE, no payout, no receipt; so the sender's retry is checked and pays", async () => {
    for (const ledger of ['down', new Error('connect ECONNREFUSED 127.0.0.1:8545')] as const) {
      ddb.resetHistory();
      const down = fakeDeps({ ledger });
      const err = await domainErrorOf(applyChainEvent(down.deps, delivery(stageChanged(), 'evt_ledger_retry')));
      expect(err.code).toBe('LEDGER_UNAVAILABLE');
      expect(toErrorResponse(err, '01J00000000000000000000000').statusCode).toBe(503);
      expect(down.quotes).toHaveLength(0);
      expect(down.created).toHaveLength(0);
      expect(receiptPuts()).toHaveLength(0);
    }
    const up = fakeDeps();
    expect((await applyChainEvent(up.deps, delivery(stageChanged(), 'evt_ledger_retry'))).outcome).toBe('STARTED');
    expect(receiptPuts()).toHaveLength(1);
  });
});

describe('WebhookReceipts', () => {
  it('claims a webhook id once (conditional put with TTL), then reports it as seen', async () => {
    const r = new WebhookReceipts();
    expect(await r.hasWebhook('chain-events', 'evt_1')).toBe(false);
    expect(await r.claimWebhook('chain-events', 'evt_1', '2026-11-22T10:00:00.000Z')).toBe(true);
    expect(await r.claimWebhook('chain-events', 'evt_1', '2026-11-22T10:00:01.000Z')).toBe(false);
    expect(await r.hasWebhook('chain-events', 'evt_1')).toBe(true);
    const put = ddb.commandCalls(PutCommand)[0]!.args[0].input;
    expect(put).toMatchObject({
      TableName: 't',
      ConditionExpression: 'attribute_not_exists(PK)',
      Item: {
        PK: 'WEBHOOK#chain-events#evt_1',
        SK: 'META',
        entity: 'WEBHOOK',
        received_at: '2026-11-22T10:00:00.000Z',
        expires_at_epoch: Date.parse('2026-11-22T10:00:00.000Z') / 1000 + 30 * 24 * 3600,
      },
    });
    expect(ddb.commandCalls(GetCommand)[0]!.args[0].input).toMatchObject({
      Key: { PK: 'WEBHOOK#chain-events#evt_1', SK: 'META' },
      ConsistentRead: true,
    });
  });

  it('throws DynamoDB errors other than a failed condition', async () => {
    ddb.on(PutCommand).rejects(Object.assign(new Error('item too large'), { name: 'ValidationException' }));
    await expect(new WebhookReceipts().claimWebhook('chain-events', 'evt_2', '2026-11-22T10:00:00.000Z')).rejects.toThrow('item too large');
  });
});
