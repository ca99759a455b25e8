import { api, notifications, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * The farmer's SMS receipt through the API on the local stack (docs/operations.md#sms-receipt-to-the-farmer):
 * a batch's payout settles (COMPLETED), and the payout-receipt-sender (a consumer of the table's
 * stream, as in AWS) sends one SMS to the farmer's phone — locally a line of notifications.jsonl on
 * the SMS stand-in topic (`channel: "sms"`, the number in `phone_number`) — with the amount in UGX
 * as settled, the batch and the payout id. Later changes of the payout send no second one.
 */

const PHONE = '+256772004231';
const receipts = (payoutId: string) =>
  (notifications() as Array<ReturnType<typeof notifications>[number] & { channel?: string }>).filter(
    (n) => n.attributes.event === 'payout.receipt' && n.attributes.payout_id === payoutId,
  );

describe('SMS receipt to the farmer (docs/operations.md#sms-receipt-to-the-farmer)', () => {
  it('a normal payout: COMPLETED, then one SMS with the UGX amount, batch and payout id to the farmer', async () => {
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.agent, PHONE);
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    expect(submit.status).toBe(201);
    const batchId = submit.body.data.batch_id as string;
    const payoutId = (
      await waitFor(
        () => api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop }),
        (r) => !!r.body.payments?.[0],
        30_000,
      )
    ).body.payments[0].payment_id as string;
    const done = await waitFor(
      () => api('GET', `/payments/${payoutId}`, { token: ctx.coop }),
      (r) => r.body.status === 'COMPLETED',
      30_000,
      200,
    );
    const amountUgx = done.body.amount_ugx as number;
    expect(amountUgx).toBeGreaterThan(0);

    const sms = await waitFor(
      async () => receipts(payoutId),
      (n) => n.length >= 1,
      20_000,
      200,
    );
    expect(sms).toHaveLength(1);
    expect(sms[0]).toMatchObject({
      channel: 'sms',
      attributes: { event: 'payout.receipt', payout_id: payoutId, batch_id: batchId, cooperative_id: ctx.id, phone_number: PHONE },
    });
    const text = sms[0]!.message;
    expect(text).toContain(`UGX ${amountUgx.toLocaleString('en-US')}`);
    expect(text).toContain(batchId);
    expect(text).toContain(payoutId);
    expect(text.length).toBeLessThanOrEqual(160);

    // The receipt mark is itself a change of the payout, and the stream may deliver again: still one SMS.
    await new Promise((r) => setTimeout(r, 3000));
    expect(receipts(payoutId)).toHaveLength(1);
  }, 90_000);
});
