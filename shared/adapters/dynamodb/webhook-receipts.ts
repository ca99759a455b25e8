import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { WebhookReceiptStore } from '../../domain/ports/messaging';
import { keys, webhookReceiptItem } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/**
 * Receipts of inbound webhooks (`WEBHOOK#<source>#<id>` / META, keys.ts access pattern 6), for
 * webhooks whose effect is not one DynamoDB transaction (so the receipt cannot ride along in it,
 * as payout-repo does for settlements). Items expire through DynamoDB TTL (`expires_at_epoch`).
 */
export class WebhookReceipts implements WebhookReceiptStore {
  /** Whether a receipt for `(source, id)` exists (strongly consistent read). */
  async hasWebhook(source: string, id: string): Promise<boolean> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.webhook(source, id), ConsistentRead: true }));
    return r.Item !== undefined;
  }

  /**
   * Stores the receipt of `(source, id)` received at `at` (ISO) with a conditional put
   * (attribute_not_exists). Returns true the first time, false when a receipt existed already.
   * Other DynamoDB errors are thrown.
   */
  async claimWebhook(source: string, id: string, at: string): Promise<boolean> {
    try {
      await documentClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: webhookReceiptItem(source, id, at),
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }
}
