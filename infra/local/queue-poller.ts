import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

/**
 * The local stand-in for Lambda's SQS event source: long-polls a queue, hands each batch to the
 * consumer handler as an SQSEvent, deletes what succeeded (partial batch responses honoured).
 * Failed messages reappear after the visibility timeout and go to the DLQ after maxReceiveCount,
 * as the queue's redrive policy says. Like Lambda's SQS event source, which polls a standard queue
 * with five concurrent pollers (and a FIFO queue's message group one batch at a time), it runs
 * `concurrency` receive loops, each handing its batches to the handler one after the other.
 */
export function pollQueue(opts: {
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  /** Concurrent receive loops: 1 for a FIFO queue (one message group), 5 for a standard queue as Lambda starts. */
  concurrency?: number;
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
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
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
        try {
          const res = await opts.handler(event);
          failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        } catch (err) {
          opts.log?.(`consumer failed: ${(err as Error).message}`);
          failed = new Set(messages.map((m) => m.MessageId!));
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
  const loops = Array.from({ length: Math.max(1, opts.concurrency ?? 1) }, receiveLoop);
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      sqs.destroy();
    },
  };
}
