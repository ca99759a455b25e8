import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { handler } from '../../functions/get-dds-evidence/handler';
import { buildAnchorTree } from '../../shared/domain/anchor-tree';
import type { BatchAnchor } from '../../shared/domain/anchoring';
import { buildAuditEntry, GENESIS_HASH } from '../../shared/domain/audit';
import type { ChainTrail } from '../../shared/domain/audit-verify';
import { buildDueDiligenceStatement, type DdsRecord } from '../../shared/domain/dds';
import type { AuditEntry, Batch } from '../../shared/domain/records';
import { evidencePackDocument, evidencePackView } from '../../shared/http/evidence-pack';
import { ddsView } from '../../shared/http/views';
import { readEvidencePack, type EvidencePackDeps } from '../../shared/use-cases/evidence-pack';
import { ADMIN, agent, apiEvent, coop, expectErrorEnvelope, lambdaContext, parse } from './support/api-event';
import { aBatch, aFarmer, fakeBatchStore, fakeDdsStore, fakeRegistryStore, memoryDdsDocumentStore } from './support/fakes';

/**
 * The EU evidence pack (GET /eudr/dds/{id}/evidence, issue 13): the DDS, the producers' forest
 * checks with dataset versions, the trail's evidence CIDs and ledger transactions, the audit
 * entries with their anchors — deterministic canonical JSON whose CID anyone recomputes from the
 * bytes; access as GET /eudr/dds/{id}; no phone number or payout amount.
 */

const farmer = aFarmer();
const PAYOUT_UGX = 2_359_350;
const GRADED_CID = 'bafybeicei76slt62wazi5yakuiuz3zfy77h4nzyq5rkjzxqchxebn6w66y';
const GRADED_TX = `0x${'cd'.repeat(32)}`;
const MINT_TX = `0x${'ab'.repeat(32)}`;

function trail(): { batch: Batch; entries: AuditEntry[]; chain: ChainTrail } {
  const base = aBatch({ stage: 'GRADED' });
  const first = buildAuditEntry({
    batchId: base.batch_id,
    seq: 1,
    type: 'BATCH_SUBMITTED',
    at: '2026-11-01T08:00:00.000Z',
    actor: 'agent-1',
    prevHash: GENESIS_HASH,
    payload: { token_id: base.token_id, farmer_id: farmer.farmer_id, weight_kg: base.weight_kg, grade: base.grade },
  });
  const payout = buildAuditEntry({
    batchId: base.batch_id,
    seq: 2,
    type: 'PAYOUT_PROCESSING',
    at: '2026-11-01T08:01:00.000Z',
    actor: 'system',
    prevHash: first.hash,
    payload: { payment_id: 'PAY-2026-000001-01', amount_ugx: PAYOUT_UGX, phone: farmer.phone },
  });
  const batch: Batch = {
    ...base,
    audit_seq: 2,
    audit_head_hash: payout.hash,
    stage_history: [
      ...base.stage_history,
      {
        stage: 'GRADED',
        at: '2026-11-02T10:30:00.000Z',
        actor: 'coop',
        chain_tx_hash: GRADED_TX,
        audit_log_sequence_number: '3',
        evidence_ipfs_cid: GRADED_CID,
      },
    ],
  };
  return {
    batch,
    entries: [first, payout],
    chain: {
      mints: [
        {
          tokenId: BigInt(base.token_id),
          batchId: base.batch_id,
          auditHash: `0x${first.hash}`,
          txHash: MINT_TX as `0x${string}`,
          blockNumber: 5n,
        },
      ],
      stages: [],
    },
  };
}

const ANCHOR_TX = `0x${'ef'.repeat(32)}`;

/** The periodic anchor of the trail's head (#2, the payout entry), mined at block 9. */
function anchorOf(batchId: string, entries: AuditEntry[]): BatchAnchor {
  const head = entries[entries.length - 1]!;
  const p = buildAnchorTree([{ batch_id: batchId, sequence_number: head.sequence_number, hash: head.hash }]).proofs.get(batchId)!;
  return {
    anchor_id: 'ANCHOR-1',
    head_sequence_number: head.sequence_number,
    head_hash: head.hash,
    root: p.root,
    proof: p.proof,
    tx_hash: ANCHOR_TX,
    block_number: 9,
  };
}

