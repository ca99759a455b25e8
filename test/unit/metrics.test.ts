import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { SQSEvent } from 'aws-lambda';
import type { PayoutRequestMessage } from '../../shared/domain/ports/payouts';
import { ChainEventSchema } from '../../shared/http/schemas';
import { webhookHandler } from '../../shared/http/webhook';
import { logger } from '../../shared/runtime/logger';
import { instrumented } from '../../shared/runtime/instrument';
import { countOutboundDeliveryFailure, flushMetrics, metrics, METRICS, setMetricsSink } from '../../shared/runtime/metrics';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { writeLedgerTx, type LedgerWriterDeps } from '../../shared/use-cases/ledger-writer';
import { meteredLedgerConfirm, meteredPayoutStore } from '../../shared/use-cases/metered-stores';
import { applyPayoutWebhook, type PayoutWebhookDeps } from '../../shared/use-cases/payout-webhook';
import { checkPayoutAttempt } from '../../shared/use-cases/payouts';
import { apiEvent, lambdaContext, parse } from './support/api-event';
import {
  aLedgerTx,
  aPayout,
  fakeBatchStore,
  fakeCustodyStore,
  fakeLedger,
  fakePayoutProvider,
  fakePayoutStore,
  fakePayoutWorkflow,
  fakeWebhookReceiptStore,
  fakeWorkQueue,
} from './support/fakes';

/**
 * Business metrics (issue 11): each fact counted once where it becomes durable, written as
 * CloudWatch Embedded Metric Format lines when the invocation ends, and locally appended to the
 * file an operator reads.
 */

type Emf = Record<string, unknown> & {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }>;
  };
};

let lines: string[];
beforeAll(() => logger.setLogLevel('SILENT'));
beforeEach(() => {
  lines = [];
  setMetricsSink((l) => lines.push(l));
});
afterAll(() => setMetricsSink(undefined));

/** The EMF documents written so far, each checked against the format's rules (keys of every dimension set and metric at the root). */
function emitted(): Emf[] {
  return lines.map((l) => {
    const doc = JSON.parse(l) as Emf;
    const [directive] = doc._aws.CloudWatchMetrics;
    expect(typeof doc._aws.Timestamp).toBe('number');
    expect(directive!.Namespace).toBe('CoffeeTrace');
    for (const set of directive!.Dimensions) for (const key of set) expect(typeof doc[key]).toBe('string');
    for (const m of directive!.Metrics) {
      expect(METRICS[m.Name as keyof typeof METRICS]).toBe(m.Unit);
      expect(doc[m.Name]).toBeDefined();
    }
    return doc;
  });
}
/** The values of metric `name` over every line (arrays flattened), with the line's dimensions. */
const valuesOf = (name: string) =>
  emitted().flatMap((d) => (d[name] === undefined ? [] : [d[name]].flat().map((v) => ({ v: v as number, d }))));

describe('payouts', () => {
  const created = aPayout({ status: 'PROCESSING', attempt: 1, created_at: '2026-11-22T10:00:00.000Z' });
  const settledOrder = {
    order_id: 'ord_1',
    reference: `${created.payment_id}-A1`,
    status: 'SETTLED' as const,
    amount_usd_micro: created.amount_usd_micro,
    amount_ugx: 37_002,
    exchange_rate: '3700.25',
    recipient: { phone: created.phone, name: created.recipient_name },
    mobile_money_transaction_id: 'MP1',
    settled_at: '2026-11-22T10:00:40.000Z',
    created_at: '2026-11-22T10:00:01.000Z',
  };

  it('a payout completion counts PayoutsCompleted once and its time to COMPLETED in ms from creation', async () => {
    let outcome: 'APPLIED' | 'IGNORED' = 'APPLIED';
    const payouts = meteredPayoutStore(fakePayoutStore({ get: async () => created, recordSettlement: async () => outcome }));
    const deps = {
      payouts,
      provider: fakePayoutProvider({ findOrderByReference: async () => settledOrder }),
      now: () => new Date('2026-11-22T10:00:42.500Z'),
    };
    const task = instrumented((input: { payout_id: string; attempt: number }) => checkPayoutAttempt(deps, input));
    await expect(task({ payout_id: created.payment_id, attempt: 1 })).resolves.toEqual({ outcome: 'COMPLETED' });
    expect(valuesOf('PayoutsCompleted').map((x) => x.v)).toEqual([1]);
    expect(valuesOf('PayoutTimeToCompleted').map((x) => x.v)).toEqual([42_500]);
    expect(valuesOf('PayoutsCompleted')[0]!.d).toMatchObject({ service: 'coffee-trace' });

    // A settlement the store did not apply (replayed, superseded) counts nothing.
    lines = [];
    outcome = 'IGNORED';
    await task({ payout_id: created.payment_id, attempt: 1 });
    expect(valuesOf('PayoutsCompleted')).toEqual([]);
  });

  it('created, failed and manual-review transitions are counted; other store methods pass through unchanged', async () => {
    const store = meteredPayoutStore(
      fakePayoutStore({
        createPending: async () => undefined,
        recordFailure: async () => 'APPLIED',
        markManualReview: async () => true,
        markFirstOrderRejected: async (p) => ({ ...p, status: 'FAILED' }),
        get: async () => created,
      }),
    );
    await store.createPending(created, 0);
    await store.recordFailure(created, 1, { reason: 'INSUFFICIENT_BALANCE', detail: 'INSUFFICIENT_FUNDS' }, 'x');
    await store.markFirstOrderRejected(created, { reason: 'INVALID_MSISDN', detail: 'BAD_PHONE' }, 'x');
    await store.markManualReview(created, 'x');
    await store.markManualReview(created, 'x');
    await expect(store.get(created.payment_id)).resolves.toBe(created);
    flushMetrics();
    expect(valuesOf('PayoutsCreated').map((x) => x.v)).toEqual([1]);
    expect(valuesOf('PayoutsFailed').map((x) => x.v)).toEqual([1, 1]);
    expect(valuesOf('ManualReviews').map((x) => x.v)).toEqual([1, 1]);
    expect(lines).toHaveLength(1); // one dimension set, one line
  });
});

