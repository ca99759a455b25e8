import { createHash } from 'node:crypto';
import { buildEvidencePackage, canonicalEvidenceBytes, EVIDENCE_FILE, type EvidencePackage } from '../../shared/domain/evidence-package';
import { fetchEvidenceFromGateway } from '../../shared/adapters/ipfs/gateway-fetch';
import { STAGE_CODES } from '../../shared/adapters/ledger/abi';
import { buildAuditEntry, GENESIS_HASH } from '../../shared/domain/audit';
import { buildAnchorTree } from '../../shared/domain/anchor-tree';
import type { BatchAnchor } from '../../shared/domain/anchoring';
import {
  verifyAuditTrail,
  type AnchorClaims,
  type ChainStage,
  type ChainTrail,
  type EvidenceFetcher,
} from '../../shared/domain/audit-verify';
import { tokenIdForBatch } from '../../shared/domain/ids';
import type { Hex } from 'viem';
import type { AuditEntry } from '../../shared/domain/records';

const BATCH = 'BATCH-2026-000001';
const TOKEN = tokenIdForBatch(2026, 1);
const txHash = (n: number): Hex => `0x${createHash('sha256').update(`tx-${n}`).digest('hex')}`;
const aud = (n: number) => `AUD-${BATCH}-${n}`;

const EVIDENCE = { grader_id: 'GRD-7', grade: 'screen18', moisture_pct: 11.5, defects_per_300g: 4, graded_at: '2026-03-02T09:00:00.000Z' };
const PHOTO = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 0xff, 0xd9]);

interface Trail {
  entries: AuditEntry[];
  chain: ChainTrail;
  pkg: EvidencePackage;
  fetchEvidence: EvidenceFetcher;
  anchoring: AnchorClaims;
}

const ANCHOR_BLOCK = 42;

/** The periodic anchor of `entries`' head #`head` in a tree with another batch's head, its root "on chain" at ANCHOR_BLOCK. */
function periodicAnchor(entries: AuditEntry[], head: number): BatchAnchor {
  const h = entries[head - 1]!;
  const tree = buildAnchorTree([
    { batch_id: BATCH, sequence_number: head, hash: h.hash },
    { batch_id: 'BATCH-2026-000002', sequence_number: 3, hash: 'ab'.repeat(32) },
  ]);
  const p = tree.proofs.get(BATCH)!;
  return {
    anchor_id: 'ANCHOR-1',
    head_sequence_number: head,
    head_hash: h.hash,
    root: p.root,
    proof: p.proof,
    tx_hash: txHash(100),
    block_number: ANCHOR_BLOCK,
  };
}

/** Roots "anchored on chain": AuditAnchor.anchoredAtBlock as a map. */
function rootsOnChain(...anchors: BatchAnchor[]): AnchorClaims['rootBlock'] {
  const blocks = new Map(anchors.map((a) => [a.root, BigInt(a.block_number)]));
  return async (root) => blocks.get(root) ?? null;
}

/** A 4-entry trail (BATCH_SUBMITTED, PAYOUT_PROCESSING, STAGE_CHANGED GRADED, PAYMENT_CONFIRMED) and matching ledger/IPFS. */
async function buildTrail(): Promise<Trail> {
  const pkg = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PHOTO, extension: 'jpg' } });
  const specs: Array<{ type: string; actor: string; payload: Record<string, unknown> }> = [
    {
      type: 'BATCH_SUBMITTED',
      actor: 'agent-COOP-1',
      payload: { token_id: TOKEN.toString(), farmer_id: 'FRM-000123', weight_kg: 250, grade: 'screen18' },
    },
    { type: 'PAYOUT_PROCESSING', actor: 'system', payload: { payment_id: 'PAY-2026-000001-01', amount_ugx: 1_750_000 } },
    {
      type: 'STAGE_CHANGED',
      actor: 'agent-COOP-1',
      payload: { stage: 'GRADED', previous_stage: 'DELIVERED', evidence_ipfs_cid: pkg.cid, evidence: EVIDENCE, token_id: TOKEN.toString() },
    },
    {
      type: 'PAYMENT_CONFIRMED',
      actor: 'system',
      payload: { payment_id: 'PAY-2026-000001-01', provider_reference: 'PAY-2026-000001-01-A1' },
    },
  ];
  const entries: AuditEntry[] = [];
  let prevHash = GENESIS_HASH;
  specs.forEach((s, i) => {
    const e = buildAuditEntry({ batchId: BATCH, seq: i + 1, at: `2026-03-02T09:0${i}:00.000Z`, prevHash, ...s });
    entries.push(e);
    prevHash = e.hash;
  });
  const chain: ChainTrail = {
    mints: [{ tokenId: TOKEN, batchId: BATCH, auditHash: `0x${entries[0]!.hash}`, txHash: txHash(1), blockNumber: 10n }],
    stages: [
      {
        tokenId: TOKEN,
        stage: STAGE_CODES.GRADED,
        evidenceCid: pkg.cid,
        auditHash: `0x${entries[2]!.hash}`,
        txHash: txHash(2),
        logIndex: 0,
        blockNumber: 11n,
      },
    ],
  };
  const store = new Map([[pkg.cid, pkg.files]]);
  const fetchEvidence: EvidenceFetcher = async (cid) => {
    const files = store.get(cid);
    return files ? { files: files.map((f) => ({ path: f.path, bytes: f.bytes })) } : null;
  };
  const anchor = periodicAnchor(entries, 4);
  return { entries, chain, pkg, fetchEvidence, anchoring: { claimed: [anchor], rootBlock: rootsOnChain(anchor) } };
}

