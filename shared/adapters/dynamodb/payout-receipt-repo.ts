import type { PayoutReceiptStore } from '../../domain/ports/payouts';
import { keys } from './keys';
import { conditionalUpdate } from './table';

/**
 * The SMS receipt mark on a payout (`receipt_sms_at` on its PAYMENT item;
 * docs/operations.md#sms-receipt-to-the-farmer), set and removed by conditioned updates only.
 */
export class PayoutReceiptRepository implements PayoutReceiptStore {
  /** Sets `receipt_sms_at` on a COMPLETED payout that has none; false when it is not COMPLETED or already marked. */
  claimReceipt(payoutId: string, at: string): Promise<boolean> {
    return conditionalUpdate({
      Key: keys.payment(payoutId),
      UpdateExpression: 'SET receipt_sms_at = :at',
      ConditionExpression: '#s = :completed AND attribute_not_exists(receipt_sms_at)',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':at': at, ':completed': 'COMPLETED' },
    });
  }

  /** Removes the mark set at `at` (and only that one). */
  async releaseReceipt(payoutId: string, at: string): Promise<void> {
    await conditionalUpdate({
      Key: keys.payment(payoutId),
      UpdateExpression: 'REMOVE receipt_sms_at',
      ConditionExpression: 'receipt_sms_at = :at',
      ExpressionAttributeValues: { ':at': at },
    });
  }
}
