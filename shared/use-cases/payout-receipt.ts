import { maskPhone } from '../domain/masking';
import { payoutReceiptSms, receiptDueFor } from '../domain/payout-receipt';
import type { Notifier } from '../domain/ports/messaging';
import type { PayoutReceiptStore } from '../domain/ports/payouts';
import { logger } from '../runtime/logger';

/** The ports of the SMS receipt. */
export interface PayoutReceiptDeps {
  receipts: PayoutReceiptStore;
  /** SNS SMS in AWS; locally the SMS stand-in topic drained into notifications.jsonl. */
  notifier: Pick<Notifier, 'sendSms'>;
  now: () => Date;
}

/** What one change did: SENT, ALREADY_SENT (a redelivered change, or another consumer was first) or NOT_DUE. */
export type ReceiptOutcome = 'SENT' | 'ALREADY_SENT' | 'NOT_DUE';

/**
 * The farmer's SMS receipt (docs/operations.md#sms-receipt-to-the-farmer) for one committed change of
 * a payment (the table's stream: old and new image). When the change completed a mobile-money
 * FARMER_PAYOUT (`receiptDueFor`), the receipt is first marked on the payout by a conditioned write
 * (COMPLETED and not marked), then sent to the payout's phone: the amount in UGX, the batch and the
 * payout id. A change delivered again finds the mark and sends nothing, so one payout gets one
 * receipt. When the SMS cannot be sent the mark is taken back and the error thrown (phone masked),
 * so the stream delivers the change again. Logs show the phone masked only.
 */
export async function sendPayoutReceipt(
  deps: PayoutReceiptDeps,
  change: { oldImage?: Record<string, unknown>; newImage?: Record<string, unknown> },
): Promise<ReceiptOutcome> {
  const payout = receiptDueFor(change.oldImage, change.newImage);
  if (!payout) return 'NOT_DUE';
  const at = deps.now().toISOString();
  const masked = maskPhone(payout.phone);
  if (!(await deps.receipts.claimReceipt(payout.payment_id, at))) {
    logger.info('payout receipt already sent; not sent again', { payout_id: payout.payment_id, phone: masked });
    return 'ALREADY_SENT';
  }
  try {
    await deps.notifier.sendSms({
      phone: payout.phone,
      message: payoutReceiptSms(payout),
      attributes: {
        event: 'payout.receipt',
        payout_id: payout.payment_id,
        batch_id: payout.batch_id,
        cooperative_id: payout.cooperative_id,
      },
    });
  } catch (err) {
    await deps.receipts.releaseReceipt(payout.payment_id, at);
    const words = String((err as Error)?.message ?? err).replaceAll(payout.phone, masked);
    throw new Error(`SMS receipt of payout ${payout.payment_id} to ${masked} not sent: ${words}`);
  }
  logger.info('payout receipt sent by SMS', { payout_id: payout.payment_id, batch_id: payout.batch_id, phone: masked });
  return 'SENT';
}