const failures = (r: Awaited<ReturnType<typeof verifyAuditTrail>>) => r.checks.filter((c) => !c.ok);

describe('verifyAuditTrail', () => {
  let t: Trail;
  beforeEach(async () => {
    t = await buildTrail();
  });
  const verify = (over: Partial<Omit<Trail, 'pkg'>> = {}) =>
    verifyAuditTrail({
      batchId: BATCH,
      entries: over.entries ?? t.entries,
      chain: over.chain ?? t.chain,
      fetchEvidence: 'fetchEvidence' in over ? over.fetchEvidence : t.fetchEvidence,
      anchoring: over.anchoring ?? t.anchoring,
    });

  it('verifies an untampered trail: chain, mint, stage event and evidence', async () => {
    const r = await verify();
    expect(failures(r)).toEqual([]);
    expect(r.verified).toBe(true);
    expect(r.first_failure).toBeUndefined();
    expect(r.checks.map((c) => `${c.message_id} ${c.check}`)).toEqual([
      `${aud(1)} hash_chain`,
      `${aud(1)} mint_event`,
      `${aud(1)} anchor`,
      `${aud(2)} hash_chain`,
      `${aud(2)} anchor`,
      `${aud(3)} hash_chain`,
      `${aud(3)} trace_log_event`,
      `${aud(3)} evidence_cid`,
      `${aud(3)} evidence_content`,
      `${aud(3)} anchor`,
      `${aud(4)} hash_chain`,
      `${aud(4)} anchor`,
    ]);
    // Mint and stage entries by their own transactions; the others by the periodic anchor of head #4.
    expect(r.anchors).toEqual([
      { tx_hash: txHash(1), block_number: 10 },
      expect.objectContaining({
        tx_hash: txHash(100),
        block_number: ANCHOR_BLOCK,
        head_sequence_number: 4,
        root: t.anchoring.claimed.length ? (t.anchoring.claimed[0] as BatchAnchor).root : '',
      }),
      { tx_hash: txHash(2), block_number: 11 },
      expect.objectContaining({ head_sequence_number: 4, head_hash: t.entries[3]!.hash }),
    ]);
    expect(r.checks.find((c) => c.check === 'mint_event')?.detail).toContain(txHash(1));
    expect(r.checks.find((c) => c.check === 'trace_log_event')?.detail).toContain('GRADED=1');
    expect(JSON.parse(JSON.stringify(r))).toEqual(r); // JSON-friendly
  });

  describe('anchors (docs/api/anchoring.md#anchoring-of-the-audit-log)', () => {
    /** Entries 1..n rebuilt with entry `k`'s payload replaced and every later hash recomputed (a database-level rewrite). */
    const rewrite = (k: number, payload: Record<string, unknown>): AuditEntry[] => {
      const out: AuditEntry[] = [];
      let prev = GENESIS_HASH;
      t.entries.forEach((e, i) => {
        const next = buildAuditEntry({
          batchId: BATCH,
          seq: e.sequence_number,
          at: e.at,
          actor: e.actor,
          type: e.type,
          prevHash: prev,
          payload: i + 1 === k ? payload : e.payload,
        });
        out.push(next);
        prev = next.hash;
      });
      return out;
    };

    it('names an entry written after the last anchor as not yet anchored (and verified is false)', async () => {
      const early = periodicAnchor(t.entries, 2);
      const r = await verify({ anchoring: { claimed: [early], rootBlock: rootsOnChain(early) } });
      expect(r.verified).toBe(false);
      expect(failures(r).map((c) => `${c.message_id} ${c.check}`)).toEqual([`${aud(4)} anchor`]);
      expect(failures(r)[0]!.detail).toMatch(/^not yet anchored/);
      expect(r.anchors.map((a) => a?.head_sequence_number ?? a?.tx_hash ?? null)).toEqual([txHash(1), 2, txHash(2), null]);
    });

    it('with no anchor at all, every payout entry is named; mint and stage entries stay anchored by their own transactions', async () => {
      const r = await verify({ anchoring: { claimed: [], rootBlock: async () => null } });
      expect(failures(r).map((c) => `${c.message_id} ${c.check}`)).toEqual([`${aud(2)} anchor`, `${aud(4)} anchor`]);
    });

    it('catches a payout entry rewritten after its anchor even when every hash was recomputed', async () => {
      // PAYMENT_CONFIRMED (entry 4) comes after the last stage: only the anchor commits to it.
      const forged = rewrite(4, { payment_id: 'PAY-2026-000001-01', provider_reference: 'FORGED-REFERENCE' });
      const r = await verify({ entries: forged });
      expect(r.verified).toBe(false);
      // Entries 2 and 4 are both covered only by head #4, whose committed hash the rewrite changed.
      expect(failures(r).map((c) => `${c.message_id} ${c.check}`)).toEqual([`${aud(2)} anchor`, `${aud(4)} anchor`]);
      expect(failures(r)[1]!.detail).toMatch(/anchor disagrees: .*the log was rewritten after it was anchored/);
      expect(r.anchors[3]).toBeNull();
    });

    it('catches an earlier payout entry rewritten (the stage event and the anchor both disagree)', async () => {
      const forged = rewrite(2, { payment_id: 'PAY-2026-000001-01', amount_ugx: 9_999_999 });
      const r = await verify({ entries: forged });
      expect(r.verified).toBe(false);
      expect(failures(r).map((c) => `${c.message_id} ${c.check}`)).toEqual(
        expect.arrayContaining([`${aud(2)} anchor`, `${aud(3)} trace_log_event`, `${aud(4)} anchor`]),
      );
    });

    it('refuses a root the ledger never anchored, one anchored at another block, a bad proof and a malformed claim', async () => {
      const a = periodicAnchor(t.entries, 4);
      const notOnChain = await verify({ anchoring: { claimed: [a], rootBlock: async () => null } });
      expect(failures(notOnChain)[0]!.detail).toContain('the root is not anchored on the ledger');
      const otherBlock = await verify({ anchoring: { claimed: [a], rootBlock: async () => 7n } });
      expect(failures(otherBlock)[0]!.detail).toContain('anchored the root at block 7, not at block 42');
      const badProof = { ...a, proof: [`0x${'00'.repeat(32)}` as Hex] };
      const r = await verify({ anchoring: { claimed: [badProof], rootBlock: rootsOnChain(a) } });
      expect(failures(r)[0]!.detail).toContain('does not lead to the root');
      const unreadable = await verify({
        anchoring: {
          claimed: [a],
          rootBlock: async () => {
            throw new Error('rpc down');
          },
        },
      });
      expect(failures(unreadable)[0]!.detail).toContain('could not be read: rpc down');
      const malformed = await verify({ anchoring: { claimed: [{ root: 'nope' }], rootBlock: rootsOnChain(a) } });
      expect(failures(malformed).map((c) => c.check)).toEqual(['anchor', 'anchor']);
      expect(failures(malformed)[0]!.detail).toContain('malformed');
    });

    it('uses the earliest anchor that checks when several cover an entry', async () => {
      const two = periodicAnchor(t.entries, 2);
      const four = periodicAnchor(t.entries, 4);
      const r = await verify({ anchoring: { claimed: [four, two], rootBlock: rootsOnChain(two, four) } });
      expect(r.verified).toBe(true);
      expect(r.anchors[1]?.head_sequence_number).toBe(2);
      expect(r.anchors[3]?.head_sequence_number).toBe(4);
    });
  });

  it('ignores StageRecorded events of other tokens', async () => {
    const other: ChainStage = {
      tokenId: TOKEN + 1n,
      stage: 2,
      evidenceCid: 'bafyother',
      auditHash: `0x${'ab'.repeat(32)}`,
      txHash: txHash(9),
      logIndex: 0,
    };
    const r = await verify({ chain: { ...t.chain, stages: [...t.chain.stages, other] } });
    expect(r.verified).toBe(true);
  });

  it('without fetchEvidence checks only the CID form and says the content was not fetched', async () => {
    const r = await verify({ fetchEvidence: undefined });
    expect(r.verified).toBe(true);
    expect(r.checks.filter((c) => c.check.startsWith('evidence'))).toEqual([
      expect.objectContaining({ check: 'evidence_cid', ok: true, detail: expect.stringContaining('not fetched') }),
    ]);
  });

  it('catches an altered payload of entry 3 and names entry 3', async () => {
    const entries = structuredClone(t.entries);
    entries[2]!.payload.previous_stage = 'MILLED';
    const r = await verify({ entries });
    expect(r.verified).toBe(false);
    expect(r.first_failure).toMatchObject({ sequence_number: 3, message_id: aud(3), check: 'hash_chain' });
    expect(r.first_failure?.detail).toMatch(/recomputed hash/);
    expect(failures(r).map((c) => c.message_id)).toEqual([aud(3)]);
  });

  it('catches an altered stored hash (entry 3 fails, and entry 4 no longer links)', async () => {
    const entries = structuredClone(t.entries);
    entries[2]!.hash = 'f'.repeat(64);
    const r = await verify({ entries });
    expect(r.verified).toBe(false);
    expect(r.first_failure).toMatchObject({ sequence_number: 3, message_id: aud(3), check: 'hash_chain' });
    const chainFailures = failures(r)
      .filter((c) => c.check === 'hash_chain')
      .map((c) => c.message_id);
    expect(chainFailures).toEqual([aud(3), aud(4)]);
    expect(failures(r).find((c) => c.message_id === aud(4))?.detail).toMatch(/does not link/);
  });

  it('catches reordered entries at the first out-of-place entry', async () => {
    const entries = [t.entries[0]!, t.entries[2]!, t.entries[1]!, t.entries[3]!];
    const r = await verify({ entries });
    expect(r.verified).toBe(false);
    expect(r.first_failure).toMatchObject({ sequence_number: 3, message_id: aud(3), check: 'hash_chain' });
    expect(r.first_failure?.detail).toMatch(/sequence_number 3 at position 2/);
  });

  it('catches a missing StageRecorded event on the stage-change entry', async () => {
    const r = await verify({ chain: { ...t.chain, stages: [] } });
    expect(r.verified).toBe(false);
    expect(r.first_failure).toMatchObject({ sequence_number: 3, message_id: aud(3), check: 'trace_log_event' });
    expect(r.first_failure?.detail).toMatch(/no StageRecorded event carries audit hash/);
    expect(failures(r).map((c) => c.check)).toEqual([expect.any(String), 'anchor']); // the event's failure, and so no anchor
  });

  it('catches an extra StageRecorded event of the token that no entry claims', async () => {
    const extra: ChainStage = {
      tokenId: TOKEN,
      stage: STAGE_CODES.MILLED,
      evidenceCid: t.pkg.cid,
      auditHash: `0x${'cd'.repeat(32)}`,
      txHash: txHash(3),
      logIndex: 1,
    };
    const r = await verify({ chain: { ...t.chain, stages: [...t.chain.stages, extra] } });
    expect(r.verified).toBe(false);
    expect(failures(r)).toEqual([expect.objectContaining({ sequence_number: 0, message_id: '-', check: 'trace_log_event' })]);
    expect(r.first_failure?.detail).toMatch(/MILLED=2.*extra on-chain stage/);
    expect(r.first_failure?.detail).toContain(txHash(3));
  });

  it('catches a second StageRecorded carrying the same audit hash', async () => {
    const dup: ChainStage = { ...t.chain.stages[0]!, txHash: txHash(4) };
    const r = await verify({ chain: { ...t.chain, stages: [...t.chain.stages, dup] } });
    expect(r.first_failure).toMatchObject({
      sequence_number: 3,
      check: 'trace_log_event',
      detail: expect.stringMatching(/2 StageRecorded events/),
    });
  });

  it('catches a StageRecorded that commits to an off-chain entry', async () => {
    const wrong: ChainStage = {
      tokenId: TOKEN,
      stage: 6,
      evidenceCid: t.pkg.cid,
      auditHash: `0x${t.entries[3]!.hash}`,
      txHash: txHash(5),
      logIndex: 0,
    };
    const r = await verify({ chain: { ...t.chain, stages: [...t.chain.stages, wrong] } });
    expect(r.first_failure).toMatchObject({
      sequence_number: 4,
      message_id: aud(4),
      check: 'trace_log_event',
      detail: expect.stringMatching(/PAYMENT_CONFIRMED entry/),
    });
  });

  it('catches a StageRecorded with a different evidence CID', async () => {
    const otherPkg = await buildEvidencePackage({ evidence: { ...EVIDENCE, grade: 'FAQ' } });
    const stages = [{ ...t.chain.stages[0]!, evidenceCid: otherPkg.cid }];
    const r = await verify({ chain: { ...t.chain, stages } });
    expect(r.verified).toBe(false);
    expect(r.first_failure).toMatchObject({ sequence_number: 3, message_id: aud(3), check: 'trace_log_event' });
    expect(r.first_failure?.detail).toContain(`evidence CID ${otherPkg.cid}`);
    expect(failures(r).map((c) => c.check)).toEqual([expect.any(String), 'anchor']); // the event's failure, and so no anchor
  });

  it('catches a StageRecorded with another stage code', async () => {
    const stages = [{ ...t.chain.stages[0]!, stage: STAGE_CODES.MILLED }];
    const r = await verify({ chain: { ...t.chain, stages } });
    expect(r.first_failure).toMatchObject({
      sequence_number: 3,
      check: 'trace_log_event',
      detail: expect.stringContaining('stage MILLED=2, entry has GRADED=1'),
    });
  });

  it('catches changed evidence.json bytes served for the CID (CID and content both fail on entry 3)', async () => {
    const fetchEvidence: EvidenceFetcher = async () => ({
      files: t.pkg.files.map((f) =>
        f.path === EVIDENCE_FILE ? { path: f.path, bytes: canonicalEvidenceBytes({ ...EVIDENCE, moisture_pct: 10.5 }) } : f,
      ),
    });
    const r = await verify({ fetchEvidence });
    expect(r.verified).toBe(false);
    expect(failures(r).map((c) => `${c.message_id} ${c.check}`)).toEqual([`${aud(3)} evidence_cid`, `${aud(3)} evidence_content`]);
    expect(r.first_failure?.detail).toMatch(/re-import to bafy/);
  });

  it('fails evidence that IPFS does not have, or whose fetch throws', async () => {
    let r = await verify({ fetchEvidence: async () => null });
    expect(r.first_failure).toMatchObject({ sequence_number: 3, check: 'evidence_cid', detail: expect.stringMatching(/not available/) });
    r = await verify({
      fetchEvidence: async () => {
        throw new Error('gateway down');
      },
    });
    expect(r.first_failure).toMatchObject({ sequence_number: 3, check: 'evidence_cid', detail: expect.stringMatching(/gateway down/) });
  });

  it('catches a mint event with a different audit hash and names entry 1', async () => {
    const mints = [{ ...t.chain.mints[0]!, auditHash: `0x${'12'.repeat(32)}` as Hex }];
    const r = await verify({ chain: { ...t.chain, mints } });
    expect(r.verified).toBe(false);
    expect(r.first_failure).toMatchObject({ sequence_number: 1, message_id: aud(1), check: 'mint_event' });
    expect(r.first_failure?.detail).toMatch(/audit hash 0x1212121212…, entry hash is 0x/);
    expect(failures(r).map((c) => c.check)).toEqual([expect.any(String), 'anchor']); // the event's failure, and so no anchor
  });

  it('catches a missing mint, a mint of another batch id and a second mint', async () => {
    let r = await verify({ chain: { ...t.chain, mints: [] } });
    expect(r.first_failure).toMatchObject({ sequence_number: 1, check: 'mint_event', detail: expect.stringMatching(/no BatchMinted/) });
    r = await verify({ chain: { ...t.chain, mints: [{ ...t.chain.mints[0]!, batchId: 'BATCH-2026-000002' }] } });
    expect(r.first_failure).toMatchObject({
      sequence_number: 1,
      check: 'mint_event',
      detail: expect.stringMatching(/batch id "BATCH-2026-000002"/),
    });
    r = await verify({ chain: { ...t.chain, mints: [...t.chain.mints, { ...t.chain.mints[0]!, txHash: txHash(7) }] } });
    expect(r.first_failure).toMatchObject({
      sequence_number: 1,
      check: 'mint_event',
      detail: expect.stringMatching(/2 BatchMinted events/),
    });
  });

  it('reports an empty trail and malformed entries as failures without throwing', async () => {
    let r = await verify({ entries: [] });
    expect(r).toMatchObject({ verified: false, first_failure: { sequence_number: 0, check: 'hash_chain' } });
    const entries = structuredClone(t.entries) as unknown as Array<Record<string, unknown>>;
    delete entries[1]!.payload;
    r = await verify({ entries: entries as unknown as AuditEntry[] });
    expect(r.first_failure).toMatchObject({
      sequence_number: 2,
      check: 'hash_chain',
      detail: expect.stringMatching(/malformed entry: payload/),
    });
  });
});

