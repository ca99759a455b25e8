import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { requireEnv } from '../../config';
import type { WorkQueue } from '../../domain/ports/messaging';
import { awsClient } from '../../runtime/aws-client';

let sqs: SQSClient | undefined;

/** A JSON work queue on SQS; `urlEnv` names the variable holding the queue URL. */
export class SqsWorkQueue<T> implements WorkQueue<T> {
  /** `fifoGroup`: a FIFO queue whose messages all go to one group, so one consumer handles them in order. */
  constructor(
    private readonly urlEnv: string,
    private readonly opts: { fifoGroup?: string } = {},
  ) {}

  async send(body: T, opts: { delaySeconds?: number; deduplicationId?: string } = {}): Promise<void> {
    // The endpoint is the SDK's own (regional in AWS, AWS_ENDPOINT_URL_SQS locally); the queue URL is a parameter.
    sqs ??= awsClient(new SQSClient({ useQueueUrlAsEndpoint: false }));
    const fifo = this.opts.fifoGroup
      ? {
          MessageGroupId: this.opts.fifoGroup,
          MessageDeduplicationId: opts.deduplicationId ?? `${Date.now()}-${Math.random().toString(36).slice(2)}`,
        }
      : { DelaySeconds: opts.delaySeconds };
    await sqs.send(new SendMessageCommand({ QueueUrl: requireEnv(this.urlEnv), MessageBody: JSON.stringify(body), ...fifo }));
  }
}