function ddsRecord(batch: Batch): DdsRecord {
  const statement = buildDueDiligenceStatement({
    ddsId: 'DDS-2026-000001',
    internalReferenceNumber: 'DDS-2026-000001',
    batch,
    producers: [{ farmer }],
    operator: {
      name: 'Hamburg Coffee Importers GmbH',
      eori: 'DE123456789012345',
      address: 'Am Sandtorkai 1, 20457 Hamburg',
      email: 'dds@hci.example',
      country: 'DE',
    },
    destinationCountry: 'DE',
    createdAt: '2026-11-22T10:00:00.000Z',
  });
  return {
    ...statement,
    status: 'AVAILABLE',
    cooperative_id: 'COOP-1',
    ipfs_cid: 'bafybeidds',
    ipfs_url: 'https://ipfs.example/ipfs/bafybeidds',
    xml: '<x/>',
    reference_number: '26DEQ7VKZ3HX2M',
    verification_number: 'K7QW2P9D',
    registry_uuid: 'uuid-1',
  };
}

function deps(over: { chainDown?: boolean; unanchored?: boolean } = {}): EvidencePackDeps {
  const t = trail();
  const dds = ddsRecord(t.batch);
  const anchor = anchorOf(t.batch.batch_id, t.entries);
  return {
    anchors: { ofBatch: async () => (over.unanchored ? [] : [anchor]) },
    anchorRoot: async (root) => (root === anchor.root ? 9n : null),
    dds: fakeDdsStore({ get: async (id) => (id === dds.dds_id ? dds : null) }),
    documentStore: memoryDdsDocumentStore(),
    batches: fakeBatchStore({ get: async (id) => (id === t.batch.batch_id ? t.batch : null), auditEntries: async () => t.entries }),
    registry: fakeRegistryStore({ getFarmer: async (id) => (id === farmer.farmer_id ? farmer : null) }),
    chainTrail: async () => {
      if (over.chainDown) throw new Error('connect ECONNREFUSED');
      return t.chain;
    },
    fetchEvidence: async () => null,
  };
}

