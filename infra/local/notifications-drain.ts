import { appendFileSync } from 'node:fs';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

/**
 * The local SNS subscriber: every message on the topics (the managers' topic, the SMS stand-in)
 * becomes one JSON line in `file`, with the topic it was published to (`channel` `sms` for an SMS).
 */
export function drainNotifications(queueUrl: string, file: string, topicArn: string): { stop(): Promise<void> } {
  const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
        const messages = r.Messages ?? [];
        for (const m of messages) {
          const env = JSON.parse(m.Body ?? '{}') as {
            TopicArn?: string;
            Subject?: string;
            Message?: string;
            MessageAttributes?: Record<string, { Value?: string }>;
            Timestamp?: string;
          };
          const attributes = Object.fromEntries(Object.entries(env.MessageAttributes ?? {}).map(([k, v]) => [k, v.Value ?? '']));
          const topic = env.TopicArn ?? topicArn;
          appendFileSync(
            file,
            `${JSON.stringify({ topic, channel: topic === topicArn ? 'topic' : 'sms', subject: env.Subject ?? null, message: env.Message ?? '', attributes, published_at: env.Timestamp ?? new Date().toISOString() })}\n`,
          );
        }
        if (messages.length)
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
            }),
          );
      } catch {
        if (running) await new Promise((res) => setTimeout(res, 500));
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      sqs.destroy();
    },
  };
}
