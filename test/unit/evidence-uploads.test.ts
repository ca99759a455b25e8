import { crc32, deflateSync } from 'node:zlib';
import type { Caller } from '../../shared/domain/caller';
import { EVIDENCE_UPLOAD_ID_PATTERN, MAX_EVIDENCE_UPLOAD_BYTES, type EvidenceUpload } from '../../shared/domain/evidence-upload';
import type { EvidenceUploadReader, EvidenceUploadStore } from '../../shared/domain/ports/evidence';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import type { Batch, Stage } from '../../shared/domain/records';
import type { CustodyDeps, StageUpdateInput } from '../../shared/use-cases/custody';
import {
  changeStageWithEvidence,
  createEvidenceUpload,
  resolveUploadedPhoto,
  type EvidenceUploadDeps,
  type UploadedPhotoDeps,
} from '../../shared/use-cases/evidence-uploads';
import { ADMIN, agent, coop } from './support/api-event';
import { domainErrorOf, onTheWire } from './support/errors';
import { aBatch, fakeBatchStore, fakeCustodyStore, fakeWorkQueue } from './support/fakes';

/**
 * Evidence photos by upload URL (docs/api/evidence.md#evidence-photos-by-upload-url): creating an upload (roles, batch, the record and
 * the presigned PUT), and resolving an upload in the stage update — each reason it cannot be
 * attached (MISSING, OTHER_BATCH, EXPIRED, SIZE_MISMATCH, TYPE_MISMATCH, ALREADY_USED), one upload
 * for one stage only, both photo fields at once (400), and the uploaded bytes reaching the
 * evidence package like a base64 photo.
 */

// ------------------------------------------------------------------------------ real tiny images

const chunk = (type: string, data: Uint8Array) => {
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
};
/** 1×1 RGB PNG. */
const PNG = new Uint8Array(
  Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0])),
    chunk('IDAT', deflateSync(Buffer.from([0, 0x6f, 0x4e, 0x37]))),
    chunk('IEND', Buffer.alloc(0)),
  ]),
);
/** The start of a JFIF JPEG: enough for the type sniffer to say image/jpeg. */
const JPEG = new Uint8Array([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9,
]);
const TEXT = new Uint8Array(Buffer.from('not an image at all, just words'));

// ------------------------------------------------------------------------------ fakes

const BATCH_ID = 'BATCH-2026-000001';
const T0 = new Date('2026-11-22T10:00:00.000Z');
const UPLOAD_ID = 'UPL-01M82A3B5K7Q9S1V3X5Z7B9D1F';
const QUALITY: Caller = { ...coop('COOP-1'), duties: ['QUALITY_OFFICER'] };

/** An in-memory upload store with the adapter's conditional rules. */
function memoryUploads(): EvidenceUploadStore & { rows: Map<string, EvidenceUpload> } {
  const rows = new Map<string, EvidenceUpload>();
  return {
    rows,
    create: async (u) => {
      if (rows.has(u.upload_id)) throw new Error(`upload ${u.upload_id} exists`);
      rows.set(u.upload_id, { ...u });
    },
    get: async (id) => (rows.has(id) ? { ...rows.get(id)! } : null),
    consume: async (id, stage: Stage, at) => {
      const u = rows.get(id);
      if (!u || (u.consumed_stage && u.consumed_stage !== stage)) return false;
      rows.set(id, { ...u, consumed_stage: stage, consumed_at: u.consumed_at ?? at });
      return true;
    },
  };
}

/** Objects by key; `read` honours maxBytes as the S3 reader does. */
function memoryObjects(objects: Map<string, Uint8Array>): EvidenceUploadReader & { reads: Array<{ key: string; maxBytes: number }> } {
  const reads: Array<{ key: string; maxBytes: number }> = [];
  return {
    reads,
    read: async (key, maxBytes) => {
      reads.push({ key, maxBytes });
      const o = objects.get(key);
      if (!o) return null;
      return o.byteLength > maxBytes ? { sizeBytes: o.byteLength } : { sizeBytes: o.byteLength, bytes: o };
    },
  };
}