describe('webhook rejections', () => {
  const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
  const PATH = '/api/webhooks/chain-events';
  const route = webhookHandler({ secret: async () => SECRET, schema: ChainEventSchema }, async () => ({
    status: 200,
    body: { received: true, outcome: 'MISMATCH' },
  }));
  const body = JSON.stringify({
    type: 'batch.stage_changed',
    data: {
      batch_id: 'BATCH-2026-000777',
      token_id: '2026000000000777',
      stage: 'EXPORTED',
      tx_hash: `0x${'ab'.repeat(32)}`,
      block_number: 42,
      log_index: 0,
    },
  });
  const signed = (raw: string) => ({
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': new Webhook(SECRET).sign('evt_1', new Date(), raw),
  });
  beforeAll(() => {
    process.env.DOCS_BASE_URL = 'http://x/docs';
  });

  it('a forged signature is counted as INVALID_SIGNATURE for its webhook, flushed with the 401', async () => {
    const res = parse(
      await route(
        apiEvent({ path: PATH, body, headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,Zm9yZ2Vk' } }),
        lambdaContext(),
      ),
    );
    expect(res.status).toBe(401);
    const [r] = valuesOf('WebhookRejections');
    expect(r!.v).toBe(1);
    expect(r!.d).toMatchObject({ webhook: 'chain-events', reason: 'INVALID_SIGNATURE' });
    // also aggregated by reason over every webhook (the forged-event alarm's dimension set)
    expect(r!.d._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([
      ['service', 'webhook', 'reason'],
      ['service', 'reason'],
    ]);
  });

  it('a signed event the use case answers MISMATCH is counted as MISMATCH; a bad body as INVALID_BODY', async () => {
    expect(parse(await route(apiEvent({ path: PATH, body, headers: signed(body) }), lambdaContext())).status).toBe(200);
    expect(valuesOf('WebhookRejections').map((x) => [x.d.reason, x.v])).toEqual([['MISMATCH', 1]]);
    lines = [];
    expect(
      parse(await route(apiEvent({ path: PATH, body: '{"type":"nope"}', headers: signed('{"type":"nope"}') }), lambdaContext())).status,
    ).toBe(400);
    expect(valuesOf('WebhookRejections').map((x) => [x.d.reason, x.v])).toEqual([['INVALID_BODY', 1]]);
  });

  it('the payout webhook use case itself: a forged settlement (MISMATCH) counts no completion', async () => {
    const payout = aPayout({ status: 'PROCESSING', provider_order_id: 'ord_real' });
    const deps: PayoutWebhookDeps = {
      now: () => new Date(),
      receipts: fakeWebhookReceiptStore({ hasWebhook: async () => false, claimWebhook: async () => true }),
      workflow: fakePayoutWorkflow(),
      provider: { findOrderByReference: async () => null },
      payouts: meteredPayoutStore(fakePayoutStore({ get: async () => payout })),
    };
    const r = await applyPayoutWebhook(deps, {
      webhookId: 'm',
      event: { type: 'order.settled', data: { order_id: 'ord_forged', reference: `${payout.payment_id}-A1` } },
    });
    expect(r.outcome).toBe('MISMATCH');
    flushMetrics();
    expect(valuesOf('PayoutsCompleted')).toEqual([]);
  });
});

describe('ledger writes', () => {
  const tx = aLedgerTx({
    ledger_tx_id: 'BATCH-2026-000001-3',
    kind: 'TRACE_STAGE',
    stage: 'GRADED',
    evidence_cid: 'bafy',
    audit_hash: 'ab'.repeat(32),
    status: 'SENT',
    raw_tx: '0xf86b01',
    tx_hash: '0x1111',
    created_at: '2026-11-22T10:00:00.000Z',
  });
  function deps(mined: boolean): LedgerWriterDeps {
    return {
      custody: meteredLedgerConfirm(fakeCustodyStore({ getLedgerTx: async () => tx, confirm: async () => undefined })),
      ledger: fakeLedger({
        rebroadcast: async () => undefined,
        waitForReceipt: async () => (mined ? { status: 'success', blockNumber: 12n, txHash: '0x1111' } : null),
      }),
      batches: fakeBatchStore(),
      payoutQueue: fakeWorkQueue<PayoutRequestMessage>('payoutQueue'),
      now: () => new Date('2026-11-22T10:00:07.250Z'),
    };
  }
  const sqs = (n: number): SQSEvent => ({
    Records: Array.from({ length: n }, (_, i) => ({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body: JSON.stringify({ ledger_tx_id: tx.ledger_tx_id }),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: '0',
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:ledger-write-queue.fifo',
      awsRegion: 'eu-west-1',
    })),
  });

  it('a mined write records its lag from commit to confirmation; an unmined one counts a retry; both flushed by the consumer', async () => {
    let mined = false;
    const consumer = sqsConsumer<{ ledger_tx_id: string }>((m) => writeLedgerTx(deps(mined), m.ledger_tx_id, 10), {
      retryMetric: 'LedgerWriteRetries',
    });
    expect((await consumer(sqs(1))).batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
    expect(valuesOf('LedgerWriteRetries').map((x) => x.v)).toEqual([1]);
    expect(valuesOf('LedgerWriteLag')).toEqual([]);
    lines = [];
    mined = true;
    expect((await consumer(sqs(1))).batchItemFailures).toEqual([]);
    expect(valuesOf('LedgerWriteLag').map((x) => x.v)).toEqual([7_250]);
    expect(valuesOf('LedgerWriteRetries')).toEqual([]);
  });
});

describe('EMF output', () => {
  it('several values of one metric become an EMF value array; dimension sets get a line each', () => {
    metrics.timing('PayoutTimeToCompleted', 1000);
    metrics.timing('PayoutTimeToCompleted', 2000);
    metrics.count('DdsFilings', { outcome: 'FILED' });
    countOutboundDeliveryFailure('HTTP_500');
    expect(flushMetrics(new Date(1_700_000_000_000))).toHaveLength(3);
    const docs = emitted();
    expect(docs[0]).toMatchObject({ PayoutTimeToCompleted: [1000, 2000], _aws: { Timestamp: 1_700_000_000_000 } });
    expect(docs[1]).toMatchObject({ DdsFilings: 1, outcome: 'FILED' });
    expect(docs[2]).toMatchObject({ OutboundDeliveryFailures: 1, reason: 'HTTP_500' });
    expect(flushMetrics()).toEqual([]); // the buffer was emptied
  });

  it('locally (METRICS_FILE, set by the local stack to $LOCAL_DATA_DIR/metrics.ndjson) the lines are appended to the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metrics-'));
    const before = process.env.METRICS_FILE;
    try {
      process.env.METRICS_FILE = join(dir, 'metrics.ndjson');
      setMetricsSink(undefined);
      metrics.count('PayoutsCompleted');
      flushMetrics();
      metrics.count('WebhookRejections', { webhook: 'payout-provider', reason: 'MISMATCH' });
      flushMetrics();
      const fileLines = readFileSync(join(dir, 'metrics.ndjson'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(fileLines).toHaveLength(2);
      expect(fileLines[0]).toMatchObject({ PayoutsCompleted: 1, service: 'coffee-trace' });
      expect(fileLines[1]).toMatchObject({ WebhookRejections: 1, webhook: 'payout-provider', reason: 'MISMATCH' });
    } finally {
      if (before === undefined) delete process.env.METRICS_FILE;
      else process.env.METRICS_FILE = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('in Lambda the lines go to stdout (the log group); elsewhere without METRICS_FILE nowhere; a failing sink never throws', () => {
    const saved = { file: process.env.METRICS_FILE, fn: process.env.AWS_LAMBDA_FUNCTION_NAME };
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      delete process.env.METRICS_FILE;
      delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      setMetricsSink(undefined);
      metrics.count('PayoutsCreated');
      flushMetrics();
      expect(write).not.toHaveBeenCalled();
      process.env.AWS_LAMBDA_FUNCTION_NAME = 'CoffeeTrace-CreateFarmerPayout';
      metrics.count('PayoutsCreated');
      flushMetrics();
      expect(write).toHaveBeenCalledTimes(1);
      expect(JSON.parse(String(write.mock.calls[0]![0]))).toMatchObject({ PayoutsCreated: 1 });
    } finally {
      write.mockRestore();
      if (saved.file !== undefined) process.env.METRICS_FILE = saved.file;
      if (saved.fn === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      else process.env.AWS_LAMBDA_FUNCTION_NAME = saved.fn;
    }
    setMetricsSink(() => {
      throw new Error('disk full');
    });
    metrics.count('PayoutsCreated');
    expect(() => flushMetrics()).not.toThrow();
  });
});
