import type { Payout } from './records';

/**
 * The farmer's SMS receipt of a completed payout (docs/operations.md#sms-receipt-to-the-farmer):
 * which change of a payment earns one, and its text.
 */

/** A table item's attributes as a stream image shows them (unmarshalled). */
type ItemImage = Record<string, unknown>;

/**
 * The payout a change completed, when that change owes the farmer a receipt: a FARMER_PAYOUT whose
 * status became COMPLETED (it was not before), paid by mobile money (not a manual review closed as
 * paid in cash at the office, which has its own cash receipt), with no receipt marked yet; else null.
 * Loan disbursements and deposits get none.
 */
export function receiptDueFor(oldImage: ItemImage | undefined, newImage: ItemImage | undefined): Payout | null {
  if (newImage?.entity !== 'PAYMENT' || newImage.payment_type !== 'FARMER_PAYOUT') return null;
  if (newImage.status !== 'COMPLETED' || oldImage?.status === 'COMPLETED') return null;
  if ((newImage.settlement_channel ?? 'MOBILE_MONEY') !== 'MOBILE_MONEY' || newImage.receipt_sms_at !== undefined) return null;
  const p = newImage as unknown as Payout;
  if (typeof p.payment_id !== 'string' || typeof p.phone !== 'string' || typeof p.batch_id !== 'string') return null;
  if (!Number.isSafeInteger(p.amount_ugx)) return null;
  return p;
}

/** Whole shillings with thousands separators: 1234567 → `1,234,567`. */
function ugx(amount: number): string {
  return String(amount).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * The receipt's text: the amount in UGX (as settled), the batch and the payout id, in plain GSM-7
 * characters and at most 160 of them, so it is one SMS.
 */
export function payoutReceiptSms(p: Pick<Payout, 'payment_id' | 'batch_id' | 'amount_ugx'>): string {
  return `Coffee payment received: UGX ${ugx(p.amount_ugx)} for batch ${p.batch_id}. Payout ref ${p.payment_id}. Keep this SMS as your receipt.`;
}
