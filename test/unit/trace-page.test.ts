import QRCode from 'qrcode';
import { handler } from '../../functions/get-trace/handler';
import { buildAnchorTree } from '../../shared/domain/anchor-tree';
import type { BatchAnchor } from '../../shared/domain/anchoring';
import { buildAuditEntry, GENESIS_HASH } from '../../shared/domain/audit';
import type { ChainTrail } from '../../shared/domain/audit-verify';
import type { DdsRecord } from '../../shared/domain/dds';
import type { AuditEntry } from '../../shared/domain/records';
import { esc, plotSvg, QR_OPTIONS, qrSvg, tracePageHtml } from '../../shared/http/trace-page';
import { firstName, readPublicTrace, type TracePageDeps } from '../../shared/use-cases/trace-page';
import { apiEvent, lambdaContext } from './support/api-event';
import { aBatch, aCooperative, aFarmer, fakeBatchStore, fakeRegistryStore } from './support/fakes';

/**
 * The public trace page (docs/api/trace-page.md#public-trace-page): the view model shows what docs/api/trace-page.md#public-trace-page lists and nothing private
 * (no phone, no payout amount, no full name, no farmer id), the HTML escapes what it interpolates,
 * the plot is drawn from the farm's coordinates, and the verification is the audit endpoint's.
 */

const HOSTILE = '<script>alert("x")</script> & \'Bugisu\'';
const batch = aBatch({ stage: 'GRADED' });
const farmer = aFarmer();
const PAYOUT_UGX = 2_359_350;

/** A trail the ledger agrees with: the mint entry, then a payout entry carrying the amount and the phone. */
function trail(): { entries: AuditEntry[]; chain: ChainTrail } {
  const first = buildAuditEntry({
    batchId: batch.batch_id,
    seq: 1,
    type: 'BATCH_SUBMITTED',
    at: '2026-11-01T08:00:00.000Z',
    actor: 'agent-1',
    prevHash: GENESIS_HASH,
    payload: { token_id: batch.token_id, farmer_id: farmer.farmer_id, weight_kg: batch.weight_kg, grade: batch.grade },
  });
  const payout = buildAuditEntry({
    batchId: batch.batch_id,
    seq: 2,
    type: 'PAYOUT_PROCESSING',
    at: '2026-11-01T08:01:00.000Z',
    actor: 'system',
    prevHash: first.hash,
    payload: { payment_id: 'PAY-2026-000001-01', amount_ugx: PAYOUT_UGX, phone: farmer.phone },
  });
  return {
    entries: [first, payout],
    chain: {
      mints: [
        {
          tokenId: BigInt(batch.token_id),
          batchId: batch.batch_id,
          auditHash: `0x${first.hash}`,
          txHash: `0x${'ab'.repeat(32)}`,
          blockNumber: 5n,
        },
      ],
      stages: [],
    },
  };
}

/** The periodic anchor of the trail's head (#2, the payout entry), mined at block 9. */
function anchorOf(entries: AuditEntry[]): BatchAnchor {
  const head = entries[entries.length - 1]!;
  const p = buildAnchorTree([{ batch_id: batch.batch_id, sequence_number: head.sequence_number, hash: head.hash }]).proofs.get(
    batch.batch_id,
  )!;
  return {
    anchor_id: 'ANCHOR-1',
    head_sequence_number: head.sequence_number,
    head_hash: head.hash,
    root: p.root,
    proof: p.proof,
    tx_hash: `0x${'ef'.repeat(32)}`,
    block_number: 9,
  };
}

