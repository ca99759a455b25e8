import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { QUEUES, queuesOf, type QueueConsumerDef, type QueueName } from '../../shared/manifest';

/**
 * Receive loops of a FIFO queue: one, as each of the service's FIFO queues holds one message group
 * (the single ledger writer's writes; its receipt checks, on a queue of their own). Like SQS (fauxqs
 * with ./fauxqs-fifo.ts), a receive hands out several messages of a group in order and none of a
 * group while some of it is in flight, so the group stays in order; a consumer handles the groups of
 * a batch side by side (shared/runtime/sqs-consumer.ts).
 */
const FIFO_POLLERS = 1;

/**
 * The pollers of one queue consumer of the manifest: one `pollQueue` per queue feeding it (its
 * `queue`, then its `extraQueues`), with its batch size, and its timeout for the hold, as CDK gives
 * it one SQS event source per queue; `FIFO_POLLERS` receive loops on a FIFO queue, 5 on a standard
 * one. Returns their stops.
 */
export function pollConsumer(
  w: QueueConsumerDef,
  queues: Record<QueueName, { queueUrl: string; queueArn: string }>,
  visibilitySeconds: (q: QueueName) => number,
  // biome-ignore lint/suspicious/noConfusingVoidType: the Lambda handler types of @types/aws-lambda return `void` when there is no batch response
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>,
  log: (line: string) => void,
): Array<() => Promise<void>> {
  return queuesOf(w).map((name) => {
    const poller = pollQueue({
      queueUrl: queues[name].queueUrl,
      queueArn: queues[name].queueArn,
      batchSize: w.batchSize,
      concurrency: QUEUES[name].fifo ? FIFO_POLLERS : 5,
      hold: { visibilitySeconds: visibilitySeconds(name), timeoutSeconds: w.timeoutSeconds },
      handler,
      log: (l) => log(`${w.fn}: ${l}`),
    });
    return () => poller.stop();
  });
}

/**
 * The local stand-in for Lambda's SQS event source: long-polls a queue, hands each batch to the
 * consumer handler as an SQSEvent, deletes what succeeded (partial batch responses honoured).
 * Failed messages reappear after the visibility timeout and go to the DLQ after maxReceiveCount,
 * as the queue's redrive policy says. Like Lambda's SQS event source, which polls a standard queue
 * with five concurrent pollers (and a FIFO queue's message group one batch at a time), it runs
 * `concurrency` receive loops, each handing its batches to the handler one after the other.
 * Like Lambda, whose queues' visibility timeout is six times the function's timeout, a batch being
 * handled never reappears: while the handler runs (up to the function's `timeoutSeconds`), its
 * messages' visibility is extended every half `visibilitySeconds`; only a failed or abandoned
 * message comes back, after the (short, local) visibility timeout.
 */
function pollQueue(opts: {
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  /** Concurrent receive loops: for a FIFO queue one per message group it uses, 5 for a standard queue as Lambda starts. */
  concurrency?: number;
  /**
   * While a batch is handled, its messages' visibility is extended by the queue's `visibilitySeconds`
   * every half of it, up to the consumer function's `timeoutSeconds` (Lambda would have stopped it).
   */
  hold?: { visibilitySeconds: number; timeoutSeconds: number };
  // biome-ignore lint/suspicious/noConfusingVoidType: the Lambda handler types of @types/aws-lambda return `void` when there is no batch response
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>;
  log?: (line: string) => void;
}): { stop(): Promise<void> } {
  const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
  let running = true;
  const receiveLoop = async () => {
    while (running) {
      try {
        const r = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: opts.queueUrl,
            MaxNumberOfMessages: opts.batchSize,
            WaitTimeSeconds: 1,
            // MessageGroupId: a FIFO consumer partitions its batch by message group (shared/runtime/sqs-consumer.ts).
            MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
          }),
        );
        const messages = r.Messages ?? [];
        if (!messages.length || !running) continue;
        const event: SQSEvent = {
          Records: messages.map((m) => ({
            messageId: m.MessageId!,
            receiptHandle: m.ReceiptHandle!,
            body: m.Body ?? '',
            attributes: (m.Attributes ?? {}) as never,
            messageAttributes: {},
            md5OfBody: m.MD5OfBody ?? '',
            eventSource: 'aws:sqs',
            eventSourceARN: opts.queueArn,
            awsRegion: process.env.AWS_REGION ?? 'us-east-1',
          })),
        };
        let failed = new Set<string>();
        const keepHidden = keepInvisible(messages.map((m) => m.ReceiptHandle!));
        try {
          const res = await opts.handler(event);
          failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        } catch (err) {
          opts.log?.(`consumer failed: ${(err as Error).message}`);
          failed = new Set(messages.map((m) => m.MessageId!));
        } finally {
          keepHidden.stop();
        }
        const done = messages.filter((m) => !failed.has(m.MessageId!));
        if (done.length) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: opts.queueUrl,
              Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
            }),
          );
        }
      } catch (err) {
        if (running) {
          opts.log?.(`poll error: ${(err as Error).message}`);
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    }
  };
  /** Extends the visibility of a batch being handled every half visibility timeout, up to the function's timeout. */
  const keepInvisible = (handles: string[]): { stop(): void } => {
    if (!opts.hold) return { stop: () => undefined };
    const visibility = opts.hold.visibilitySeconds;
    const until = Date.now() + opts.hold.timeoutSeconds * 1000;
    const timer = setInterval(
      () => {
        if (Date.now() >= until) return clearInterval(timer);
        sqs
          .send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: opts.queueUrl,
              Entries: handles.map((h, i) => ({ Id: String(i), ReceiptHandle: h, VisibilityTimeout: visibility })),
            }),
          )
          .catch((err: Error) => opts.log?.(`visibility not extended: ${err.message}`));
      },
      (visibility * 1000) / 2,
    );
    return { stop: () => clearInterval(timer) };
  };
  const loops = Array.from({ length: Math.max(1, opts.concurrency ?? 1) }, receiveLoop);
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      sqs.destroy();
    },
  };
}
