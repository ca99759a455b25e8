import { verifyAnchorProof, type AuditHead, type BatchAnchor } from '../../shared/domain/anchoring';
import type { AuditAnchorStore } from '../../shared/domain/ports/audit';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import type { AnchorLedgerTx, AuditAnchorRecord, LedgerTx } from '../../shared/domain/records';
import { anchorWriteOutcomes, finishAnchor } from '../../shared/use-cases/anchor-settlement';
import { runAnchor, type AnchoringDeps } from '../../shared/use-cases/anchoring';
import { fakeWorkQueue } from './support/fakes';

/**
 * The audit-anchorer (docs/api/anchoring.md#anchoring-of-the-audit-log) against an in-memory store that keeps the port's promises:
 * one open anchor at a time, markers leave the pending set only when a mined anchor settles them.
 */

const hash = (batch: string, seq: number) =>
  `${seq.toString(16).padStart(2, '0')}${[...batch].map((c) => c.charCodeAt(0).toString(16)).join('')}`.padEnd(64, '0').slice(0, 64);

class MemoryAnchorStore implements AuditAnchorStore {
  heads_ = new Map<string, number>();
  markers = new Map<string, { batch_ids: string[]; pending: boolean }>();
  anchors = new Map<string, AuditAnchorRecord>();
  openId: string | null = null;
  batchAnchors: Array<BatchAnchor & { batch_id: string }> = [];
  writes: AnchorLedgerTx[] = [];

  /** An audit append: the batch's head advances and a marker names it. */
  append(batch: string): void {
    const seq = (this.heads_.get(batch) ?? 0) + 1;
    this.heads_.set(batch, seq);
    this.markers.set(`${batch}#${seq}`, { batch_ids: [batch], pending: true });
  }

  async pendingMarkers(limit: number) {
    return [...this.markers]
      .filter(([, m]) => m.pending)
      .slice(0, limit)
      .map(([marker_id, m]) => ({ marker_id, batch_ids: m.batch_ids }));
  }
  async heads(batchIds: string[]): Promise<AuditHead[]> {
    return batchIds
      .filter((b) => this.heads_.has(b))
      .map((b) => ({ batch_id: b, sequence_number: this.heads_.get(b)!, hash: hash(b, this.heads_.get(b)!) }));
  }
  async anchoredHeads(heads: AuditHead[]) {
    return new Set(
      heads
        .filter((h) => this.batchAnchors.some((a) => a.batch_id === h.batch_id && a.head_sequence_number === h.sequence_number))
        .map((h) => `${h.batch_id}#${h.sequence_number}`),
    );
  }
  async clearStaleMarkers(markerIds: string[]) {
    for (const id of markerIds) this.markers.get(id)!.pending = false;
  }
  async openAnchor() {
    return this.openId ? this.anchors.get(this.openId)! : null;
  }
  async open(anchor: AuditAnchorRecord, write: AnchorLedgerTx) {
    if (this.openId) return false;
    this.anchors.set(anchor.anchor_id, structuredClone(anchor));
    this.writes.push(write);
    this.openId = anchor.anchor_id;
    return true;
  }
  async finish(
    anchor: AuditAnchorRecord,
    batchAnchors: Array<BatchAnchor & { batch_id: string }>,
    mined: { tx_hash: string; block_number: number },
  ) {
    for (const a of batchAnchors)
      if (!this.batchAnchors.some((x) => x.batch_id === a.batch_id && x.head_sequence_number === a.head_sequence_number))
        this.batchAnchors.push(a);
    for (const id of anchor.marker_ids) this.markers.get(id)!.pending = false;
    const stored = this.anchors.get(anchor.anchor_id)!;
    if (stored.status === 'OPEN') Object.assign(stored, { status: 'ANCHORED', ...mined });
    if (this.openId === anchor.anchor_id) this.openId = null;
  }
  async abandon(anchorId: string, reason: string) {
    const stored = this.anchors.get(anchorId)!;
    if (stored.status === 'OPEN') Object.assign(stored, { status: 'FAILED', failure: reason });
    if (this.openId === anchorId) this.openId = null;
  }
  async get(anchorId: string) {
    return this.anchors.get(anchorId) ?? null;
  }
  async ofBatch(batchId: string) {
    return this.batchAnchors.filter((a) => a.batch_id === batchId);
  }
}

