import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { requireEnv } from '../../config';
import type { Notifier } from '../../domain/ports';
import { traced } from '../../runtime/tracer';

/**
 * Publishes to the manual-review SNS topic. Message attributes are String attributes, so each
 * manager's subscription can filter on `cooperative_id`.
 */
export class SnsNotifier implements Notifier {
  private readonly sns = traced(new SNSClient({}));

  async publish(input: { subject: string; message: string; attributes: Record<string, string> }): Promise<{ messageId: string }> {
    const r = await this.sns.send(new PublishCommand({
      TopicArn: requireEnv('MANUAL_REVIEW_TOPIC_ARN'),
      Subject: input.subject.slice(0, 100),
      Message: input.message,
      MessageAttributes: Object.fromEntries(Object.entries(input.attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }])),
    }));
    return { messageId: r.MessageId ?? '' };
  }
}
