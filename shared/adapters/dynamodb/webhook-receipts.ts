import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/** How long webhook receipts are kept for replay detection (seconds); as in payout-repo. */
export const WEBHOOK_RECEIPT_TTL_S = 30 * 24 * 3600;

/**
 * Receipts of inbound webhooks (`WEBHOOK#<source>#<id>` / META, keys.ts access pattern 6), for
 * webhooks whose effect is not one DynamoDB transaction (so the receipt cannot ride along in it,
 * as payout-repo does for settlements). Items expire through DynamoDB TTL (`expires_at_epoch`).
 */
export class WebhookReceipts {
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
      await documentClient().send(new PutCommand({
        TableName: tableName(),
        Item: { ...keys.webhook(source, id), entity: 'WEBHOOK', source, received_at: at, expires_at_epoch: Math.floor(Date.parse(at) / 1000) + WEBHOOK_RECEIPT_TTL_S },
        ConditionExpression: 'attribute_not_exists(PK)',
      }));
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }
}

let receipts: WebhookReceipts | undefined;

/** The receipts adapter, one per container. */
export const webhookReceipts = (): WebhookReceipts => (receipts ??= new WebhookReceipts());