function deps(
  over: { unanchored?: boolean; chainDown?: boolean; dds?: Partial<DdsRecord> | null; coopName?: string; polygon?: boolean } = {},
): TracePageDeps {
  const t = trail();
  const polygon = {
    type: 'Polygon' as const,
    coordinates: [
      [
        [34.17, 1.08],
        [34.175, 1.08],
        [34.175, 1.084],
        [34.17, 1.084],
        [34.17, 1.08],
      ],
    ],
  };
  return {
    batches: fakeBatchStore({
      get: async (id) =>
        id === batch.batch_id
          ? {
              ...batch,
              stage_history: [
                ...batch.stage_history,
                {
                  stage: 'GRADED',
                  at: '2026-11-02T10:30:00.000Z',
                  actor: 'coop',
                  chain_tx_hash: `0x${'cd'.repeat(32)}`,
                  audit_log_sequence_number: '3',
                  evidence_ipfs_cid: 'bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y',
                },
              ],
            }
          : null,
      auditEntries: async () => t.entries,
    }),
    registry: fakeRegistryStore({
      getFarmer: async () =>
        over.polygon ? { ...farmer, farm: { ...farmer.farm, area_ha: 19.3, polygon, computed_area_ha: 24.6 } } : farmer,
      getCooperative: async () => aCooperative({ name: over.coopName ?? 'Bugisu Farmers' }),
    }),
    anchors: { ofBatch: async () => (over.unanchored ? [] : [anchorOf(t.entries)]) },
    anchorRoot: async (root) => (root === anchorOf(t.entries).root ? 9n : null),
    dds: {
      ofBatch: async () =>
        over.dds === undefined
          ? null
          : over.dds === null
            ? null
            : ({ status: 'AVAILABLE', reference_number: '26UGABCDEF1234', ...over.dds } as DdsRecord),
    },
    chainTrail: async () => {
      if (over.chainDown) throw new Error('connect ECONNREFUSED');
      return t.chain;
    },
    fetchEvidence: async () => null,
  };
}

/** Every private string of the fixtures, as it could appear in any form. */
const PRIVATE = [
  farmer.phone!,
  farmer.phone!.slice(4),
  farmer.full_name,
  'Wamala',
  String(PAYOUT_UGX),
  '2,359,350',
  '2 359 350',
  aCooperative().manager.phone,
  aCooperative().manager.name,
  aCooperative().manager.email,
];

