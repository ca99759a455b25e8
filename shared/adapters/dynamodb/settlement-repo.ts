import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Settlement } from '../../domain/lending';
import type { SettlementStore } from '../../domain/ports';
import { fromItem, keys } from './keys';
import { documentClient, isConditionalCheckFailed, tableName } from './table';

/**
 * Settlements (SETTLEMENT#<purchase_order_id>): created once with attribute_not_exists, so a
 * purchase order is settled exactly once however often its buyer payment is reported; each
 * repayment and the remainder change by conditional updates (REQUESTED → REPAID/REFUSED), and the
 * settlement completes when nothing is REQUESTED any more.
 */
export class SettlementRepository implements SettlementStore {
  async start(settlement: Settlement): Promise<boolean> {
    try {
      await documentClient().send(new PutCommand({
        TableName: tableName(), Item: { ...keys.settlement(settlement.purchase_order_id), entity: 'SETTLEMENT', ...settlement }, ConditionExpression: 'attribute_not_exists(PK)',
      }));
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }

  async get(purchaseOrderId: string): Promise<Settlement | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.settlement(purchaseOrderId), ConsistentRead: true }));
    return r.Item ? fromItem<Settlement>(r.Item) : null;
  }

  async recordRepayment(purchaseOrderId: string, loanId: string, outcome: { status: 'REPAID' | 'REFUSED'; tx_hash?: string }, at: string): Promise<void> {
    await this.conditional(purchaseOrderId, {
      UpdateExpression: `SET repayments.#l.#st = :s, updated_at = :at${outcome.tx_hash ? ', repayments.#l.repay_tx_hash = :h' : ''}`,
      ConditionExpression: 'repayments.#l.#st = :req',
      ExpressionAttributeNames: { '#l': loanId, '#st': 'status' },
      ExpressionAttributeValues: { ':s': outcome.status, ':at': at, ':req': 'REQUESTED', ...(outcome.tx_hash ? { ':h': outcome.tx_hash } : {}) },
    });
    await this.completeIfDone(purchaseOrderId, at);
  }

  async recordRemainder(purchaseOrderId: string, outcome: { status: 'RELEASED' | 'REFUSED'; tx_hash?: string }, at: string): Promise<void> {
    await this.conditional(purchaseOrderId, {
      UpdateExpression: `SET remainder_status = :s, updated_at = :at${outcome.tx_hash ? ', remainder_tx_hash = :h' : ''}`,
      ConditionExpression: 'remainder_status = :req',
      ExpressionAttributeValues: { ':s': outcome.status, ':at': at, ':req': 'REQUESTED', ...(outcome.tx_hash ? { ':h': outcome.tx_hash } : {}) },
    });
    await this.completeIfDone(purchaseOrderId, at);
  }

  /** STARTED → COMPLETED once no repayment and not the remainder is still REQUESTED. */
  private async completeIfDone(purchaseOrderId: string, at: string): Promise<void> {
    const s = await this.get(purchaseOrderId);
    if (!s || s.status !== 'STARTED') return;
    if (Object.values(s.repayments).some((r) => r.status === 'REQUESTED') || s.remainder_status === 'REQUESTED') return;
    await this.conditional(purchaseOrderId, {
      UpdateExpression: 'SET #st = :c, completed_at = :at, updated_at = :at', ConditionExpression: '#st = :started',
      ExpressionAttributeNames: { '#st': 'status' }, ExpressionAttributeValues: { ':c': 'COMPLETED', ':at': at, ':started': 'STARTED' },
    });
  }

  /** An update that is a no-op when its condition fails (already applied). */
  private async conditional(purchaseOrderId: string, update: { UpdateExpression: string; ConditionExpression: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> }): Promise<void> {
    try {
      await documentClient().send(new UpdateCommand({ TableName: tableName(), Key: keys.settlement(purchaseOrderId), ...update }));
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }
}
