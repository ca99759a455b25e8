import { isDeepStrictEqual } from 'node:util';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { api, stackUrl, waitFor } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative, purchaseOrderBody } from './fixtures';

/**
 * The EU evidence pack on the local stack (issue 13, "the evidence pack's CID recomputable from its
 * bytes"): a GRADED batch on a purchase order gets its DDS; GET /eudr/dds/{id}/evidence answers the
 * pack whose CID, recomputed here from the raw response bytes (sha2-256 → CIDv1 raw), equals
 * `X-Evidence-Pack-CID` and the ETag; it names the batch's evidence CIDs, ledger transactions and
 * audit hashes, holds no phone number or payout amount, and the same trail gives the same bytes.
 */

const PHONE = '+256772000913';

async function fetchPack(ddsId: string, tok: string): Promise<{ status: number; headers: Headers; bytes: Uint8Array }> {
  const res = await fetch(`${stackUrl()}/eudr/dds/${ddsId}/evidence`, { headers: { authorization: `Bearer ${tok}` } });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const cidOf = async (bytes: Uint8Array) => CID.create(1, 0x55, await sha256.digest(bytes)).toString();

describe('GET /eudr/dds/{id}/evidence', () => {
  it("answers the pack whose CID anyone recomputes from its bytes, naming the trail's evidence and ledger transactions, without a phone number", async () => {
    // Prepare: a GRADED batch on a purchase order naming the EU importer, and its DDS
    const ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop, PHONE);
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    expect(submit.status).toBe(201);
    const batchId = submit.body.data.batch_id;
    const graded = await api('PATCH', `/batch/${batchId}/stage`, {
      token: ctx.coop,
      body: { cooperative_id: ctx.id, new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11 } },
    });
    expect(graded.status).toBe(200);
    await api('POST', '/purchase-orders', {
      token: ctx.coop,
      body: purchaseOrderBody([batchId]),
    });
    const gen = await api('POST', '/eudr/generate-dds', { token: ctx.coop, body: { batch_id: batchId } });
    expect(gen.status).toBe(202);
    const ddsId = gen.body.dds_id as string;
    const dds = await waitFor(
      () => api('GET', `/eudr/dds/${ddsId}`, { token: ctx.coop }),
      (r) => r.body.status === 'AVAILABLE',
      30_000,
      200,
    );
    expect(dds.body.status).toBe('AVAILABLE');

    // Act
    const pack = await fetchPack(ddsId, ctx.coop);

    // Assess: the CID from the raw bytes
    expect(pack.status).toBe(200);
    expect(pack.headers.get('content-type')).toContain('application/json');
    const cid = await cidOf(pack.bytes);
    expect(cid).toMatch(/^bafkrei/);
    expect(pack.headers.get('x-evidence-pack-cid')).toBe(cid);
    expect(pack.headers.get('etag')).toBe(`"${cid}"`);
    process.stdout.write(`evidence pack of ${ddsId}: ${pack.bytes.length} bytes, CID ${cid}\n`);

    // The content: the DDS as GET /eudr/dds/{id} shows it, the trail's evidence CIDs and ledger transactions, the audit hashes
    const text = new TextDecoder().decode(pack.bytes);
    const body = JSON.parse(text);
    expect(body.pack_version).toBe(1);
    expect(body.dds).toEqual(dds.body);
    const batch = (await api('GET', `/batch/${batchId}`, { token: ctx.coop })).body;
    const stageHistory = (batch.stage_history ?? batch.data?.stage_history) as Array<{
      stage: string;
      evidence_ipfs_cid: string | null;
      chain_tx_hash: string | null;
    }>;
    const gradedStage = stageHistory.find((h) => h.stage === 'GRADED')!;
    expect(gradedStage.evidence_ipfs_cid).toMatch(/^bafy/);
    expect(gradedStage.chain_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(
      body.trail.map((s: { stage: string; evidence_ipfs_cid: string | null; chain_tx_hash: string | null }) => [
        s.stage,
        s.evidence_ipfs_cid,
        s.chain_tx_hash,
      ]),
    ).toEqual(stageHistory.map((h) => [h.stage, h.evidence_ipfs_cid, h.chain_tx_hash]));
    expect(text).toContain(gradedStage.evidence_ipfs_cid!);
    expect(text).toContain(gradedStage.chain_tx_hash!);
    const audit = (await api('GET', `/batch/${batchId}/audit`, { token: ctx.coop })).body;
    const packHashes = body.audit.entries.map((e: { hash: string }) => e.hash);
    expect(packHashes).toEqual(audit.entries.slice(0, packHashes.length).map((e: { hash: string }) => e.hash));
    expect(body.audit.head).toEqual({ sequence_number: body.audit.entries.at(-1).sequence_number, hash: body.audit.entries.at(-1).hash });
    for (const e of body.audit.entries) expect(e).toHaveProperty('anchor');
    expect(body.audit.entries[0].anchor).toMatchObject({ tx_hash: stageHistory[0]!.chain_tx_hash, block_number: expect.any(Number) }); // the mint
    expect(body.forest_checks).toEqual([
      {
        farmer_id: farmer,
        status: 'CLEAR',
        checked_at: expect.any(String),
        dataset: { name: expect.any(String), version: expect.any(String) },
      },
    ]);

    // No phone number, no payout amount
    expect(text).not.toContain(PHONE);
    expect(text).not.toContain(PHONE.slice(1));
    expect(text).not.toContain(PHONE.slice(4));
    expect(text).not.toMatch(/"[a-z_]*(phone|payment|amount|payload)[a-z_]*":/);
    const payments = (await api('GET', `/payments?batch_id=${batchId}`, { token: ctx.coop })).body.payments as Array<{
      payment_id: string;
    }>;
    for (const p of payments) expect(text).not.toContain(p.payment_id);

    // Every entry anchored after the interval (docs/api/anchoring.md#anchoring-of-the-audit-log): the pack carries the anchors GET /batch/{id}/audit shows
    const anchoredView = (entries: Array<{ sequence_number: number; hash: string; anchor: unknown }>) =>
      entries.map((e) => [e.sequence_number, e.hash, e.anchor]);
    const t0 = Date.now();
    const settled = await waitFor(
      async () => {
        const p = await fetchPack(ddsId, ctx.coop);
        const a = (await api('GET', `/batch/${batchId}/audit`, { token: ctx.coop })).body;
        return { pack: JSON.parse(new TextDecoder().decode(p.bytes)), audit: a, bytes: p.bytes, headers: p.headers };
      },
      ({ pack: pk, audit: a }) =>
        pk.audit.entries.every((e: { anchor: unknown }) => e.anchor !== null) &&
        isDeepStrictEqual(anchoredView(pk.audit.entries), anchoredView(a.entries)),
      30_000,
      300,
    );
    expect(anchoredView(settled.pack.audit.entries)).toEqual(anchoredView(settled.audit.entries));
    process.stdout.write(`evidence pack: all ${settled.pack.audit.entries.length} entries anchored ${Date.now() - t0} ms later\n`);
    const periodic = settled.pack.audit.entries.filter((e: { anchor: { root?: string } }) => e.anchor.root);
    expect(periodic.length).toBeGreaterThan(0); // the purchase-order and payout entries, by the periodic anchor
    for (const e of settled.pack.audit.entries) expect(new TextDecoder().decode(settled.bytes)).toContain(e.anchor.tx_hash);
    expect(settled.headers.get('x-evidence-pack-cid')).toBe(await cidOf(settled.bytes));

    // The same trail gives the same bytes (two reads in a row; retried should an anchor land between them)
    const again = await waitFor(
      async () => ({ a: await fetchPack(ddsId, ctx.coop), b: await fetchPack(ddsId, ctx.coop) }),
      ({ a, b }) => Buffer.from(a.bytes).equals(Buffer.from(b.bytes)),
      10_000,
      200,
    );
    expect(Buffer.from(again.b.bytes).equals(Buffer.from(again.a.bytes))).toBe(true);
    expect(again.b.headers.get('x-evidence-pack-cid')).toBe(await cidOf(again.b.bytes));

    // Access as GET /eudr/dds/{id}
    const other = await setUpCooperative();
    const refused = await fetchPack(ddsId, other.coop);
    expect(refused.status).toBe(403);
    expect(JSON.parse(new TextDecoder().decode(refused.bytes)).error.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await fetchPack(ddsId, ctx.agent)).status).toBe(403);
    expect((await fetchPack(ddsId, ctx.admin)).status).toBe(200);
    const unknown = await fetchPack('DDS-2025-999999', ctx.coop);
    expect([unknown.status, JSON.parse(new TextDecoder().decode(unknown.bytes)).error.code]).toEqual([404, 'DDS_NOT_FOUND']);
  });
});