describe('readPublicTrace', () => {
  it('shows grade, weight, cooperative, first name and district, stages, the DDS reference once AVAILABLE, and the verification', async () => {
    const view = await readPublicTrace(deps({ dds: {} }), batch.batch_id);
    expect(view).toMatchObject({
      batch_id: batch.batch_id,
      grade: 'screen18',
      weight_kg: 240.75,
      stage: 'GRADED',
      cooperative: { name: 'Bugisu Farmers', district: 'Mbale' },
      farmer: { first_name: 'Joseph', district: 'Mbale' },
      dds_reference_number: '26UGABCDEF1234',
      verification: { verified: true, failures: [] },
    });
    expect(view.verification.checks_total).toBeGreaterThan(0);
    expect(view.stages.map((s) => s.stage)).toEqual(['DELIVERED', 'GRADED']);
    expect(view.plot.source).toBe('POINT_AND_AREA');
    expect(view.plot.geometry.coordinates[0]).toHaveLength(65);
  });

  it('holds no phone number, payout amount, farmer id or full name (JSON and HTML)', async () => {
    const view = await readPublicTrace(deps({ dds: {} }), batch.batch_id);
    const json = JSON.stringify(view);
    const html = tracePageHtml(view, 'https://trace.example.test');
    for (const s of PRIVATE) {
      expect(json).not.toContain(s);
      expect(html).not.toContain(s);
    }
    expect(json).not.toMatch(/"[a-z_]*(phone|payment|amount|farmer_id|full_name)[a-z_]*":/);
  });

  it("shows the numbers a purchase order's statement recorded on the batch (its `dds`), in the JSON and the HTML", async () => {
    const d = deps();
    const get = d.batches.get;
    const withDds: TracePageDeps = {
      ...d,
      batches: {
        ...d.batches,
        get: async (id: string) => {
          const b = await get(id);
          return b && { ...b, dds: { dds_id: 'DDS-PO-1', reference_number: '26DEPDGY8NTUH2', verification_number: 'K7W2Q9XZ' } };
        },
      },
    };
    const view = await readPublicTrace(withDds, batch.batch_id);
    expect([view.dds_reference_number, view.dds_verification_number]).toEqual(['26DEPDGY8NTUH2', 'K7W2Q9XZ']);
    expect(tracePageHtml(view, 'https://trace.example.test')).toContain('26DEPDGY8NTUH2 · verification K7W2Q9XZ');
  });

  it('presents a withdrawn statement as no longer valid: dds_status WITHDRAWN, its numbers struck through in the HTML', async () => {
    const d = deps();
    const get = d.batches.get;
    const numbers = { dds_id: 'DDS-PO-1', reference_number: '26DEPDGY8NTUH2', verification_number: 'K7W2Q9XZ' };
    const withDds = (dds: NonNullable<Awaited<ReturnType<typeof get>>>['dds']): TracePageDeps => ({
      ...d,
      batches: { ...d.batches, get: async (id: string) => (await get(id)) && { ...(await get(id))!, dds } },
    });
    const valid = await readPublicTrace(withDds(numbers), batch.batch_id);
    expect(valid.dds_status).toBe('AVAILABLE');
    expect(tracePageHtml(valid, 'https://trace.example.test')).not.toContain('withdrawn');
    const view = await readPublicTrace(
      withDds({ ...numbers, status: 'WITHDRAWN', withdrawn_at: '2026-11-25T10:00:00.000Z' }),
      batch.batch_id,
    );
    expect([view.dds_reference_number, view.dds_status]).toEqual(['26DEPDGY8NTUH2', 'WITHDRAWN']);
    expect(tracePageHtml(view, 'https://trace.example.test')).toContain('<strong>withdrawn</strong>: no longer valid · <s>26DEPDGY8NTUH2');
    expect((await readPublicTrace(deps(), batch.batch_id)).dds_status).toBeNull();
  });

  it('hides the DDS reference until the statement is AVAILABLE', async () => {
    expect((await readPublicTrace(deps({ dds: { status: 'SUBMITTED' } }), batch.batch_id)).dds_reference_number).toBeNull();
    expect((await readPublicTrace(deps(), batch.batch_id)).dds_reference_number).toBeNull();
  });

  it('counts the anchored entries, and says an entry awaits the next anchor rather than failing', async () => {
    const anchored = await readPublicTrace(deps(), batch.batch_id);
    expect(anchored.verification).toMatchObject({ verified: true, entries_total: 2, entries_anchored: 2, awaiting_anchor: 0 });
    expect(tracePageHtml(anchored, 'https://x.test')).toContain('2 of 2 audit entries anchored on the ledger');
    const pending = await readPublicTrace(deps({ unanchored: true }), batch.batch_id);
    expect(pending.verification).toMatchObject({ verified: false, entries_total: 2, entries_anchored: 1, awaiting_anchor: 1 });
    const html = tracePageHtml(pending, 'https://x.test');
    expect(html).toContain('1 recent entry awaits the next ledger anchor');
    expect(html).not.toContain('Not verified');
  });

  it('reports the verification as unavailable (not a 503) while the ledger cannot be read', async () => {
    const view = await readPublicTrace(deps({ chainDown: true }), batch.batch_id);
    expect(view.verification).toMatchObject({ verified: null, checks_total: 0 });
    // The same when only AuditAnchor cannot be read (the roots are read before the checks).
    const anchorDown = {
      ...deps(),
      anchorRoot: async () => {
        throw new Error('rpc timeout');
      },
    };
    expect((await readPublicTrace(anchorDown, batch.batch_id)).verification).toMatchObject({ verified: null });
    expect(tracePageHtml(view, 'https://x.test')).toContain('Verification unavailable');
  });

  it('names a rewritten entry as failed without quoting its payload', async () => {
    const d = deps();
    const [a, b] = trail().entries;
    d.batches.auditEntries = async () => [a!, { ...b!, payload: { ...b!.payload, amount_ugx: 1 } }];
    const view = await readPublicTrace(d, batch.batch_id);
    expect(view.verification.verified).toBe(false);
    expect(view.verification.failures).toContainEqual({ sequence_number: 2, check: 'hash_chain' });
    expect(JSON.stringify(view.verification)).not.toContain('amount');
  });

  it('draws a registered polygon as it is', async () => {
    const view = await readPublicTrace(deps({ polygon: true }), batch.batch_id);
    expect(view.plot).toMatchObject({ source: 'POLYGON', area_ha: 24.6 });
    expect(view.plot.geometry.coordinates[0]).toHaveLength(5);
  });

  it('unknown batch: BATCH_NOT_FOUND', async () => {
    await expect(readPublicTrace(deps(), 'BATCH-2026-999999')).rejects.toMatchObject({ code: 'BATCH_NOT_FOUND' });
  });

  it('first name: the first word', () => {
    expect(firstName('  Joseph  Wamala Kato ')).toBe('Joseph');
  });
});