function anUpload(over: Partial<EvidenceUpload> = {}): EvidenceUpload {
  return {
    upload_id: UPLOAD_ID,
    batch_id: BATCH_ID,
    cooperative_id: 'COOP-1',
    content_type: 'image/png',
    size_bytes: PNG.byteLength,
    object_key: `evidence-uploads/${BATCH_ID}/${UPLOAD_ID}`,
    created_by: 'coop-user-1',
    created_at: T0.toISOString(),
    url_expires_at: '2026-11-22T10:15:00.000Z',
    attach_by: '2026-11-23T10:00:00.000Z',
    ...over,
  };
}

function resolver(opts: { upload?: EvidenceUpload | null; object?: Uint8Array | null; now?: Date } = {}) {
  const uploads = memoryUploads();
  const upload = opts.upload === undefined ? anUpload() : opts.upload;
  if (upload) uploads.rows.set(upload.upload_id, upload);
  const objects = new Map<string, Uint8Array>();
  const object = opts.object === undefined ? PNG : opts.object;
  if (upload && object) objects.set(upload.object_key, object);
  const reader = memoryObjects(objects);
  const deps: UploadedPhotoDeps = { uploads, reader, now: () => opts.now ?? new Date('2026-11-22T10:05:00.000Z') };
  return { deps, uploads, reader };
}

// ------------------------------------------------------------------------------ creating an upload

