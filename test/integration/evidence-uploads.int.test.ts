import { createHash, randomBytes } from 'node:crypto';
import { api, stackUrl, token } from '../support/api';
import { batchBody, registerFarmer, setUpCooperative } from './fixtures';

/**
 * Photos by upload URL on the local stack (docs/api/evidence.md#evidence-photos-by-upload-url; issue 12 deliverable 3): the same flow as
 * in AWS against the S3 that fauxqs emulates. POST /batch/{id}/evidence-uploads answers a
 * presigned PUT made by the SDK's presigner; the photo is PUT there with plain fetch and exactly the
 * headers given; the stage update names the upload and the photo ends up in the stage's evidence
 * directory (fetched back through /ipfs/{cid}). fauxqs does not check signatures, so the size
 * binding is shown to hold through the service's own check (SIZE_MISMATCH).
 */

/** A 5 MiB "JPEG": a JFIF header, then random bytes — larger than a base64 photo may be (4 MiB). */
const BIG_JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
  randomBytes(5 * 1024 * 1024 - 22),
  Buffer.from([0xff, 0xd9]),
]);
const TEXT = Buffer.from('this is a shopping list, not a photo of graded coffee');

interface Upload {
  upload_id: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  expires_at: string;
  attach_by: string;
}

describe('evidence photos by upload URL', () => {
  let ctx: Awaited<ReturnType<typeof setUpCooperative>>;
  let batchId: string;
  let grader: string;
  beforeAll(async () => {
    ctx = await setUpCooperative();
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000631');
    const submit = await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) });
    batchId = submit.body.data.batch_id;
    grader = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['QUALITY_OFFICER'] });
  });

  const createUpload = async (tok: string, body: Record<string, unknown>, batch = batchId) =>
    api('POST', `/batch/${batch}/evidence-uploads`, { token: tok, body });
  const put = (u: Upload, bytes: Buffer) => fetch(u.url, { method: u.method, headers: u.headers, body: bytes });
  const patch = (tok: string, body: Record<string, unknown>) =>
    api('PATCH', `/batch/${batchId}/stage`, { token: tok, body: { cooperative_id: ctx.id, ...body } });

  it('refuses tokens without a stage duty or of another cooperative, unknown batches and bad bodies', async () => {
    const manager = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['MANAGER'] });
    const other = await setUpCooperative();
    const cases: Array<[Promise<{ status: number; body: any }>, number, string]> = [
      [createUpload(ctx.agent, { content_type: 'image/png', size_bytes: 10 }), 403, 'INSUFFICIENT_PERMISSIONS'],
      [createUpload(manager, { content_type: 'image/png', size_bytes: 10 }), 403, 'INSUFFICIENT_PERMISSIONS'],
      [createUpload(other.coop, { content_type: 'image/png', size_bytes: 10 }), 403, 'INSUFFICIENT_PERMISSIONS'],
      [createUpload(grader, { content_type: 'image/png', size_bytes: 10 }, 'BATCH-2026-999999'), 404, 'BATCH_NOT_FOUND'],
      [createUpload(grader, { content_type: 'image/gif', size_bytes: 10 }), 400, 'VALIDATION_ERROR'],
      [createUpload(grader, { content_type: 'image/png', size_bytes: 10 * 1024 * 1024 + 1 }), 400, 'VALIDATION_ERROR'],
      [createUpload(grader, { content_type: 'image/png', size_bytes: 0 }), 400, 'VALIDATION_ERROR'],
    ];
    for (const [res, status, code] of cases) {
      const r = await res;
      expect([r.status, r.body.error?.code]).toEqual([status, code]);
    }
  });

  it("takes a 5 MiB photo by upload URL into the stage's evidence, once", async () => {
    const created = await createUpload(grader, { content_type: 'image/jpeg', size_bytes: BIG_JPEG.byteLength });
    expect(created.status).toBe(201);
    const upload = created.body as Upload;
    expect(upload).toMatchObject({
      upload_id: expect.stringMatching(/^UPL-[0-9A-Z]{26}$/),
      method: 'PUT',
      headers: { 'Content-Type': 'image/jpeg', 'Content-Length': String(BIG_JPEG.byteLength) },
    });
    // The SDK presigner's URL, path-style on the local endpoint, with Content-Type and Content-Length signed.
    const url = new URL(upload.url);
    expect(url.pathname).toBe(`/coffee-trace-evidence-uploads-local/evidence-uploads/${batchId}/${upload.upload_id}`);
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(Date.parse(upload.expires_at) - Date.now()).toBeLessThanOrEqual(900_000);

    // Before the PUT the upload has no bytes: MISSING.
    const early = await patch(grader, {
      new_stage: 'GRADED',
      evidence: { grade: 'screen18', moisture_pct: 11 },
      evidence_upload_id: upload.upload_id,
    });
    expect([early.status, early.body.error?.code, early.body.error?.details?.reason]).toEqual([422, 'EVIDENCE_UPLOAD_INVALID', 'MISSING']);

    const res = await put(upload, BIG_JPEG);
    expect(res.status).toBe(200);

    // Not together with a base64 photo.
    const both = await patch(grader, {
      new_stage: 'GRADED',
      evidence: { grade: 'screen18', moisture_pct: 11 },
      evidence_upload_id: upload.upload_id,
      evidence_photo_base64: 'data:image/png;base64,AAAA',
    });
    expect([both.status, both.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);

    const graded = await patch(grader, {
      new_stage: 'GRADED',
      evidence: { grade: 'screen18', moisture_pct: 11 },
      evidence_upload_id: upload.upload_id,
    });
    expect(graded.status).toBe(200);
    const cid = graded.body.evidence_ipfs_cid as string;
    const listing = await api('GET', `/ipfs/${cid}`);
    expect(listing.body.entries.map((e: { name: string }) => e.name).sort()).toEqual(['evidence.json', 'photo.jpg']);
    const photo = Buffer.from(await (await fetch(`${stackUrl()}/ipfs/${cid}/photo.jpg`)).arrayBuffer());
    expect(photo.byteLength).toBe(BIG_JPEG.byteLength);
    expect(createHash('sha256').update(photo).digest('hex')).toBe(createHash('sha256').update(BIG_JPEG).digest('hex'));

    // The upload served GRADED; it cannot be the evidence of MILLED too.
    const miller = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['MILL_OPERATOR'] });
    const again = await patch(miller, {
      new_stage: 'MILLED',
      evidence: { mill_id: 'MILL-1', outturn_kg: 100 },
      evidence_upload_id: upload.upload_id,
    });
    expect([again.status, again.body.error?.code, again.body.error?.details?.reason]).toEqual([
      422,
      'EVIDENCE_UPLOAD_INVALID',
      'ALREADY_USED',
    ]);
  }, 60_000);

  it('replays a creation with the same Idempotency-Key (same upload), per batch', async () => {
    const headers = { 'idempotency-key': `upload-${Date.now()}` };
    const body = { content_type: 'image/webp', size_bytes: 2048 };
    const first = await api('POST', `/batch/${batchId}/evidence-uploads`, { token: grader, body, headers });
    const again = await api('POST', `/batch/${batchId}/evidence-uploads`, { token: grader, body, headers });
    expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect(again.body.upload_id).toBe(first.body.upload_id);
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000633');
    const otherBatch = (await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) })).body.data
      .batch_id as string;
    const elsewhere = await api('POST', `/batch/${otherBatch}/evidence-uploads`, { token: grader, body, headers });
    expect([elsewhere.status, elsewhere.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(elsewhere.body.upload_id).not.toBe(first.body.upload_id);
  });

  it('refuses bytes that are not the declared image type, and an object of another size than signed (422)', async () => {
    const miller = await token({ role: 'COOPERATIVE', cooperative_id: ctx.id, duties: ['MILL_OPERATOR'] });
    const milled = { new_stage: 'MILLED', evidence: { mill_id: 'MILL-1', outturn_kg: 100 } };

    const wrongType = (await createUpload(miller, { content_type: 'image/png', size_bytes: TEXT.byteLength })).body as Upload;
    expect((await put(wrongType, TEXT)).status).toBe(200);
    const r1 = await patch(miller, { ...milled, evidence_upload_id: wrongType.upload_id });
    expect([r1.status, r1.body.error?.code, r1.body.error?.details]).toEqual([
      422,
      'EVIDENCE_UPLOAD_INVALID',
      { upload_id: wrongType.upload_id, reason: 'TYPE_MISMATCH', content_type: 'image/png', detected: null },
    ]);

    // fauxqs does not verify signatures (S3 would answer 403), so PUT fewer bytes than signed: the stage update still refuses it.
    const wrongSize = (await createUpload(miller, { content_type: 'image/jpeg', size_bytes: 4096 })).body as Upload;
    const short = BIG_JPEG.subarray(0, 1024);
    expect((await fetch(wrongSize.url, { method: 'PUT', headers: { 'Content-Type': 'image/jpeg' }, body: short })).status).toBe(200);
    const r2 = await patch(miller, { ...milled, evidence_upload_id: wrongSize.upload_id });
    expect([r2.status, r2.body.error?.code, r2.body.error?.details]).toEqual([
      422,
      'EVIDENCE_UPLOAD_INVALID',
      { upload_id: wrongSize.upload_id, reason: 'SIZE_MISMATCH', size_bytes: 4096, uploaded_bytes: 1024 },
    ]);

    // An upload of another batch.
    const farmer = await registerFarmer(ctx.id, ctx.coop, '+256772000632');
    const otherBatch = (await api('POST', '/batch/submit', { token: ctx.coop, body: batchBody(farmer, ctx.id) })).body.data
      .batch_id as string;
    const foreign = (await createUpload(miller, { content_type: 'image/jpeg', size_bytes: 1024 }, otherBatch)).body as Upload;
    const r3 = await patch(miller, { ...milled, evidence_upload_id: foreign.upload_id });
    expect([r3.status, r3.body.error?.details?.reason]).toEqual([422, 'OTHER_BATCH']);

    // The batch is still at GRADED: nothing was committed.
    expect((await api('GET', `/batch/${batchId}`, { token: ctx.coop })).body.stage).toBe('GRADED');
  });
});
