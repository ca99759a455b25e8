import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Deposit, DepositStatus } from '../../domain/lending';
import type { DepositStore } from '../../domain/ports/lending';
import { fromItem, keys } from './keys';
import { documentClient, isConditionalCheckFailed, nextCounterValue, tableName } from './table';

/**
 * MFI deposits (payment type MFI_DEPOSIT) in the single table: the deposit at `PAYMENT#<DEP-…>` /
 * META beside the other payments (no GSI: a deposit belongs to no batch), its number from the
 * atomic year counter `COUNTER#DEPOSIT#<yyyy>`. Every status change is a conditional update on
 * the current status, so replayed webhooks and callbacks never move a deposit backwards.
 */
export class DepositRepository implements DepositStore {
  /** Stores a new deposit (conditional: never overwrites). */
  async create(deposit: Deposit): Promise<void> {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.payment(deposit.payment_id), entity: 'DEPOSIT', ...deposit },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  /** Next `n` of `DEP-<year>-<n>` (UpdateItem ADD: atomic, never repeats). */
  async nextDepositNumber(year: number): Promise<number> {
    return nextCounterValue(keys.depositCounter(year));
  }

  /** The deposit, or null (also for a payment id that is not a deposit). Strongly consistent. */
  async get(paymentId: string): Promise<Deposit | null> {
    const r = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.payment(paymentId), ConsistentRead: true }));
    return r.Item && r.Item.entity === 'DEPOSIT' ? fromItem<Deposit>(r.Item) : null;
  }

  /**
   * Sets `to`, `updated_at = at` and the fields of `set` (a field given as `undefined` is removed)
   * on the condition that the deposit exists and its status is one of `from`.
   * @returns false when it was not in `from` (or does not exist)
   */
  async transition(paymentId: string, from: DepositStatus[], to: DepositStatus, set: Partial<Deposit>, at: string): Promise<boolean> {
    const names: Record<string, string> = { '#status': 'status', '#updated_at': 'updated_at', '#entity': 'entity' };
    const values: Record<string, unknown> = { ':to': to, ':at': at, ':deposit': 'DEPOSIT' };
    const sets = ['#status = :to', '#updated_at = :at'];
    const removes: string[] = [];
    Object.entries(set).forEach(([field, value], i) => {
      if (field === 'status' || field === 'updated_at' || field === 'payment_id') return;
      names[`#f${i}`] = field;
      if (value === undefined) removes.push(`#f${i}`);
      else {
        values[`:f${i}`] = value;
        sets.push(`#f${i} = :f${i}`);
      }
    });
    from.forEach((s, i) => {
      values[`:from${i}`] = s;
    });
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.payment(paymentId),
          UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: `#entity = :deposit AND #status IN (${from.map((_, i) => `:from${i}`).join(', ')})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailed(err)) return false;
      throw err;
    }
  }
}