describe('readEvidencePack', () => {
  it('holds the DDS view, the batch facts, the forest checks with dataset versions, the trail and the audit entries', async () => {
    const d = deps();
    const content = await readEvidencePack(d, coop('COOP-1'), 'DDS-2026-000001');
    const view = evidencePackView(content);
    const t = trail();

    expect(view.pack_version).toBe(1);
    expect(view.dds).toEqual(ddsView((await d.dds.get('DDS-2026-000001')) as DdsRecord));
    expect(view.batch).toEqual({
      batch_id: t.batch.batch_id,
      token_id: t.batch.token_id,
      cooperative_id: 'COOP-1',
      farmer_id: 'F-1',
      grade: 'screen18',
      weight_kg: 240.75,
      moisture_pct: 11.5,
      stage: 'GRADED',
      mint_tx_hash: MINT_TX,
      purchase_order_id: null,
    });
    expect(view.forest_checks).toEqual([
      {
        farmer_id: 'F-1',
        status: 'CLEAR',
        checked_at: '2026-01-02T00:00:00.000Z',
        dataset: { name: 'umd_glad_landsat_alerts', version: 'v20260101' },
      },
    ]);
    expect(view.trail).toEqual([
      { stage: 'DELIVERED', at: '2026-11-01T08:00:00.000Z', evidence_ipfs_cid: null, chain_tx_hash: MINT_TX, audit_log_sequence_number: 1 },
      {
        stage: 'GRADED',
        at: '2026-11-02T10:30:00.000Z',
        evidence_ipfs_cid: GRADED_CID,
        chain_tx_hash: GRADED_TX,
        audit_log_sequence_number: 3,
      },
    ]);
    expect(view.audit.head).toEqual({ sequence_number: 2, hash: t.entries[1]!.hash });
    expect(view.audit.entries.map(({ anchor: _a, ...e }) => e)).toEqual(
      t.entries.map((e) => ({ sequence_number: e.sequence_number, type: e.type, at: e.at, prev_hash: e.prev_hash, hash: e.hash })),
    );
    // The mint entry anchored by its own transaction, the payout entry by the periodic anchor (with its proof)
    const anchor = anchorOf(t.batch.batch_id, t.entries);
    expect(view.audit.entries.map((e) => e.anchor)).toEqual([
      expect.objectContaining({ tx_hash: MINT_TX, block_number: 5 }),
      expect.objectContaining({ tx_hash: ANCHOR_TX, block_number: 9, root: anchor.root, proof: anchor.proof, head_sequence_number: 2 }),
    ]);
  });

  it('an entry not yet anchored: anchor null (and the pack, so its CID, changes once it is)', async () => {
    const pending = await readEvidencePack(deps({ unanchored: true }), ADMIN, 'DDS-2026-000001');
    expect(pending.audit.entries.map((e) => e.anchor === null)).toEqual([false, true]);
    const anchored = await readEvidencePack(deps(), ADMIN, 'DDS-2026-000001');
    expect((await evidencePackDocument(pending)).cid).not.toBe((await evidencePackDocument(anchored)).cid);
  });

  it('holds no phone number or payout amount (audit payloads and payment fields are left out)', async () => {
    const { text } = await evidencePackDocument(await readEvidencePack(deps(), ADMIN, 'DDS-2026-000001'));
    for (const s of [farmer.phone!, farmer.phone!.slice(4), String(PAYOUT_UGX), 'PAY-2026-000001-01']) expect(text).not.toContain(s);
    expect(text).not.toMatch(/"[a-z_]*(phone|payment|amount|payload)[a-z_]*":/);
  });

  it('is deterministic: built twice from the same records, the same bytes and CID', async () => {
    const a = await evidencePackDocument(await readEvidencePack(deps(), ADMIN, 'DDS-2026-000001'));
    const b = await evidencePackDocument(await readEvidencePack(deps(), coop('COOP-1'), 'DDS-2026-000001'));
    expect(Buffer.from(b.bytes).equals(Buffer.from(a.bytes))).toBe(true);
    expect(b.cid).toBe(a.cid);
  });

  it('is RFC 8785 canonical JSON whose CID (CIDv1 raw, sha2-256 of the bytes) anyone recomputes', async () => {
    const { text, bytes, cid } = await evidencePackDocument(await readEvidencePack(deps(), ADMIN, 'DDS-2026-000001'));
    expect(Buffer.from(bytes).toString('utf8')).toBe(text);
    // Keys sorted at every level, no whitespace
    expect(text.startsWith('{"audit":{"entries":[{"anchor":')).toBe(true);
    expect(text).not.toMatch(/\n|": /);
    const recomputed = CID.create(1, 0x55, await sha256.digest(bytes));
    expect(recomputed.toString()).toBe(cid);
    expect(cid).toMatch(/^bafkrei[a-z2-7]{52}$/);
    // One byte more and the CID differs
    const tampered = new TextEncoder().encode(text.replace('"CLEAR"', '"FLAGS"'));
    expect(CID.create(1, 0x55, await sha256.digest(tampered)).toString()).not.toBe(cid);
  });

  it('changes when the trail does (a new stage)', async () => {
    const d = deps();
    const before = await evidencePackDocument(await readEvidencePack(d, ADMIN, 'DDS-2026-000001'));
    const b = (await d.batches.get('BATCH-2026-000001'))!;
    d.batches.get = async () => ({
      ...b,
      stage: 'MILLED',
      stage_history: [
        ...b.stage_history,
        {
          stage: 'MILLED',
          at: '2026-11-03T10:00:00.000Z',
          actor: 'coop',
          chain_tx_hash: null,
          audit_log_sequence_number: '4',
          evidence_ipfs_cid: 'bafybeimilled',
        },
      ],
    });
    expect((await evidencePackDocument(await readEvidencePack(d, ADMIN, 'DDS-2026-000001'))).cid).not.toBe(before.cid);
  });

  it('another cooperative: INSUFFICIENT_PERMISSIONS; an unknown id: DDS_NOT_FOUND (as GET /eudr/dds/{id})', async () => {
    await expect(readEvidencePack(deps(), coop('COOP-2'), 'DDS-2026-000001')).rejects.toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
    await expect(readEvidencePack(deps(), ADMIN, 'DDS-2026-999999')).rejects.toMatchObject({ code: 'DDS_NOT_FOUND' });
  });

  it('the ledger cannot be read: LEDGER_UNAVAILABLE (503), as GET /batch/{id}/audit', async () => {
    await expect(readEvidencePack(deps({ chainDown: true }), ADMIN, 'DDS-2026-000001')).rejects.toMatchObject({
      code: 'LEDGER_UNAVAILABLE',
    });
  });

  it('a producer missing from the registry: null forest check, not a failure', async () => {
    const d = deps();
    d.registry.getFarmer = async () => null;
    expect((await readEvidencePack(d, ADMIN, 'DDS-2026-000001')).forest_checks).toEqual([
      { farmer_id: 'F-1', status: null, checked_at: null, dataset: null },
    ]);
  });
});

describe('GET /eudr/dds/{id}/evidence handler', () => {
  beforeAll(() => {
    process.env.DOCS_BASE_URL = 'http://x/docs';
  });

  it.each([
    ['AGENT', agent('COOP-1')],
    ['MFI', { sub: 'mfi-1', role: 'MFI' as const, mfi_id: 'MFI-1', duties: [] }],
  ])('refuses a %s token: 403 INSUFFICIENT_PERMISSIONS', async (_role, caller) => {
    const res = parse(
      (await handler(
        apiEvent({
          method: 'GET',
          path: '/eudr/dds/DDS-2026-000001/evidence',
          resource: '/eudr/dds/{id}/evidence',
          pathParameters: { id: 'DDS-2026-000001' },
          caller,
        }),
        lambdaContext(),
      )) as never,
    );
    expectErrorEnvelope(res, 403, 'INSUFFICIENT_PERMISSIONS');
  });
});