function setUp() {
  const store = new MemoryAnchorStore();
  const ledgerTxs = new Map<string, LedgerTx>();
  const queued: LedgerWriteMessage[] = [];
  let clock = Date.parse('2026-11-22T10:00:00.000Z');
  const deps: AnchoringDeps = {
    anchors: store,
    custody: { getLedgerTx: async (id) => ledgerTxs.get(id) ?? store.writes.find((w) => w.ledger_tx_id === id) ?? null },
    ledgerQueue: fakeWorkQueue<LedgerWriteMessage>('ledgerQueue', { send: async (m) => void queued.push(m) }),
    now: () => {
      clock += 300_000;
      return new Date(clock);
    },
  };
  /** The single ledger writer landed (or refused) the anchor's transaction. */
  const land = (id: string, status: 'CONFIRMED' | 'FAILED', block = 100) => {
    const w = store.writes.find((x) => x.ledger_tx_id === id)!;
    ledgerTxs.set(id, {
      ...w,
      status,
      ...(status === 'CONFIRMED' ? { tx_hash: `0x${'aa'.repeat(32)}`, block_number: block } : { failure: 'reverted' }),
    });
  };
  return { store, deps, queued, land };
}

describe('runAnchor (the scheduled audit-anchorer)', () => {
  it('does nothing when no audit entry waits', async () => {
    const { deps, queued } = setUp();
    expect(await runAnchor(deps)).toEqual({ outcome: 'NOTHING_PENDING' });
    expect(queued).toEqual([]);
  });

  it('commits every written batch as ONE root with one ledger write, whatever the number of batches', async () => {
    const { store, deps, queued } = setUp();
    for (let i = 1; i <= 250; i++) for (let k = 0; k < 3; k++) store.append(`BATCH-2026-${String(i).padStart(6, '0')}`);
    const r = await runAnchor(deps);
    expect(r).toMatchObject({ outcome: 'OPENED', heads: 250, markers: 750 });
    expect(store.writes).toHaveLength(1);
    expect(store.writes[0]).toMatchObject({
      kind: 'ANCHOR',
      head_count: 250,
      status: 'PENDING',
      root: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(queued).toEqual([{ ledger_tx_id: store.writes[0]!.ledger_tx_id }]);
    // Every head is the batch's newest entry (3), so one anchor covers all three entries of each batch.
    expect(new Set(store.anchors.get(store.writes[0]!.anchor_id)!.heads.map((h) => h.sequence_number))).toEqual(new Set([3]));
  });

  it('waits while its anchor is unmined, then settles it: proofs per batch, markers cleared, later entries into the next anchor', async () => {
    const { store, deps, land } = setUp();
    store.append('BATCH-2026-000001');
    store.append('BATCH-2026-000002');
    const first = await runAnchor(deps);
    if (first.outcome !== 'OPENED') throw new Error('expected an anchor');
    store.append('BATCH-2026-000002'); // written while the anchor is in flight
    expect(await runAnchor(deps)).toEqual({ outcome: 'WAITING', anchor_id: first.anchor_id });
    expect(store.writes).toHaveLength(1);

    land(first.anchor_id, 'CONFIRMED', 321);
    const second = await runAnchor(deps);
    // The first is settled (repair path: the writer's callback did not run), the new entry opens the next one.
    expect(store.anchors.get(first.anchor_id)).toMatchObject({ status: 'ANCHORED', block_number: 321 });
    expect(second).toMatchObject({ outcome: 'OPENED', heads: 1, markers: 1 });
    const b1 = await store.ofBatch('BATCH-2026-000001');
    expect(b1).toEqual([
      expect.objectContaining({ head_sequence_number: 1, root: first.root, block_number: 321, anchor_id: first.anchor_id }),
    ]);
    for (const a of [...b1, ...(await store.ofBatch('BATCH-2026-000002'))]) {
      expect(verifyAnchorProof({ batch_id: a.batch_id, sequence_number: a.head_sequence_number, hash: a.head_hash }, a)).toBe(true);
    }
    expect((await store.ofBatch('BATCH-2026-000002')).map((a) => a.head_sequence_number)).toEqual([1]);
    expect((await store.pendingMarkers(10)).map((m) => m.marker_id)).toEqual(['BATCH-2026-000002#2']);
  });

  it('abandons a refused anchor and puts its entries into the next one', async () => {
    const { store, deps, land } = setUp();
    store.append('BATCH-2026-000007');
    const first = await runAnchor(deps);
    if (first.outcome !== 'OPENED') throw new Error('expected an anchor');
    land(first.anchor_id, 'FAILED');
    const next = await runAnchor(deps);
    expect(store.anchors.get(first.anchor_id)).toMatchObject({ status: 'FAILED', failure: 'reverted' });
    expect(next).toMatchObject({ outcome: 'OPENED', heads: 1, markers: 1 });
    expect(await store.ofBatch('BATCH-2026-000007')).toEqual([]);
  });

  it('the writer callback settles a mined anchor once (idempotent), and refuses heads altered since the anchor was built', async () => {
    const { store, deps } = setUp();
    store.append('BATCH-2026-000003');
    const opened = await runAnchor(deps);
    if (opened.outcome !== 'OPENED') throw new Error('expected an anchor');
    const outcomes = anchorWriteOutcomes(deps);
    const write = store.writes[0]!;
    await outcomes.mined(write, `0x${'bb'.repeat(32)}`, 55);
    await outcomes.mined(write, `0x${'bb'.repeat(32)}`, 55);
    expect(await store.ofBatch('BATCH-2026-000003')).toHaveLength(1);
    expect(store.openId).toBeNull();

    const stored = store.anchors.get(opened.anchor_id)!;
    const altered = { ...stored, heads: [{ ...stored.heads[0]!, hash: 'cd'.repeat(32) }] };
    await expect(finishAnchor(deps, altered, { tx_hash: `0x${'bb'.repeat(32)}`, block_number: 55 })).rejects.toThrow(
      /does not lead to the anchored root/,
    );
  });

  it('marker/head race: an entry appended between reading the markers and reading the heads is anchored once, and its marker is cleared against that head', async () => {
    const { store, deps } = setUp();
    store.append('BATCH-2026-000011');
    const readHeads = store.heads.bind(store);
    let raced = false;
    store.heads = async (ids) => {
      if (!raced) {
        raced = true;
        store.append('BATCH-2026-000011'); // committed after the markers were read, before the heads are
      }
      return readHeads(ids);
    };
    const first = await runAnchor(deps);
    expect(first).toMatchObject({ outcome: 'OPENED', heads: 1, markers: 1 });
    const write = store.writes[0]!;
    expect(store.anchors.get(write.anchor_id)!.heads.map((h) => h.sequence_number)).toEqual([2]);
    await anchorWriteOutcomes(deps).mined(write, `0x${'cc'.repeat(32)}`, 40);
    // The raced entry's marker was not among the anchor's markers: it is still pending, although head 2 is anchored.
    expect((await store.pendingMarkers(10)).map((m) => m.marker_id)).toEqual(['BATCH-2026-000011#2']);

    const second = await runAnchor(deps);
    expect(second).toEqual({ outcome: 'NOTHING_PENDING', stale_markers_cleared: 1 });
    expect(store.writes).toHaveLength(1); // the same head (and root) is never anchored again
    expect(await store.pendingMarkers(10)).toEqual([]);
    expect(await runAnchor(deps)).toEqual({ outcome: 'NOTHING_PENDING' });
  });

  it('a duplicate scheduled run overlapping the first opens no second anchor of the heads the first anchored', async () => {
    const { store, deps } = setUp();
    store.append('BATCH-2026-000012');
    store.append('BATCH-2026-000013');
    const readHeads = store.heads.bind(store);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    store.heads = async (ids) => {
      if (++calls === 1) await gate; // the duplicate delivery read the markers, then stalls
      return readHeads(ids);
    };
    const duplicate = runAnchor(deps);
    await new Promise((r) => setImmediate(r));
    const first = await runAnchor(deps);
    expect(first).toMatchObject({ outcome: 'OPENED', heads: 2, markers: 2 });
    await anchorWriteOutcomes(deps).mined(store.writes[0]!, `0x${'dd'.repeat(32)}`, 41);
    release();
    expect(await duplicate).toMatchObject({ outcome: 'NOTHING_PENDING' }); // its markers (already cleared by the mined anchor) are cleared again, idempotently
    expect(store.writes).toHaveLength(1);
    // Two runs at once while nothing is open: one opens, the other is refused by the store's condition.
    store.append('BATCH-2026-000012');
    calls = 1;
    const both = await Promise.all([runAnchor(deps), runAnchor(deps)]);
    expect(both.map((r) => r.outcome).sort()).toEqual(['BUSY', 'OPENED']);
    expect(store.writes).toHaveLength(2);
  });
});
