import { maskPhone } from '../../shared/domain/masking';
import { payoutReceiptSms, receiptDueFor } from '../../shared/domain/payout-receipt';
import type { PayoutReceiptStore } from '../../shared/domain/ports/payouts';
import { logger } from '../../shared/runtime/logger';
import { sendPayoutReceipt, type PayoutReceiptDeps } from '../../shared/use-cases/payout-receipt';

const PHONE = '+256772123456';
const processing = {
  entity: 'PAYMENT',
  payment_id: 'PAY-2026-000123-01',
  payment_type: 'FARMER_PAYOUT',
  batch_id: 'BATCH-2026-000123',
  cooperative_id: 'COOP-KAWA',
  farmer_id: 'FARMER-1',
  status: 'PROCESSING',
  phone: PHONE,
  amount_usd_micro: 350_000_000,
  amount_ugx: 1_295_087,
};
const completed = { ...processing, status: 'COMPLETED', completed_at: '2026-11-27T04:00:00.000Z' };

/** The receipt mark with the adapter's conditions, in memory (`status` of each payout given). */
function memoryReceipts(): PayoutReceiptStore & { marks: Map<string, string> } {
  const marks = new Map<string, string>();
  return {
    marks,
    async claimReceipt(id, at) {
      if (marks.has(id)) return false;
      marks.set(id, at);
      return true;
    },
    async releaseReceipt(id, at) {
      if (marks.get(id) === at) marks.delete(id);
    },
  };
}

function deps(sendSms: PayoutReceiptDeps['notifier']['sendSms']) {
  const receipts = memoryReceipts();
  let n = 0;
  return { receipts, d: { receipts, notifier: { sendSms }, now: () => new Date(Date.UTC(2026, 10, 27, 4, 0, n++)) } };
}

describe('which change owes a receipt (docs/operations.md#sms-receipt-to-the-farmer)', () => {
  it('a FARMER_PAYOUT that became COMPLETED by mobile money; not a replay of COMPLETED, cash, a disbursement, a marked one', () => {
    expect(receiptDueFor(processing, completed)?.payment_id).toBe('PAY-2026-000123-01');
    expect(receiptDueFor(undefined, completed)).not.toBeNull(); // an insert already COMPLETED
    expect(receiptDueFor(processing, processing)).toBeNull();
    expect(receiptDueFor(completed, { ...completed, receipt_sms_at: 'x' })).toBeNull();
    expect(receiptDueFor(processing, { ...completed, receipt_sms_at: 'x' })).toBeNull();
    expect(receiptDueFor({ ...processing, status: 'MANUAL_REVIEW' }, { ...completed, settlement_channel: 'CASH_AT_OFFICE' })).toBeNull();
    expect(receiptDueFor(processing, { ...completed, settlement_channel: 'MOBILE_MONEY' })).not.toBeNull();
    expect(receiptDueFor(processing, { ...completed, payment_type: 'LOAN_DISBURSEMENT' })).toBeNull();
    expect(receiptDueFor(processing, { ...completed, entity: 'BATCH' })).toBeNull();
    expect(receiptDueFor(processing, undefined)).toBeNull();
  });

  it('the text: amount in UGX, batch and payout id, one SMS (≤ 160 GSM-7 characters) even at the longest', () => {
    expect(payoutReceiptSms(completed)).toBe(
      'Coffee payment received: UGX 1,295,087 for batch BATCH-2026-000123. Payout ref PAY-2026-000123-01. Keep this SMS as your receipt.',
    );
    const longest = payoutReceiptSms({ amount_ugx: 999_999_999_999, batch_id: 'BATCH-2026-999999', payment_id: 'PAY-2026-999999-99' });
    expect(longest.length).toBeLessThanOrEqual(160);
    expect(longest).toMatch(/^[A-Za-z0-9 .,:-]+$/);
  });
});

describe('sendPayoutReceipt', () => {
  it('sends once per payout: the change delivered again sends nothing', async () => {
    const sent: Array<{ phone: string; message: string; attributes: Record<string, string> }> = [];
    const { d } = deps(async (m) => {
      sent.push(m);
      return { messageId: 'm1' };
    });
    expect(await sendPayoutReceipt(d, { oldImage: processing, newImage: completed })).toBe('SENT');
    expect(await sendPayoutReceipt(d, { oldImage: processing, newImage: completed })).toBe('ALREADY_SENT');
    expect(await sendPayoutReceipt(d, { oldImage: completed, newImage: { ...completed, receipt_sms_at: 'x' } })).toBe('NOT_DUE');
    expect(sent).toEqual([
      {
        phone: PHONE,
        message: payoutReceiptSms(completed),
        attributes: { event: 'payout.receipt', payout_id: completed.payment_id, batch_id: completed.batch_id, cooperative_id: 'COOP-KAWA' },
      },
    ]);
  });

  it('an SMS that fails takes its mark back and throws with the phone masked; the next delivery sends it', async () => {
    let fail = true;
    const sent: string[] = [];
    const { d, receipts } = deps(async (m) => {
      if (fail) throw new Error(`Invalid parameter: PhoneNumber ${m.phone} unreachable`);
      sent.push(m.phone);
      return { messageId: 'm2' };
    });
    const err = await sendPayoutReceipt(d, { oldImage: processing, newImage: completed }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(maskPhone(PHONE));
    expect((err as Error).message).not.toContain(PHONE);
    expect(receipts.marks.size).toBe(0);
    fail = false;
    expect(await sendPayoutReceipt(d, { oldImage: processing, newImage: completed })).toBe('SENT');
    expect(sent).toEqual([PHONE]);
  });

  it('logs the phone masked, never in full', async () => {
    const lines: unknown[] = [];
    const spy = jest.spyOn(logger, 'info').mockImplementation((...args: unknown[]) => void lines.push(args));
    try {
      const { d } = deps(async () => ({ messageId: 'm3' }));
      await sendPayoutReceipt(d, { oldImage: processing, newImage: completed });
      await sendPayoutReceipt(d, { oldImage: processing, newImage: completed });
    } finally {
      spy.mockRestore();
    }
    const text = JSON.stringify(lines);
    expect(lines.length).toBe(2);
    expect(text).toContain(maskPhone(PHONE));
    expect(text).not.toContain(PHONE);
  });
});
