import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { requireEnv } from '../../config';
import type { Notifier } from '../../domain/ports/messaging';
import { awsClient } from '../../runtime/aws-client';

/**
 * Notifications through SNS. `publish` goes to the manual-review topic (the cooperative managers'
 * subscriptions); message attributes are String attributes, so each manager's subscription can
 * filter on `cooperative_id`. `sendSms` publishes straight to the phone number as a transactional
 * SMS — or, when `SMS_TOPIC_ARN` is set (the local stack only, whose SNS has no SMS), to that topic
 * with the number in the `phone_number` attribute.
 */
export class SnsNotifier implements Notifier {
  private readonly sns = awsClient(new SNSClient({}));

  async publish(input: { subject: string; message: string; attributes: Record<string, string> }): Promise<{ messageId: string }> {
    const r = await this.sns.send(
      new PublishCommand({
        TopicArn: requireEnv('MANUAL_REVIEW_TOPIC_ARN'),
        Subject: input.subject.slice(0, 100),
        Message: input.message,
        MessageAttributes: stringAttributes(input.attributes),
      }),
    );
    return { messageId: r.MessageId ?? '' };
  }

  async sendSms(input: { phone: string; message: string; attributes: Record<string, string> }): Promise<{ messageId: string }> {
    const standIn = process.env.SMS_TOPIC_ARN;
    const r = await this.sns.send(
      new PublishCommand(
        standIn
          ? {
              TopicArn: standIn,
              Message: input.message,
              MessageAttributes: stringAttributes({ ...input.attributes, phone_number: input.phone }),
            }
          : {
              PhoneNumber: input.phone,
              Message: input.message,
              MessageAttributes: stringAttributes({ 'AWS.SNS.SMS.SMSType': 'Transactional' }),
            },
      ),
    );
    return { messageId: r.MessageId ?? '' };
  }
}

function stringAttributes(a: Record<string, string>) {
  return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]));
}