describe('rendering', () => {
  it('escapes a hostile cooperative name everywhere it appears', async () => {
    const view = await readPublicTrace(deps({ coopName: HOSTILE }), batch.batch_id);
    const html = tracePageHtml(view, 'https://trace.example.test');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain(esc(HOSTILE));
    expect(esc(HOSTILE)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Bugisu&#39;');
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).not.toMatch(/<(script|link)\b/); // no scripts, no outside stylesheets
    expect(html).not.toMatch(/(src|href)="(?!https:\/\/trace\.example\.test\/)/); // every link and image is the service's own
    expect(html).toContain('href="https://trace.example.test/ipfs/bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y"');
    expect(html).toContain(`0x${'cd'.repeat(32)}`);
    expect(html).toContain('src="https://trace.example.test/trace/BATCH-2026-000001/qr.svg"');
  });

  it('projects the plot into the SVG box, north up', () => {
    const svg = plotSvg({
      type: 'Polygon',
      coordinates: [
        [
          [34.17, 1.08],
          [34.175, 1.08],
          [34.175, 1.084],
          [34.17, 1.084],
          [34.17, 1.08],
        ],
      ],
    });
    const d = /<path d="M([^"]+)Z"/.exec(svg)![1]!;
    const pts = d.split('L').map((p) => p.split(',').map(Number));
    for (const [x, y] of pts) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(320);
      expect(y).toBeGreaterThanOrEqual(0);
      expect(y).toBeLessThanOrEqual(240);
    }
    expect(pts[0]![1]).toBeGreaterThan(pts[2]![1]!); // the southern edge (lat 1.08) is below the northern one
    expect(pts[1]![0]).toBeGreaterThan(pts[0]![0]!); // east is to the right
    expect(svg).toMatch(/>\d+ m</); // a scale bar in metres
  });

  it("the QR code is qrcode's SVG of the URL", async () => {
    const url = 'https://trace.example.test/prod/trace/BATCH-2026-000001';
    expect(await qrSvg(url)).toBe(await QRCode.toString(url, QR_OPTIONS));
  });
});

describe('GET /trace/{id} handler', () => {
  const call = (resource: string, id: string, headers: Record<string, string> = {}) =>
    handler(
      apiEvent({
        method: 'GET',
        path: resource.replace('{id}', id),
        resource,
        caller: null,
        pathParameters: { id },
        headers: { host: 'api.example.test', 'x-forwarded-proto': 'https', ...headers },
      }),
      lambdaContext(),
    ) as Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

  it('a malformed id is 400 VALIDATION_ERROR in the envelope', async () => {
    const res = await call('/trace/{id}', 'not a batch');
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body).error.code).toBe('VALIDATION_ERROR');
  });
});