describe('createEvidenceUpload', () => {
  function creator(batch: Batch | null = aBatch({ batch_id: BATCH_ID })) {
    const uploads = memoryUploads();
    const presigned: Array<{ key: string; contentType: string; sizeBytes: number; expiresInSeconds: number }> = [];
    const deps: EvidenceUploadDeps = {
      batches: fakeBatchStore({ get: async (id) => (batch && id === batch.batch_id ? batch : null) }),
      uploads,
      objects: {
        presignPut: async (input) => {
          presigned.push(input);
          return {
            url: `https://uploads.example/${input.key}?X-Amz-Signature=abc`,
            headers: { 'Content-Type': input.contentType, 'Content-Length': String(input.sizeBytes) },
          };
        },
      },
      now: () => T0,
    };
    return { deps, uploads, presigned };
  }

  it('stores the upload and answers a PUT bound to the type and exact size, valid 15 minutes, attachable for 24 hours', async () => {
    const { deps, uploads, presigned } = creator();
    const t = await createEvidenceUpload(deps, QUALITY, BATCH_ID, { content_type: 'image/jpeg', size_bytes: 4_718_592 });
    expect(t.upload.upload_id).toMatch(EVIDENCE_UPLOAD_ID_PATTERN);
    expect(t.method).toBe('PUT');
    expect(t.headers).toEqual({ 'Content-Type': 'image/jpeg', 'Content-Length': '4718592' });
    expect(presigned).toEqual([
      { key: `evidence-uploads/${BATCH_ID}/${t.upload.upload_id}`, contentType: 'image/jpeg', sizeBytes: 4_718_592, expiresInSeconds: 900 },
    ]);
    expect(t.upload).toMatchObject({
      batch_id: BATCH_ID,
      cooperative_id: 'COOP-1',
      created_by: QUALITY.sub,
      url_expires_at: '2026-11-22T10:15:00.000Z',
      attach_by: '2026-11-23T10:00:00.000Z',
    });
    expect(uploads.rows.get(t.upload.upload_id)).toEqual(t.upload);
  });

  it('gives every upload its own id', async () => {
    const { deps } = creator();
    const a = await createEvidenceUpload(deps, ADMIN, BATCH_ID, { content_type: 'image/png', size_bytes: 10 });
    const b = await createEvidenceUpload(deps, ADMIN, BATCH_ID, { content_type: 'image/png', size_bytes: 10 });
    expect(a.upload.upload_id).not.toBe(b.upload.upload_id);
  });

  it.each([
    ['an AGENT token', agent('COOP-1')],
    ['a MANAGER-only cooperative token', { ...coop('COOP-1'), duties: ['MANAGER'] } satisfies Caller],
    ['another cooperative', { ...coop('COOP-2'), duties: ['EXPORTER'] } satisfies Caller],
  ])('refuses %s (403), storing nothing', async (_what, caller) => {
    const { deps, uploads, presigned } = creator();
    const err = await domainErrorOf(createEvidenceUpload(deps, caller, BATCH_ID, { content_type: 'image/png', size_bytes: 10 }));
    expect([onTheWire(err).status, err.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect(uploads.rows.size + presigned.length).toBe(0);
  });

  it('answers 404 BATCH_NOT_FOUND for an unknown batch', async () => {
    const { deps } = creator(null);
    const err = await domainErrorOf(createEvidenceUpload(deps, QUALITY, BATCH_ID, { content_type: 'image/png', size_bytes: 10 }));
    expect(err.code).toBe('BATCH_NOT_FOUND');
  });

  it('limits uploads to 10 MiB', () => {
    expect(MAX_EVIDENCE_UPLOAD_BYTES).toBe(10_485_760);
  });
});

// ------------------------------------------------------------------------------ resolving an upload

describe('resolveUploadedPhoto', () => {
  it('returns the uploaded bytes as a typed photo and marks the upload attached to the stage', async () => {
    const { deps, uploads, reader } = resolver();
    const photo = await resolveUploadedPhoto(deps, BATCH_ID, UPLOAD_ID, 'GRADED');
    expect(photo).toEqual({ bytes: PNG, mime: 'image/png', extension: 'png' });
    expect(reader.reads).toEqual([{ key: `evidence-uploads/${BATCH_ID}/${UPLOAD_ID}`, maxBytes: PNG.byteLength }]);
    expect(uploads.rows.get(UPLOAD_ID)).toMatchObject({ consumed_stage: 'GRADED', consumed_at: '2026-11-22T10:05:00.000Z' });
  });

  it.each<[string, Parameters<typeof resolver>[0], string, Record<string, unknown>]>([
    ['no such upload', { upload: null }, 'MISSING', {}],
    ['nothing was PUT to its URL', { object: null }, 'MISSING', {}],
    [
      'an upload of another batch',
      { upload: anUpload({ batch_id: 'BATCH-2026-000099', object_key: `evidence-uploads/BATCH-2026-000099/${UPLOAD_ID}` }) },
      'OTHER_BATCH',
      {},
    ],
    ['an upload older than 24 hours', { now: new Date('2026-11-23T10:00:00.001Z') }, 'EXPIRED', { expired_at: '2026-11-23T10:00:00.000Z' }],
    [
      'an object larger than declared',
      { object: new Uint8Array([...PNG, 0]) },
      'SIZE_MISMATCH',
      { size_bytes: PNG.byteLength, uploaded_bytes: PNG.byteLength + 1 },
    ],
    ['an object smaller than declared', { object: PNG.slice(0, 20) }, 'SIZE_MISMATCH', { size_bytes: PNG.byteLength, uploaded_bytes: 20 }],
    [
      'JPEG bytes declared as PNG',
      { upload: anUpload({ size_bytes: JPEG.byteLength }), object: JPEG },
      'TYPE_MISMATCH',
      { content_type: 'image/png', detected: 'image/jpeg' },
    ],
    [
      'bytes that are no image',
      { upload: anUpload({ size_bytes: TEXT.byteLength }), object: TEXT },
      'TYPE_MISMATCH',
      { content_type: 'image/png', detected: null },
    ],
    [
      'an upload attached to another stage',
      { upload: anUpload({ consumed_stage: 'MILLED', consumed_at: T0.toISOString() }) },
      'ALREADY_USED',
      {},
    ],
  ])('refuses %s: 422 EVIDENCE_UPLOAD_INVALID naming the reason, the upload left unattached', async (_what, setup, reason, extra) => {
    const { deps, uploads } = resolver(setup);
    const before = uploads.rows.get(UPLOAD_ID);
    const err = await domainErrorOf(resolveUploadedPhoto(deps, BATCH_ID, UPLOAD_ID, 'GRADED'));
    expect([onTheWire(err).status, err.code]).toEqual([422, 'EVIDENCE_UPLOAD_INVALID']);
    expect(err.details).toEqual({ upload_id: UPLOAD_ID, reason, ...extra });
    expect(err.message).toContain(UPLOAD_ID);
    expect(uploads.rows.get(UPLOAD_ID)).toEqual(before);
  });

  it('serves one stage only: attached to GRADED, it is refused for MILLED, and a retry of GRADED may use it again', async () => {
    const { deps } = resolver();
    await resolveUploadedPhoto(deps, BATCH_ID, UPLOAD_ID, 'GRADED');
    const err = await domainErrorOf(resolveUploadedPhoto(deps, BATCH_ID, UPLOAD_ID, 'MILLED'));
    expect(err.details).toEqual({ upload_id: UPLOAD_ID, reason: 'ALREADY_USED' });
    await expect(resolveUploadedPhoto(deps, BATCH_ID, UPLOAD_ID, 'GRADED')).resolves.toMatchObject({ mime: 'image/png' });
  });

  it('loses the race to a concurrent stage change that attached it first (the conditional update refuses)', async () => {
    const { deps, uploads } = resolver();
    // Between this request's read and its conditional update, another stage change takes the upload.
    const { consume } = uploads;
    uploads.consume = async (id, _stage, at) => {
      await consume(id, 'MILLED', at);
      return consume(id, 'GRADED', at);
    };
    const err = await domainErrorOf(resolveUploadedPhoto(deps, BATCH_ID, UPLOAD_ID, 'GRADED'));
    expect(err.details).toEqual({ upload_id: UPLOAD_ID, reason: 'ALREADY_USED' });
    expect(uploads.rows.get(UPLOAD_ID)?.consumed_stage).toBe('MILLED');
  });
});

// ------------------------------------------------------------------------------ the stage update

describe('changeStageWithEvidence', () => {
  function stage() {
    const { deps: uploaded, uploads } = resolver();
    const batch = aBatch({ batch_id: BATCH_ID });
    const commits: Array<{ evidenceCid: string; files: unknown }> = [];
    const archived: string[] = [];
    const deps: CustodyDeps & { uploaded: UploadedPhotoDeps } = {
      batches: fakeBatchStore({ get: async (id) => (id === BATCH_ID ? batch : null) }),
      custody: fakeCustodyStore({
        commitStage: async (input) => {
          commits.push({ evidenceCid: input.evidenceCid, files: input.payload.evidence_files });
          const entry = {
            batch_id: BATCH_ID,
            sequence_number: 2,
            message_id: 'm2',
            type: 'STAGE_CHANGED',
            at: input.at,
            actor: input.actor,
            payload: input.payload,
            prev_hash: 'a'.repeat(64),
            hash: 'b'.repeat(64),
          };
          return {
            entry,
            ledgerTx: {
              ledger_tx_id: `${BATCH_ID}-2`,
              kind: 'TRACE_STAGE',
              batch_id: BATCH_ID,
              token_id: batch.token_id,
              stage: input.to,
              evidence_cid: input.evidenceCid,
              audit_hash: entry.hash,
              audit_sequence_number: 2,
              history_index: 1,
              status: 'CONFIRMED',
              tx_hash: `0x${'c'.repeat(64)}`,
              created_at: input.at,
            },
          };
        },
        getLedgerTx: async (id) => ({
          ledger_tx_id: id,
          kind: 'TRACE_STAGE',
          batch_id: BATCH_ID,
          token_id: batch.token_id,
          stage: 'GRADED',
          evidence_cid: 'x',
          audit_hash: 'b'.repeat(64),
          audit_sequence_number: 2,
          history_index: 1,
          status: 'CONFIRMED',
          tx_hash: `0x${'c'.repeat(64)}`,
          created_at: T0.toISOString(),
        }),
      }),
      evidence: {
        archive: {
          putCar: async (root) => {
            archived.push(root);
          },
        },
        pinQueue: fakeWorkQueue('pinQueue', { send: async () => undefined }),
      },
      ledgerQueue: fakeWorkQueue<LedgerWriteMessage>('ledgerQueue', { send: async () => undefined }),
      now: () => new Date('2026-11-22T10:05:00.000Z'),
      uploaded,
    };
    const input: StageUpdateInput & { evidence_upload_id?: string } = {
      new_stage: 'GRADED',
      cooperative_id: 'COOP-1',
      evidence: { grade: 'screen18', moisture_pct: 11 },
    };
    return { deps, input, commits, uploads, archived };
  }

  it('commits the stage with the uploaded photo in its evidence directory, as a base64 photo would be', async () => {
    const { deps, input, commits, uploads } = stage();
    const viaUpload = await changeStageWithEvidence(deps, QUALITY, BATCH_ID, { ...input, evidence_upload_id: UPLOAD_ID }, { waitMs: 0 });
    const viaBase64 = await changeStageWithEvidence(
      deps,
      QUALITY,
      BATCH_ID,
      { ...input, evidence_photo_base64: `data:image/png;base64,${Buffer.from(PNG).toString('base64')}` },
      { waitMs: 0 },
    );
    expect(commits.map((c) => c.files)).toEqual([
      ['evidence.json', 'photo.png'],
      ['evidence.json', 'photo.png'],
    ]);
    expect(viaUpload.change.evidence_ipfs_cid).toBe(viaBase64.change.evidence_ipfs_cid);
    expect(uploads.rows.get(UPLOAD_ID)?.consumed_stage).toBe('GRADED');
  });

  it('refuses both photo fields at once (400 VALIDATION_ERROR) before reading anything', async () => {
    const { deps, input, commits, uploads } = stage();
    const err = await domainErrorOf(
      changeStageWithEvidence(
        deps,
        QUALITY,
        BATCH_ID,
        { ...input, evidence_upload_id: UPLOAD_ID, evidence_photo_base64: 'data:image/png;base64,AAAA' },
        { waitMs: 0 },
      ),
    );
    expect([onTheWire(err).status, err.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(err.details).toEqual([{ path: 'evidence_upload_id', message: 'not allowed together with evidence_photo_base64' }]);
    expect(commits).toEqual([]);
    expect(uploads.rows.get(UPLOAD_ID)?.consumed_stage).toBeUndefined();
  });

  it('does not use the upload up when the stage change is refused before the photo (stage out of order)', async () => {
    const { deps, input, commits, uploads } = stage();
    const err = await domainErrorOf(
      changeStageWithEvidence(
        deps,
        { ...coop('COOP-1'), duties: ['WAREHOUSE_MANAGER'] },
        BATCH_ID,
        { ...input, new_stage: 'WAREHOUSED', evidence: { warehouse_id: 'W-1' }, evidence_upload_id: UPLOAD_ID },
        { waitMs: 0 },
      ),
    );
    expect(err.code).toBe('STAGE_OUT_OF_ORDER');
    expect(commits).toEqual([]);
    expect(uploads.rows.get(UPLOAD_ID)?.consumed_stage).toBeUndefined();
  });

  it('refuses an invalid upload with 422 and commits nothing', async () => {
    const { deps, input, commits } = stage();
    const err = await domainErrorOf(
      changeStageWithEvidence(deps, QUALITY, BATCH_ID, { ...input, evidence_upload_id: 'UPL-01M82A3B5K7Q9S1V3X5Z7B9D1G' }, { waitMs: 0 }),
    );
    expect(err).toMatchObject({ code: 'EVIDENCE_UPLOAD_INVALID', details: { reason: 'MISSING' } });
    expect(commits).toEqual([]);
  });
});
