import { ThrottlingException } from '@aws-sdk/client-dynamodb';
import { asStoreError } from '../../shared/adapters/dynamodb/table';
import { LedgerUnavailableError, StageConflictError, StoreUnavailableError } from '../../shared/domain/errors';
import type { Hex } from 'viem';
import type { LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import type { AuditEntry, Batch, LedgerTx } from '../../shared/domain/records';
import { toErrorResponse } from '../../shared/http/handler';
import { changeStage, type CustodyDeps, type StageUpdateInput } from '../../shared/use-cases/custody';
import { requeueStaleLedgerWrites, writeLedgerTx, type LedgerWriterDeps } from '../../shared/use-cases/ledger-writer';
import { coop } from './support/api-event';
import { aBatch, fakeBatchStore, fakeCustodyStore, fakeLedger, fakeEvidenceKeeping, fakeWorkQueue } from './support/fakes';
import { oneShotFaults } from './support/one-shot-faults';
import { wire } from './support/errors';

/**
 * Faults on the stage change path (commitStage → ledger queue send → single ledger writer: sign
 * and keep → broadcast → receipt → confirm): the process dies between two writes, the table is
 * throttled, the ledger node stops mid-write. After the retry / redelivery and the ledger-write
 * reconciliation (requeueStaleLedgerWrites), every stage change has exactly one audit entry, one
 * ledger write, one signed transaction (one nonce), and it ends CONFIRMED with its hash in the
 * batch's stage history; nothing is recorded twice on the chain and nothing is lost.
 */

type Step = 'commitStage' | 'send' | 'broadcast' | 'confirm';

function world() {
  let clock = new Date('2026-11-22T09:00:00.000Z');
  let batch: Batch = aBatch();
  const entries: AuditEntry[] = [];
  const txs = new Map<string, LedgerTx>();
  const queue: LedgerWriteMessage[] = [];
  const faults = oneShotFaults<Step>();
  const signed: Hex[] = [];
  const pool = new Set<Hex>(); // transactions the node has received
  const mined: Hex[] = [];
  let nodeUp = true;
  let confirms = 0;

  const { before, after } = faults;
  const broadcast = (hash: Hex) => {
    before('broadcast');
    if (!nodeUp) throw new LedgerUnavailableError('Ledger RPC failed during eth_sendRawTransaction: fetch failed');
    if (!pool.has(hash)) {
      pool.add(hash);
      mined.push(hash);
    }
  };

  const custody = fakeCustodyStore({
    commitStage: async (input) => {
      before('commitStage');
      if (batch.stage !== input.from) throw new StageConflictError(batch.stage ?? null);
      const seq = batch.audit_seq + 1;
      const entry: AuditEntry = {
        batch_id: batch.batch_id,
        sequence_number: seq,
        message_id: `m${seq}`,
        type: 'STAGE_CHANGED',
        at: input.at,
        actor: input.actor,
        payload: input.payload,
        prev_hash: batch.audit_head_hash,
        hash: String(seq).repeat(64).slice(0, 64),
      };
      const tx: LedgerTx = {
        ledger_tx_id: `${batch.batch_id}-${seq}`,
        kind: 'TRACE_STAGE',
        batch_id: batch.batch_id,
        token_id: batch.token_id,
        stage: input.to,
        evidence_cid: input.evidenceCid,
        audit_hash: entry.hash,
        audit_sequence_number: seq,
        history_index: batch.stage_history.length,
        status: 'PENDING',
        created_at: input.at,
      };
      entries.push(entry);
      txs.set(tx.ledger_tx_id, tx);
      batch = {
        ...batch,
        stage: input.to,
        audit_seq: seq,
        audit_head_hash: entry.hash,
        updated_at: input.at,
        stage_history: [
          ...batch.stage_history,
          {
            stage: input.to,
            at: input.at,
            actor: input.actor,
            chain_tx_hash: null,
            audit_log_sequence_number: String(seq),
            evidence_ipfs_cid: input.evidenceCid,
          },
        ],
      };
      after('commitStage');
      return { entry, ledgerTx: { ...tx } };
    },
    getLedgerTx: async (id) => (txs.has(id) ? { ...txs.get(id)! } : null),
    attachJob: async (tx, job) => {
      const cur = txs.get(tx.ledger_tx_id)!;
      if (cur.status === 'CONFIRMED') return false;
      txs.set(tx.ledger_tx_id, { ...cur, job_id: job.job_id });
      return true;
    },
    keepSigned: async (id, s) => {
      const cur = txs.get(id)!;
      if (cur.raw_tx) throw new Error(`ledger write ${id} was signed twice`);
      txs.set(id, { ...cur, raw_tx: s.rawTx, tx_hash: s.txHash, nonce: s.nonce, status: 'SENT' });
    },
    confirm: async (tx, txHash, blockNumber, at) => {
      before('confirm');
      confirms++;
      const cur = txs.get(tx.ledger_tx_id)!;
      txs.set(tx.ledger_tx_id, { ...cur, status: 'CONFIRMED', tx_hash: txHash, block_number: blockNumber, confirmed_at: at });
      batch = {
        ...batch,
        stage_history: batch.stage_history.map((h, i) =>
          cur.kind === 'TRACE_STAGE' && i === cur.history_index ? { ...h, chain_tx_hash: txHash } : h,
        ),
      };
      after('confirm');
    },
    openLedgerTxsBefore: async (cutoff) =>
      [...txs.values()].filter((t) => t.status !== 'CONFIRMED' && t.status !== 'FAILED' && t.created_at < cutoff),
  });

  const ledgerQueue = fakeWorkQueue<LedgerWriteMessage>('ledgerQueue', {
    send: async (msg) => {
      before('send');
      queue.push(msg);
    },
  });

  const deps: CustodyDeps = {
    now: () => clock,
    batches: fakeBatchStore({ get: async (id) => (id === batch.batch_id ? { ...batch } : null) }),
    custody,
    evidence: fakeEvidenceKeeping(),
    ledgerQueue,
  };

  const writer: LedgerWriterDeps = {
    now: () => clock,
    custody,
    batches: fakeBatchStore(), // trace-log writes never touch the batch store
    payoutQueue: fakeWorkQueue('payoutQueue'),
    ledger: fakeLedger({
      recordStageKept: async (_input, keep) => {
        const nonce = signed.length;
        const txHash = `0x${String(nonce + 1).padStart(64, 'a')}` as Hex;
        signed.push(txHash);
        await keep({ rawTx: `0xf8${nonce}` as Hex, txHash, nonce });
        broadcast(txHash);
        return { txHash };
      },
      rebroadcast: async (_raw, txHash) => broadcast(txHash),
      waitForReceipt: async (txHash) =>
        nodeUp && pool.has(txHash) ? { status: 'success', blockNumber: BigInt(100 + mined.indexOf(txHash)), txHash } : null,
    }),
  };

  return {
    deps,
    writer,
    entries,
    txs,
    queue,
    signed,
    mined,
    get batch() {
      return batch;
    },
    get confirms() {
      return confirms;
    },
    setNode(up: boolean) {
      nodeUp = up;
    },
    fail: faults.fail,
    tick(s: number) {
      clock = new Date(clock.getTime() + s * 1000);
    },
    /** The ledger-write reconciler (writes quiet for 60 s are queued again). */
    requeue() {
      this.tick(120);
      return requeueStaleLedgerWrites({ custody, ledgerQueue, now: () => clock }, 60);
    },
    /** The single writer drains the queue (a message whose write throws stays for redelivery). */
    async drain(): Promise<number> {
      let failures = 0;
      for (const msg of queue.splice(0)) {
        try {
          await writeLedgerTx(writer, msg.ledger_tx_id, 50);
        } catch {
          failures++;
          queue.push(msg);
        }
      }
      return failures;
    },
  };
}

type World = ReturnType<typeof world>;

const graded: StageUpdateInput = { cooperative_id: 'COOP-1', new_stage: 'GRADED', evidence: { grade: 'screen18', moisture_pct: 11.2 } };
const killed = () => new Error('process killed (Lambda timeout / crash)');

/** One GRADED change: one audit entry, one ledger write CONFIRMED, one signed and mined transaction, its hash in the history. */
function expectOneConfirmedChange(w: World): void {
  expect(w.batch.stage).toBe('GRADED');
  expect(w.entries).toHaveLength(1);
  expect(w.txs.size).toBe(1);
  const [tx] = [...w.txs.values()];
  expect(tx).toMatchObject({ status: 'CONFIRMED', stage: 'GRADED', audit_sequence_number: 2 });
  expect(w.signed).toEqual([tx!.tx_hash]);
  expect(w.mined).toEqual([tx!.tx_hash]);
  expect(w.batch.stage_history.map((h) => [h.stage, h.chain_tx_hash])).toEqual([
    ['DELIVERED', aBatch().chain_tx_hash],
    ['GRADED', tx!.tx_hash],
  ]);
}

describe('stage change: the process dies between two writes, then redelivery and reconciliation', () => {
  it('no fault: queued, written once, confirmed (baseline of the world)', async () => {
    const w = world();
    const res = await changeStage(w.deps, coop('COOP-1'), aBatch().batch_id, graded, { waitMs: 0 });
    expect(res.kind).toBe('accepted');
    expect(await w.drain()).toBe(0);
    expectOneConfirmedChange(w);
  });

  it('killed after commitStage, before the queue send: the reconciler queues the write; the client retry is 422, not a second change', async () => {
    const w = world();
    w.fail('commitStage', killed(), { after: true });
    await expect(changeStage(w.deps, coop('COOP-1'), aBatch().batch_id, graded, { waitMs: 0 })).rejects.toThrow('process killed');
    expect(w.queue).toHaveLength(0);
    expect(w.txs.size).toBe(1);

    await expect(wire(changeStage(w.deps, coop('COOP-1'), aBatch().batch_id, graded, { waitMs: 0 }))).rejects.toMatchObject({
      code: 'STAGE_OUT_OF_ORDER',
      status: 422,
    });
    expect(await w.requeue()).toBe(1);
    expect(await w.drain()).toBe(0);
    expectOneConfirmedChange(w);
    expect(await w.requeue()).toBe(0); // nothing left open
  });

  it('the queue send fails after the commit: answered (202 job), the write is found by the reconciler and lands once', async () => {
    const w = world();
    w.fail('send', new Error('SQS SendMessage: socket hang up'));
    const res = await changeStage(w.deps, coop('COOP-1'), aBatch().batch_id, graded, { waitMs: 0 });
    expect(res).toMatchObject({ kind: 'accepted', change: { new_stage: 'GRADED', chain_tx_hash: null } });
    expect(w.queue).toHaveLength(0);
    expect(await w.requeue()).toBe(1);
    await w.drain();
    expectOneConfirmedChange(w);
    expect([...w.txs.values()][0]!.job_id).toBe(res.kind === 'accepted' ? res.job.job_id : undefined);
  });

  it('commitStage throttled: 503 AUDIT_LOG_UNAVAILABLE with Retry-After, nothing written; the retry commits once', async () => {
    const w = world();
    w.fail(
      'commitStage',
      asStoreError(
        new ThrottlingException({ message: 'Rate of requests exceeds the allowed throughput.', $metadata: { httpStatusCode: 400 } }),
      ) as Error,
    );
    const err = await changeStage(w.deps, coop('COOP-1'), aBatch().batch_id, graded, { waitMs: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    const res = toErrorResponse(err, 'req-1');
    expect(res.statusCode).toBe(503);
    expect(res.headers).toMatchObject({ 'Retry-After': '5' });
    expect(w.entries).toHaveLength(0);
    expect(w.txs.size).toBe(0);

    await changeStage(w.deps, coop('COOP-1'), aBatch().batch_id, graded, { waitMs: 0 });
    await w.drain();
    expectOneConfirmedChange(w);
  });

  it('the ledger node stops after the transaction was signed and kept: redeliveries re-send the same transaction (one nonce), it lands once when the node is back', async () => {
    const w = world();
    await changeStage(w.deps, coop('COOP-1'), aBatch().batch_id, graded, { waitMs: 0 });
    w.setNode(false);
    expect(await w.drain()).toBe(1); // signed and kept, the broadcast failed
    expect(w.signed).toHaveLength(1);
    expect([...w.txs.values()][0]).toMatchObject({ status: 'SENT', tx_hash: w.signed[0] });
    expect(await w.drain()).toBe(1); // still down: rebroadcast fails, nothing signed again
    expect(w.signed).toHaveLength(1);

    w.setNode(true);
    expect(await w.drain()).toBe(0);
    expectOneConfirmedChange(w);
  });

  it('the writer dies after the transaction was mined, before confirm: the reconciler re-queues it, the same transaction is confirmed, never recorded twice', async () => {
    const w = world();
    await changeStage(w.deps, coop('COOP-1'), aBatch().batch_id, graded, { waitMs: 0 });
    w.fail('confirm', killed());
    expect(await w.drain()).toBe(1);
    w.queue.length = 0; // the message went to the DLQ
    expect(w.mined).toHaveLength(1);

    expect(await w.requeue()).toBe(1);
    expect(await w.drain()).toBe(0);
    expectOneConfirmedChange(w);
    expect(w.confirms).toBe(1);

    // A late duplicate delivery is a no-op.
    w.queue.push({ ledger_tx_id: [...w.txs.keys()][0]! });
    expect(await w.drain()).toBe(0);
    expect(w.confirms).toBe(1);
    expectOneConfirmedChange(w);
  });
});
