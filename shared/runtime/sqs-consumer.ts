import { BatchProcessor, EventType, processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from './logger';
import { instrumented } from './instrument';
import { metrics, type MetricName } from './metrics';

/**
 * What a FIFO message group's handler did with its records (in order): the first `handled` are done;
 * the record after them either failed (`failure.error`: logged, counted, retried by the queue) or was not
 * started because the invocation's time would not suffice (`deferred`, the reason: logged only).
 * Either way it and every later record of the group are reported as failures, so the queue hands
 * them out again in order.
 */
interface FifoGroupOutcome {
  handled: number;
  failure?: { error: unknown };
  deferred?: string;
}

/** The handler of one FIFO message group of a batch: its records' bodies in queue order, and the invocation's time left (ms). */
type FifoGroupHandler<T> = (bodies: T[], run: { remainingMs: () => number }) => Promise<FifoGroupOutcome>;

/** Options of {@link sqsConsumer}. */
export interface SqsConsumerOptions {
  /** Counted once per record that failed (e.g. LedgerWriteRetries). */
  retryMetric?: MetricName;
  /**
   * The queue is FIFO (shared/manifest.ts QUEUES `fifo`): a batch's records are partitioned by
   * their message group (`attributes.MessageGroupId`) and the groups handled concurrently, each in
   * queue order; the first failure stops its group: that record and every later record of the group
   * are reported as failures, unhandled, so the queue redelivers them in order. Other groups are
   * not affected.
   */
  fifo?: boolean;
}

/** A FIFO record's message group; records without one (a test's event) form one group. */
const groupOf = (record: SQSRecord): string => (record.attributes as { MessageGroupId?: string }).MessageGroupId ?? '';

/**
 * An SQS consumer that reports partial batch failures with Powertools Batch
 * (`processPartialResponse`): each record's JSON body goes to `handle`; a record that throws is
 * returned in `batchItemFailures`, so only it is retried (and after maxReceiveCount lands in the
 * dead-letter queue). A standard queue's records are handled concurrently (`BatchProcessor`); a
 * FIFO queue's message groups concurrently, each in order, stopping at its first failure
 * (`SqsFifoPartialProcessorAsync` per group; see {@link SqsConsumerOptions.fifo}).
 * When every record fails the batch is still answered with all of them as failures
 * (`throwOnFullBatchFailure: false`), as a partial failure is, rather than thrown. Each failed
 * record is logged (warn, with its message id) and counts `retryMetric`; records deferred by a
 * group handler are logged (info) and not counted. A processor keeps the state of one batch, so
 * one is made per group and invocation (the local stack runs several invocations of a consumer at
 * once). The invocation runs with the Powertools middlewares (./instrument.ts).
 */
export function sqsConsumer<T>(
  handle: (body: T) => Promise<void>,
  opts: SqsConsumerOptions = {},
): (event?: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  return consumer(handle, undefined, opts);
}

/**
 * A FIFO queue's consumer that handles each message group of a batch as a whole (e.g. to read
 * ahead over its records): `handleGroup` gets the group's bodies in queue order and the
 * invocation's time left, and says how far it got ({@link FifoGroupOutcome}). The groups of a
 * batch run concurrently; the rest is {@link sqsConsumer}'s with `fifo: true`. A group handler that
 * throws fails its whole group; an unreadable (non-JSON) record ends its group's bodies there, as
 * a failure.
 */
export function sqsFifoGroupConsumer<T>(
  handleGroup: FifoGroupHandler<T>,
  opts: Pick<SqsConsumerOptions, 'retryMetric'> = {},
): (event?: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  return consumer<T>(undefined, handleGroup, { ...opts, fifo: true });
}

function consumer<T>(
  handle: ((body: T) => Promise<void>) | undefined,
  handleGroup: FifoGroupHandler<T> | undefined,
  opts: SqsConsumerOptions,
): (event?: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const failed = (record: SQSRecord, err: unknown): void => {
    logger.warn('queue message failed; it will be retried', { message_id: record.messageId, error: err as Error });
    if (opts.retryMetric) metrics.count(opts.retryMetric);
  };
  const handleRecord = async (record: SQSRecord): Promise<void> => {
    try {
      await handle!(JSON.parse(record.body) as T);
    } catch (err) {
      failed(record, err);
      throw err;
    }
  };
  /** One FIFO group's records through `handleGroup`: the identifiers of those to report as failures. */
  const runGroup = async (records: SQSRecord[], groupHandler: FifoGroupHandler<T>, context?: Context): Promise<string[]> => {
    const bodies: T[] = [];
    for (const record of records) {
      try {
        bodies.push(JSON.parse(record.body) as T);
      } catch {
        break; // an unreadable record stops its group here, as a failure
      }
    }
    const remainingMs = () => context?.getRemainingTimeInMillis?.() ?? Number.MAX_SAFE_INTEGER;
    let outcome: FifoGroupOutcome;
    if (bodies.length === 0) outcome = { handled: 0, failure: { error: new Error(`message ${records[0]!.messageId} is not JSON`) } };
    else {
      try {
        outcome = await groupHandler(bodies, { remainingMs });
        if (outcome.handled < bodies.length && outcome.failure === undefined && outcome.deferred === undefined)
          throw new Error(`the group handler left ${bodies.length - outcome.handled} record(s) neither handled, failed nor deferred`);
      } catch (err) {
        outcome = { handled: 0, failure: { error: err } };
      }
      if (outcome.handled === bodies.length && bodies.length < records.length)
        outcome = { handled: bodies.length, failure: { error: new Error(`message ${records[bodies.length]!.messageId} is not JSON`) } };
    }
    const rest = records.slice(outcome.handled);
    if (rest.length === 0) return [];
    if (outcome.deferred !== undefined)
      logger.info('queue messages returned unhandled, in order: not started in this invocation', {
        message_id: rest[0]!.messageId,
        count: rest.length,
        reason: outcome.deferred,
      });
    else failed(rest[0]!, outcome.failure?.error);
    return rest.map((r) => r.messageId);
  };
  return instrumented(async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    if (!opts.fifo)
      return processPartialResponse(event, handleRecord, new BatchProcessor(EventType.SQS), { context, throwOnFullBatchFailure: false });
    const groups = new Map<string, SQSRecord[]>();
    for (const record of event.Records) groups.set(groupOf(record), [...(groups.get(groupOf(record)) ?? []), record]);
    const failures = await Promise.all(
      [...groups.values()].map(async (records): Promise<string[]> => {
        if (handleGroup) return runGroup(records, handleGroup, context);
        const res = await processPartialResponse({ Records: records }, handleRecord, new SqsFifoPartialProcessorAsync(), {
          context,
          throwOnFullBatchFailure: false,
        });
        return res.batchItemFailures.map((f) => f.itemIdentifier);
      }),
    );
    const failedIds = new Set(failures.flat());
    return { batchItemFailures: event.Records.filter((r) => failedIds.has(r.messageId)).map((r) => ({ itemIdentifier: r.messageId })) };
  });
}
