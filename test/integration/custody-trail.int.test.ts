import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { runVerify } from '../../infra/tools/verify-cli';
import { api, landed, token, waitFor, localStack } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative, purchaseOrderBody } from './fixtures';
import { LOCAL_TABLE_NAME, localTableClient } from '../../infra/local/dynamodb-local';

/**
 * The custody trail on the real local components (issue "custody trail anyone can verify"):
 * DELIVERED → GRADED → MILLED → WAREHOUSED → (purchase order confirmed) COMMITTED → EXPORTED →
 * automatic TOP_UP payout, each change in the trace log, the audit log and IPFS.
 */

// A 1×1 PNG.
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('custody trail', () => {
  let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
  let batchId: string;
  beforeAll(async () => {
    ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000555');
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id, { weight_kg: 240.75 }) });
    // 201 when the mint's receipt comes within the request's wait, else 202 and the job (on 2-second blocks): minted either way.
    ({ batchId } = await landed(submit, ctx.coop));
  });

  /** The batch's last history entry once the stage change `res` (200, or 202 and its job) landed: it holds the change's transaction. */
  const landedEntry = async (res: { status: number; body: any }) => {
    const { txHash } = await landed(res, ctx.coop);
    const entry = (await api('GET', `/batch/${batchId}`, { token: ctx.coop })).body.stage_history.at(-1);
    expect(entry.chain_tx_hash).toBe(txHash);
    return entry;
  };

  const patch = (tok: string, body: Record<string, unknown>) =>
    api('PATCH', `/batch/${batchId}/stage`, { token: tok, body: { cooperative_id: ctx.id, ...body } });

  it('refuses wrong stages, duties, cooperatives and evidence without changing the batch', async () => {
    const grader = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['QUALITY_OFFICER'] });
    const miller = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['MILL_OPERATOR'] });
    const cases: Array<[Promise<{ status: number; body: any }>, number, string]> = [
      [patch(ctx.coop, { new_stage: 'MILLED', evidence: { mill_id: 'M1', outturn_kg: 200 } }), 422, 'STAGE_OUT_OF_ORDER'],
      [patch(ctx.coop, { new_stage: 'COMMITTED', evidence: {} }), 400, 'VALIDATION_ERROR'],
      [patch(ctx.agent, { new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } }), 403, 'INSUFFICIENT_PERMISSIONS'],
      [patch(miller, { new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } }), 403, 'INSUFFICIENT_PERMISSIONS'],
      [patch(grader, { new_stage: 'GRADED', evidence: { grade: 'AA', moisture_pct: 11 } }), 400, 'INVALID_GRADE'],
      [patch(grader, { new_stage: 'GRADED', evidence: { moisture_pct: 11 } }), 400, 'VALIDATION_ERROR'],
      [
        patch(grader, {
          new_stage: 'GRADED',
          evidence: { grade: 'screen18', moisture_pct: 11 },
          evidence_photo_base64: 'data:image/png;base64,SGVsbG8gd29ybGQ=',
        }),
        400,
        'VALIDATION_ERROR',
      ],
      [
        api('PATCH', '/batch/BATCH-2026-999999/stage', {
          token: grader,
          body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } },
        }),
        404,
        'BATCH_NOT_FOUND',
      ],
    ];
    for (const [res, status, code] of cases) {
      const r = await res;
      expect([r.status, r.body.error?.code]).toEqual([status, code]);
    }
    const other = await setUpCooperative();
    const foreign = await api('PATCH', `/batch/${batchId}/stage`, {
      token: other.coop,
      body: { cooperative_id: other.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } },
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    const batch = await api('GET', `/batch/${batchId}`, { token: ctx.coop });
    expect(batch.body.stage).toBe('DELIVERED');
  });

  it('runs DELIVERED → GRADED → MILLED → WAREHOUSED → COMMITTED → EXPORTED and pays the export premium', async () => {
    // GRADED, with a photo
    const graded = await patch(ctx.coop, {
      new_stage: 'GRADED',
      evidence: { grade: 'screen18', moisture_pct: 11.2, screen_size: 18, defect_count: 3, cupping_score: 84.5 },
      evidence_photo_base64: PNG,
    });
    expect([200, 202]).toContain(graded.status);
    if (graded.status === 200)
      expect(graded.body).toMatchObject({
        batch_id: batchId,
        previous_stage: 'DELIVERED',
        new_stage: 'GRADED',
        dds_eligible: true,
        chain_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        evidence_ipfs_cid: expect.stringMatching(/^bafy/),
      });
    const gradedEntry = await landedEntry(graded);
    expect(gradedEntry).toMatchObject({ stage: 'GRADED', evidence_ipfs_cid: expect.stringMatching(/^bafy/) });
    const listing = await api('GET', `/ipfs/${gradedEntry.evidence_ipfs_cid}`);
    expect(listing.body.entries.map((e: { name: string }) => e.name).sort()).toEqual(['evidence.json', 'photo.png']);
    const evidenceJson = await api('GET', `/ipfs/${gradedEntry.evidence_ipfs_cid}/evidence.json`);
    expect(evidenceJson.body).toMatchObject({ grade: 'screen18', cupping_score: 84.5 });

    const milled = await patch(ctx.coop, {
      new_stage: 'MILLED',
      evidence: { mill_id: 'MILL-MBALE-2', outturn_kg: 192.6, milled_at: '2026-11-20T08:00:00Z' },
    });
    expect((await landedEntry(milled)).stage).toBe('MILLED');
    const tooMuch = await patch(ctx.coop, { new_stage: 'WAREHOUSED', evidence: {} });
    expect([tooMuch.status, tooMuch.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const warehoused = await patch(ctx.coop, {
      new_stage: 'WAREHOUSED',
      evidence: { warehouse_id: 'WH-MBALE-1', lot_number: 'LOT-2026-118', position: 'A-3' },
    });
    expect((await landedEntry(warehoused)).stage).toBe('WAREHOUSED');

    // EXPORTED before the purchase order is confirmed
    const po = await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: purchaseOrderBody([batchId]),
    });
    expect(po.status).toBe(201);
    expect(po.body.status).toBe('DRAFT');
    const early = await patch(ctx.coop, {
      new_stage: 'EXPORTED',
      evidence: { export_permit: 'UCDA-EXP-2026-0091', destination_country: 'DE' },
    });
    expect([early.status, early.body.error.code]).toEqual([422, 'PO_NOT_CONFIRMED']);
    expect((await api('POST', '/purchase-orders/PO-NOPE/confirm', { token: ctx.coop })).body.error.code).toBe('PO_NOT_FOUND');
    const confirmed = await api('POST', `/purchase-orders/${po.body.purchase_order_id}/confirm`, { token: ctx.coop });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'CONFIRMED', committed_batch_ids: [batchId] });
    // GET /purchase-orders/{id}: the cooperative reads it back; an unknown id is 404, a malformed one 400
    const read = await api('GET', `/purchase-orders/${po.body.purchase_order_id}`, { token: ctx.coop });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ purchase_order_id: po.body.purchase_order_id, status: 'CONFIRMED', batch_ids: [batchId] });
    expect(read.body).not.toHaveProperty('committed_batch_ids');
    expect((await api('GET', '/purchase-orders/PO-01M829S6SDZ6HNR7JWSZV7CY6H', { token: ctx.coop })).body.error.code).toBe('PO_NOT_FOUND');
    expect((await api('GET', '/purchase-orders/nope!', { token: ctx.coop })).status).toBe(400);
    const committed = await waitFor(
      () => api('GET', `/batch/${batchId}`, { token: ctx.coop }),
      (r) => r.body.stage === 'COMMITTED' && r.body.stage_history.every((h: { chain_tx_hash: string | null }) => h.chain_tx_hash),
      10_000,
    );
    expect(committed.body.stage).toBe('COMMITTED');

    const badCountry = await patch(ctx.coop, {
      new_stage: 'EXPORTED',
      evidence: { export_permit: 'UCDA-EXP-2026-0091', destination_country: 'XX' },
    });
    expect([badCountry.status, badCountry.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const exported = await patch(ctx.coop, {
      new_stage: 'EXPORTED',
      evidence: {
        export_permit: 'UCDA-EXP-2026-0091',
        destination_country: 'DE',
        vessel_name: 'MSC Kampala',
        bill_of_lading: 'MSCU1234567',
      },
    });
    expect((await landedEntry(exported)).stage).toBe('EXPORTED');

    // The chain watcher reports EXPORTED; the TOP_UP payout follows: round(240.75 × 400) UGX
    const topUp = await waitFor(
      async () => {
        const list = await api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop });
        const ids: string[] = list.body.payments.map((p: { payment_id: string }) => p.payment_id);
        const all = await Promise.all(ids.map((id) => api('GET', `/payments/${id}`, { token: ctx.coop })));
        return all.map((r) => r.body).find((p) => p.reason === 'TOP_UP');
      },
      (p) => p?.status === 'COMPLETED',
      20_000,
      200,
    );
    expect(topUp).toMatchObject({ reason: 'TOP_UP', status: 'COMPLETED' });
    expect(topUp.amount_ugx).toBeGreaterThanOrEqual(96_300);

    // the trail: one history entry per stage, each with its transaction; one audit entry per change
    const batch = await api('GET', `/batch/${batchId}`, { token: ctx.coop });
    expect(batch.body.stage_history.map((h: { stage: string }) => h.stage)).toEqual([
      'DELIVERED',
      'GRADED',
      'MILLED',
      'WAREHOUSED',
      'COMMITTED',
      'EXPORTED',
    ]);
    const txs = batch.body.stage_history.map((h: { chain_tx_hash: string }) => h.chain_tx_hash);
    expect(new Set(txs).size).toBe(6);
    const audit = await api('GET', `/batch/${batchId}/audit`, { token: ctx.coop });
    const stageEntries = audit.body.entries.filter((e: { type: string }) => e.type === 'STAGE_CHANGED');
    expect(stageEntries.map((e: { payload: { stage: string } }) => e.payload.stage)).toEqual([
      'GRADED',
      'MILLED',
      'WAREHOUSED',
      'COMMITTED',
      'EXPORTED',
    ]);
  });

  it('passes `npm run verify` and GET /batch/{id}/audit, and both name the entry altered in the database', async () => {
    const stack = localStack();
    const admin = await token({ role: 'ADMIN', sub: 'auditor' });
    const args = [
      batchId,
      '--api',
      stack.url,
      '--token',
      admin,
      '--rpc',
      stack.endpoints.ledger!,
      '--chain-id',
      '31337',
      '--batch-token',
      stack.endpoints.batch_token!,
      '--trace-log',
      stack.endpoints.trace_log!,
      '--audit-anchor',
      stack.endpoints.audit_anchor!,
      '--ipfs-gateway',
      stack.url,
    ];
    const run = async () => {
      const lines: string[] = [];
      const code = await runVerify(
        args,
        (l) => lines.push(l),
        (l) => lines.push(l),
      );
      return { code, text: lines.join('\n') };
    };
    // Every entry anchored first (the periodic anchor runs every 3 s here).
    await waitFor(
      () => api('GET', `/batch/${batchId}/audit`, { token: ctx.coop }),
      (r) => r.body.verified === true,
      30_000,
      250,
    );
    const good = await run();
    expect(good.code).toBe(0);
    const audit = await api('GET', `/batch/${batchId}/audit`, { token: ctx.coop });
    expect(audit.body.verified).toBe(true);

    // Alter the GRADED entry's evidence directly in the table, as an insider could
    const graded = audit.body.entries.find(
      (e: { type: string; payload: { stage: string } }) => e.type === 'STAGE_CHANGED' && e.payload.stage === 'GRADED',
    );
    const doc = localTableClient(stack.endpoints.dynamodb!);
    await doc.send(
      new UpdateCommand({
        TableName: LOCAL_TABLE_NAME,
        Key: { PK: `AUDIT#${batchId}`, SK: `SEQ#${String(graded.sequence_number).padStart(8, '0')}` },
        UpdateExpression: 'SET payload.evidence.moisture_pct = :m',
        ExpressionAttributeValues: { ':m': 9.9 },
      }),
    );
    const bad = await run();
    expect(bad.code).toBe(1);
    expect(bad.text).toContain(graded.message_id);
    const after = await api('GET', `/batch/${batchId}/audit`, { token: ctx.coop });
    expect(after.body.verified).toBe(false);
    expect(after.body.checks.some((c: { ok: boolean; message_id: string }) => !c.ok && c.message_id === graded.message_id)).toBe(true);
    doc.destroy();
  });
});