describe('fetchEvidenceFromGateway (in-memory fetch, no network)', () => {
  const BASE = 'http://gateway.test';
  let pkg: EvidencePackage;
  beforeAll(async () => {
    pkg = await buildEvidencePackage({ evidence: EVIDENCE, photo: { bytes: PHOTO, extension: 'jpg' } });
  });
  const response = (status: number, body: Uint8Array | string, type: string) =>
    new Response(typeof body === 'string' ? body : Buffer.from(body), { status, headers: { 'content-type': type } });

  it('reads the local gateway JSON listing, then each file', async () => {
    const seen: string[] = [];
    const fakeFetch = (async (url: string) => {
      seen.push(url);
      const path = url.slice(BASE.length);
      if (path === `/ipfs/${pkg.cid}`) {
        return response(
          200,
          JSON.stringify({ cid: pkg.cid, entries: pkg.files.map((f) => ({ name: f.path, cid: 'x', size: f.bytes.byteLength })) }),
          'application/json',
        );
      }
      const file = pkg.files.find((f) => path === `/ipfs/${pkg.cid}/${f.path}`);
      return file ? response(200, file.bytes, 'application/octet-stream') : response(404, '{}', 'application/json');
    }) as typeof fetch;
    const fetchEvidence = fetchEvidenceFromGateway(`${BASE}/`, { fetch: fakeFetch });
    const got = await fetchEvidence(pkg.cid);
    expect(got?.files.map((f) => [f.path, Buffer.from(f.bytes).toString('hex')])).toEqual(
      pkg.files.map((f) => [f.path, Buffer.from(f.bytes).toString('hex')]),
    );
    expect(seen[0]).toBe(`${BASE}/ipfs/${pkg.cid}`);
    const other = await buildEvidencePackage({ evidence: { x: 1 } });
    expect(await fetchEvidence(other.cid)).toBeNull();
  });

  it('falls back to raw blocks (trustless gateway) when the listing is not JSON, and rejects forged blocks', async () => {
    const blocks = new Map(pkg.blocks.map((b) => [b.cid, b.bytes]));
    const makeFetch = (forge: boolean) =>
      (async (url: string, init?: RequestInit) => {
        const u = new URL(url);
        const cid = u.pathname.replace('/ipfs/', '');
        if (u.searchParams.get('format') !== 'raw') return response(200, '<html>listing</html>', 'text/html');
        expect(new Headers(init?.headers).get('accept')).toBe('application/vnd.ipld.raw');
        const bytes = blocks.get(cid);
        if (!bytes) return response(404, 'not found', 'text/plain');
        return response(200, forge && cid !== pkg.cid ? new Uint8Array([...bytes, 0]) : bytes, 'application/vnd.ipld.raw');
      }) as typeof fetch;
    const got = await fetchEvidenceFromGateway(BASE, { fetch: makeFetch(false) })(pkg.cid);
    expect(got?.files.map((f) => f.path).sort()).toEqual([EVIDENCE_FILE, 'photo.jpg']);
    const trail = await buildTrail();
    const r = await verifyAuditTrail({
      batchId: BATCH,
      entries: trail.entries,
      chain: trail.chain,
      anchoring: trail.anchoring,
      fetchEvidence: fetchEvidenceFromGateway(BASE, { fetch: makeFetch(false) }),
    });
    expect(r.verified).toBe(true);
    await expect(fetchEvidenceFromGateway(BASE, { fetch: makeFetch(true) })(pkg.cid)).rejects.toThrow(/do not match its CID/);
    const other = await buildEvidencePackage({ evidence: { y: 2 } });
    expect(await fetchEvidenceFromGateway(BASE, { fetch: makeFetch(false) })(other.cid)).toBeNull();
  });
});
