import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as ledgerWriter } from '../../functions/ledger-writer/handler';
import { handler as payoutAttempt } from '../../functions/payout-attempt/handler';
import { handler as payoutCheckAttempt } from '../../functions/payout-check-attempt/handler';
import { logger } from '../../shared/runtime/logger';
import { instrumented } from '../../shared/runtime/instrument';
import { setMetricsSink } from '../../shared/runtime/metrics';
import { sqsConsumer } from '../../shared/runtime/sqs-consumer';
import { localLambdaContext } from '../../infra/local/lambda-context';
import { functionManifest } from '../../shared/manifest';
import { lambdaContext } from './support/api-event';

/**
 * Powertools middlewares on every kind of entry point (docs/powertools.md): Logger
 * `injectLambdaContext` with `resetKeys` (the Lambda request id and cold-start flag on every line;
 * keys appended for one invocation gone when it ends, even after a throw), and Powertools Batch for
 * SQS partial failures (a FIFO queue stops at the first failure).
 */

const ddb = mockClient(DynamoDBDocumentClient);
let lines: Array<Record<string, unknown>>;
let spies: jest.SpyInstance[];

beforeAll(() => {
  process.env.TABLE_NAME = 't';
  process.env.AWS_REGION = 'eu-west-1';
  setMetricsSink(() => undefined);
});
afterAll(() => {
  setMetricsSink(undefined);
  logger.setLogLevel('SILENT');
});
beforeEach(() => {
  logger.setLogLevel('INFO');
  ddb.reset();
  ddb.onAnyCommand().rejects(new Error('table unavailable'));
  lines = [];
  // Logger writes through its own Console (outside POWERTOOLS_DEV): info on stdout, warn and error on stderr.
  const capture = (chunk: string | Uint8Array) => {
    for (const l of String(chunk).split('\n')) if (l.trim().startsWith('{')) lines.push(JSON.parse(l) as Record<string, unknown>);
    return true;
  };
  spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation(capture),
    jest.spyOn(process.stderr, 'write').mockImplementation(capture),
  ];
});
afterEach(() => {
  for (const s of spies) s.mockRestore();
});

/** The line a plain `logger.info` writes between invocations: what the next invocation would inherit. */
function nextLine(): Record<string, unknown> {
  lines = [];
  logger.info('between invocations');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('Logger keys of one invocation never reach the next', () => {
  it('payout-attempt: the payout_id and attempt appended for an invocation are removed after it throws', async () => {
    await expect(payoutAttempt({ payout_id: 'PAY-STALE-1', attempt: 2, round: 0, task_token: 'tok' }, lambdaContext())).rejects.toThrow();
    const line = nextLine();
    expect(line).not.toHaveProperty('payout_id');
    expect(line).not.toHaveProperty('attempt');
  });

  it('payout-check-attempt: the same after a throw', async () => {
    await expect(payoutCheckAttempt({ payout_id: 'PAY-STALE-2', attempt: 3, round: 0 }, lambdaContext())).rejects.toThrow();
    const line = nextLine();
    expect(line).not.toHaveProperty('payout_id');
    expect(line).not.toHaveProperty('attempt');
  });

  it('a line written during an invocation carries its keys, the Lambda request id and the cold-start flag', async () => {
    const task = instrumented(async (event: { payout_id: string }) => {
      logger.appendKeys({ payout_id: event.payout_id });
      logger.info('working');
      throw new Error('provider down');
    });
    await expect(task({ payout_id: 'PAY-3' }, lambdaContext())).rejects.toThrow('provider down');
    const working = lines.find((l) => l.message === 'working')!;
    expect(working).toMatchObject({
      payout_id: 'PAY-3',
      function_request_id: 'aws-req-1',
      function_name: 'unit-test',
      cold_start: expect.any(Boolean),
    });
    expect(nextLine()).not.toHaveProperty('payout_id');
  });
});

describe('SQS partial failures with Powertools Batch', () => {
  const event = (bodies: string[], fifo = false): SQSEvent => ({
    Records: bodies.map((body, i) => ({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: '0',
        ...(fifo ? { MessageGroupId: 'ledger' } : {}),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:eu-west-1:000000000000:q${fifo ? '.fifo' : ''}`,
      awsRegion: 'eu-west-1',
    })),
  });

  it('a standard queue handles every record and reports only those that failed, each logged with its message id', async () => {
    const seen: number[] = [];
    const consumer = sqsConsumer<{ n: number }>(async (m) => {
      seen.push(m.n);
      if (m.n % 2 === 0) throw new Error(`bad ${m.n}`);
    });
    const res = await consumer(event(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}']), lambdaContext());
    expect(seen.sort()).toEqual([1, 2, 3, 4]);
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }, { itemIdentifier: 'm3' }]);
    expect(lines.filter((l) => l.message === 'queue message failed; it will be retried').map((l) => l.message_id)).toEqual(['m1', 'm3']);
  });

  it('when every record fails the batch is answered with all of them, not thrown', async () => {
    const consumer = sqsConsumer<unknown>(async () => {
      throw new Error('down');
    });
    await expect(consumer(event(['{}', '{}']))).resolves.toEqual({
      batchItemFailures: [{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }],
    });
  });

  it('a FIFO queue handles records in order and stops at the first failure: it and the rest are reported, unhandled', async () => {
    const seen: number[] = [];
    const consumer = sqsConsumer<{ n: number }>(
      async (m) => {
        seen.push(m.n);
        if (m.n === 2) throw new Error('not mined');
      },
      { fifo: true },
    );
    const res = await consumer(event(['{"n":1}', '{"n":2}', '{"n":3}'], true), lambdaContext());
    expect(seen).toEqual([1, 2]);
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }]);
  });

  it('the ledger writer (FIFO queue, shared/manifest.ts) is such a consumer: after an unreadable message the one behind it is not handled', async () => {
    const res = await ledgerWriter(event(['not json', '{"ledger_tx_id":"LTX-2"}'], true), lambdaContext());
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }, { itemIdentifier: 'm1' }]);
    // only the first record was handled (and failed): one warning, no DynamoDB call for LTX-2
    expect(lines.filter((l) => l.message === 'queue message failed; it will be retried').map((l) => l.message_id)).toEqual(['m0']);
    expect(ddb.calls()).toHaveLength(0);
  });
});

describe("the local stack's Lambda context", () => {
  it("is complete: the function's name, ARN, memory and timeout from the manifest, a request id, and the time left counting down", async () => {
    const ledger = functionManifest().find((f) => f.fn === 'ledger-writer')!;
    const context = localLambdaContext('ledger-writer');
    expect(context).toMatchObject({
      functionName: 'ledger-writer',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:ledger-writer',
      memoryLimitInMB: String(ledger.memoryMiB),
      awsRequestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(context.getRemainingTimeInMillis()).toBeLessThanOrEqual(ledger.timeoutSeconds * 1000);
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(ledger.timeoutSeconds * 1000 - 5_000);
    expect(localLambdaContext('get-batch', { awsRequestId: 'r-1', timeoutMs: 29_000 })).toMatchObject({ awsRequestId: 'r-1' });

    const task = instrumented(async () => void logger.info('local line'));
    await task(undefined, context);
    expect(lines.find((l) => l.message === 'local line')).toMatchObject({
      function_name: 'ledger-writer',
      function_arn: context.invokedFunctionArn,
      function_memory_size: String(ledger.memoryMiB),
      function_request_id: context.awsRequestId,
    });
  });
});
