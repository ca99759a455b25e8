import type { Hex } from 'viem';
import { ledgerTxItem, vaultWriteStoredOrder } from '../../shared/adapters/dynamodb/ledger-tx';
import { LedgerRefusedError } from '../../shared/domain/errors';
import { FORM_AHEAD_AFTER_MS } from '../../shared/domain/ledger-batching';
import type { Ledger, LedgerWriteMessage } from '../../shared/domain/ports/ledger';
import type { VaultLedger } from '../../shared/domain/ports/lending';
import type { LedgerTx, StoredVaultCall, VaultLedgerTx } from '../../shared/domain/records';
import type { VaultCall } from '../../shared/domain/vault-calls';
import { logger } from '../../shared/runtime/logger';
import { setMetricsSink } from '../../shared/runtime/metrics';
import { landQueuedMessages, type QueuedMessagesDeps } from '../../shared/use-cases/ledger-write-run';
import { landVaultWriteAhead } from '../../shared/use-cases/vault-write-ahead';
import { hashOf, world, write } from './support/ledger-pipeline-world';

/**
 * Vault writes ahead of the backlog (docs/ledger.md#vault-writes-ahead-of-the-backlog): the single
 * writer lands the oldest open vault write while it works through a backlog of member messages,
 * paced, in request order, only when the vault accepts it in simulation, never signing twice —
 * against the pipelined writer's in-memory world (./support/ledger-pipeline-world.ts), whose chain
 * mines vault transactions and batched ones in one nonce order.
 */

beforeAll(() => {
  setMetricsSink(() => undefined);
  logger.setLogLevel('SILENT');
});
afterAll(() => setMetricsSink(undefined));

const REPAY: StoredVaultCall = { kind: 'REPAY_LOANS', ref: 'PO-1', repayments: [{ loanRef: 'LOAN-1', amountUsdMicro: '1000' }] };
const RELEASE: StoredVaultCall = { kind: 'RELEASE_REMAINDER', ref: 'PO-1', cooperativeId: 'COOP-1', amountUsdMicro: '500' };
const LOCK: StoredVaultCall = { kind: 'LOCK_COLLATERAL', ref: 'LOAN-2', tokenId: '99', principalUsdMicro: '700' };

/** The single writer over the world: `n` stage records, vault writes signed on the world's chain, a clock the test moves. */
function vaultWorld(n: number) {
  const w = world(Array.from({ length: n }, (_, i) => write(i + 1, 'TRACE_STAGE')));
  const txs = w.txs as Map<string, LedgerTx>;
  const clock = { ms: Date.parse('2026-01-01T00:01:00Z') };
  const now = () => new Date(clock.ms);
  /** Vault writes in request order (the open vault writes' index). */
  const requested: string[] = [];
  /** Every vault signing: the write's ref and kind, its raw bytes. */
  const vaultSigned: Array<{ call: VaultCall; raw: Hex; unlessRefused: boolean }> = [];
  /** Refs the vault refuses in simulation (with the error). */
  const refusing = new Map<string, string>();
  const mined: string[] = [];
  const refused: string[] = [];
  const faults = { crashAfterKeep: false };
  let rawCounter = 0xf000;

  const vaultLedger: VaultLedger = {
    async vaultCallKept(call, keep, opts) {
      const refusal = refusing.get(call.ref);
      if (refusal && opts?.unlessRefused) throw new LedgerRefusedError('vaultCall', refusal);
      const { pending } = await w.deps.ledger.signerNonces();
      const raw = `0x${(++rawCounter).toString(16)}` as Hex;
      vaultSigned.push({ call, raw, unlessRefused: Boolean(opts?.unlessRefused) });
      w.signed.push({ kind: 'VAULT', tokenIds: [], nonce: pending, raw });
      await keep({ rawTx: raw, txHash: hashOf(raw), nonce: pending });
      if (faults.crashAfterKeep) {
        faults.crashAfterKeep = false;
        throw new Error('crashed between keeping and sending');
      }
      await w.deps.ledger.rebroadcast(raw, hashOf(raw));
      return { txHash: hashOf(raw) };
    },
  };
  const custody: QueuedMessagesDeps['custody'] = {
    getLedgerTx: async (id) => (txs.has(id) ? { ...txs.get(id)! } : null),
    keepSigned: async (id, signed, at) => {
      const t = txs.get(id)!;
      if (t.raw_tx) throw new Error(`ledger write ${id} signed twice`);
      Object.assign(t, { raw_tx: signed.rawTx, tx_hash: signed.txHash, nonce: signed.nonce, status: 'SENT', sent_at: at });
    },
    confirm: async (tx, txHash) => {
      Object.assign(txs.get(tx.ledger_tx_id)!, { status: 'CONFIRMED', tx_hash: txHash });
    },
    markFailed: async (id) => {
      txs.get(id)!.status = 'FAILED';
    },
  };
  const deps: QueuedMessagesDeps = {
    custody,
    ledger: {
      ...w.deps.ledger,
      batchedCallsDeployed: async () => true,
      mintBatchTokenKept: () => Promise.reject(new Error('not signed alone here')),
      recordStageKept: () => Promise.reject(new Error('not signed alone here')),
      anchorAuditRootKept: () => Promise.reject(new Error('not signed alone here')),
    } satisfies Ledger,
    batches: {} as QueuedMessagesDeps['batches'],
    payoutQueue: { send: async () => undefined },
    now,
    groups: w.deps.groups,
    receiptCheckQueue: {
      send: async (msg: LedgerWriteMessage, opts) => {
        const key = opts!.deduplicationId!.slice(msg.receipt_check!.length + 1);
        if (!w.checks.some((c) => c.group === msg.receipt_check && c.key === key)) w.checks.push({ group: msg.receipt_check!, key });
      },
    },
    groupPace: { lastLookMs: {} },
    vault: {
      ledger: vaultLedger,
      reader: { writeResult: async () => null },
      outcomes: {
        mined: async (tx) => {
          mined.push(tx.ledger_tx_id);
        },
        refused: async (tx) => {
          refused.push(tx.ledger_tx_id);
        },
      },
      ahead: {
        writes: {
          openVaultWrites: async (limit) =>
            requested
              .map((id) => txs.get(id) as VaultLedgerTx)
              .filter((t) => t.status === 'PENDING' || t.status === 'SENT')
              .slice(0, limit)
              .map((t) => ({ ...t })),
        },
        pace: {},
      },
    },
    parking: { recordFailedAttempt: async () => 1, park: async () => false },
  };
  const requestVaultWrite = (id: string, call: StoredVaultCall) => {
    txs.set(id, { ledger_tx_id: id, kind: 'VAULT', vault_call: call, status: 'PENDING', created_at: '2026-01-01T00:00:30Z' });
    requested.push(id);
  };
  const msgs = (ids: string[]): LedgerWriteMessage[] => ids.map((ledger_tx_id) => ({ ledger_tx_id }));
  const opts = (remainingMs = 60_000) => ({
    receiptWaitMs: 30_000,
    receiptCheckWaitMs: 4_000,
    maxAttempts: 8,
    remainingMs: () => remainingMs,
  });
  /** The next block: the clock one block on, the mempool mined. */
  const nextBlock = () => {
    clock.ms += FORM_AHEAD_AFTER_MS;
    w.mineBlock();
  };
  const look = (remainingMs = 60_000) => landVaultWriteAhead(deps, { remainingMs: () => remainingMs, reserveMs: 40_000 });
  return { w, txs, deps, clock, requestVaultWrite, vaultSigned, refusing, mined, refused, faults, msgs, opts, nextBlock, look };
}

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `b${from + i}-1`);

describe('a vault write queued behind a backlog of member messages', () => {
  it('lands (signed, mined, settled) while the member messages before it are worked through, not when its own message comes up', async () => {
    const v = vaultWorld(40);
    // The first member's delivery forms and sends the group of all 40 stage records; mined.
    expect(await landQueuedMessages(v.deps, v.msgs(['b1-1']), v.opts())).toEqual({ handled: 1 });
    v.nextBlock();
    v.requestVaultWrite('PO-1-repays-0', REPAY);
    // Its message is queued after the other 39 member messages: batches of 10.
    const queue = [...v.msgs(ids(2, 40)), ...v.msgs(['PO-1-repays-0'])];
    const batch1 = await landQueuedMessages(v.deps, queue.slice(0, 10), v.opts());
    expect(batch1).toEqual({ handled: 10 });
    expect(v.vaultSigned.map((s) => s.call.kind)).toEqual(['REPAY_LOANS']); // signed ahead of its message
    expect(v.txs.get('PO-1-repays-0')!.status).toBe('SENT');
    v.nextBlock();
    expect(await landQueuedMessages(v.deps, queue.slice(10, 20), v.opts())).toEqual({ handled: 10 });
    expect(v.mined).toEqual(['PO-1-repays-0']); // settled from its receipt: the loans repaid
    expect(v.txs.get('PO-1-repays-0')!.status).toBe('CONFIRMED');
    // Its own message, reached last, ends on the CONFIRMED write: nothing signed nor told again.
    v.nextBlock();
    expect(await landQueuedMessages(v.deps, queue.slice(20), v.opts())).toEqual({ handled: queue.length - 20 });
    expect(v.vaultSigned).toHaveLength(1);
    expect(v.mined).toEqual(['PO-1-repays-0']);
  });

  it('vault writes go one at a time in request order: the next is signed only once the one before is mined and settled', async () => {
    const v = vaultWorld(0);
    v.requestVaultWrite('PO-1-repays-0', REPAY);
    v.requestVaultWrite('PO-1-release', RELEASE);
    expect(await v.look()).toEqual({ settled: [], sent: 'PO-1-repays-0' });
    // A block later, not mined yet (the chain's block came without it): broadcast again, the next one not signed.
    v.clock.ms += FORM_AHEAD_AFTER_MS;
    expect(await v.look()).toEqual({ settled: [], held: { id: 'PO-1-repays-0', reason: 'in flight' } });
    expect(v.vaultSigned.map((s) => s.call.kind)).toEqual(['REPAY_LOANS']);
    v.nextBlock();
    expect(await v.look()).toEqual({ settled: ['PO-1-repays-0'], sent: 'PO-1-release' });
    v.nextBlock();
    expect(await v.look()).toEqual({ settled: ['PO-1-release'] });
    expect(v.mined).toEqual(['PO-1-repays-0', 'PO-1-release']);
    expect(v.w.signed.filter((s) => s.kind === 'VAULT').map((s) => s.nonce)).toEqual([0, 1]);
  });

  it('is paced (one look per block per container) and kept inside the invocation’s time budget', async () => {
    const v = vaultWorld(0);
    v.requestVaultWrite('PO-1-repays-0', REPAY);
    expect(await v.look(45_000)).toEqual({ settled: [] }); // 40 s kept for the message after it + the margin: not enough
    expect(v.vaultSigned).toHaveLength(0);
    expect(await v.look()).toEqual({ settled: [], sent: 'PO-1-repays-0' });
    v.w.mineBlock(); // mined, but the clock has not moved a block
    expect(await v.look()).toEqual({ settled: [] });
    v.clock.ms += FORM_AHEAD_AFTER_MS;
    expect(await v.look()).toEqual({ settled: ['PO-1-repays-0'] });
  });
});

describe('a vault write the vault refuses on the current state', () => {
  it('is not landed ahead (nothing signed), nor is any vault write requested after it; its own message still sends it', async () => {
    const v = vaultWorld(0);
    v.requestVaultWrite('LOAN-2-lock', LOCK); // its token's mint still pending: openLoan reverts
    v.requestVaultWrite('PO-1-repays-0', REPAY);
    v.refusing.set('LOAN-2', 'ERC721NonexistentToken');
    expect(await v.look()).toEqual({ settled: [], held: { id: 'LOAN-2-lock', reason: 'ERC721NonexistentToken' } });
    expect(v.vaultSigned).toHaveLength(0);
    expect(v.txs.get('LOAN-2-lock')!.status).toBe('PENDING');
    expect(v.txs.get('PO-1-repays-0')!.status).toBe('PENDING');
    // Its own message: the refusal is sent as before (recorded on chain), once.
    v.w.chain.onWait = () => v.w.mineBlock();
    expect(await landQueuedMessages(v.deps, v.msgs(['LOAN-2-lock']), v.opts())).toEqual({ handled: 1 });
    expect(v.vaultSigned).toEqual([expect.objectContaining({ call: expect.objectContaining({ ref: 'LOAN-2' }), unlessRefused: false })]);
    // Then the repayment behind it may go ahead.
    v.clock.ms += FORM_AHEAD_AFTER_MS;
    expect(await v.look()).toEqual({ settled: [], sent: 'PO-1-repays-0' });
  });
});

describe('never signed twice', () => {
  it('a write landed ahead and still in flight when its own message comes up: the kept transaction re-sent, its receipt awaited', async () => {
    const v = vaultWorld(0);
    v.requestVaultWrite('PO-1-repays-0', REPAY);
    await v.look();
    const raw = v.vaultSigned[0]!.raw;
    v.w.chain.onWait = () => v.w.mineBlock();
    expect(await landQueuedMessages(v.deps, v.msgs(['PO-1-repays-0']), v.opts())).toEqual({ handled: 1 });
    expect(v.vaultSigned).toHaveLength(1);
    expect(v.w.chain.broadcasts.filter((b) => b === raw)).toHaveLength(2);
    expect(v.txs.get('PO-1-repays-0')!.status).toBe('CONFIRMED');
    expect(v.mined).toEqual(['PO-1-repays-0']);
  });

  it('a crash between keeping and sending: the next look broadcasts the kept transaction, never a new signing', async () => {
    const v = vaultWorld(0);
    v.requestVaultWrite('PO-1-repays-0', REPAY);
    v.faults.crashAfterKeep = true;
    expect(await v.look()).toEqual({ settled: [] }); // the failure is logged, not thrown
    const raw = v.vaultSigned[0]!.raw;
    expect(v.w.chain.broadcasts).toEqual([]);
    v.clock.ms += FORM_AHEAD_AFTER_MS;
    expect(await v.look()).toEqual({ settled: [], held: { id: 'PO-1-repays-0', reason: 'in flight' } });
    expect(v.w.chain.broadcasts).toEqual([raw]);
    v.nextBlock();
    expect(await v.look()).toEqual({ settled: ['PO-1-repays-0'] });
    expect(v.vaultSigned).toHaveLength(1);
  });

  it('a reverted transaction landed ahead is settled as refused, once', async () => {
    const v = vaultWorld(0);
    v.requestVaultWrite('PO-1-repays-0', REPAY);
    await v.look();
    const hash = hashOf(v.vaultSigned[0]!.raw);
    const waitForReceipt = v.deps.ledger.waitForReceipt;
    v.deps.ledger.waitForReceipt = async (h, ms) => {
      const r = await waitForReceipt(h, ms);
      return r && h === hash ? { ...r, status: 'reverted' } : r;
    };
    v.nextBlock();
    expect(await v.look()).toEqual({ settled: ['PO-1-repays-0'] });
    expect(v.refused).toEqual(['PO-1-repays-0']);
    expect(v.txs.get('PO-1-repays-0')!.status).toBe('FAILED');
  });
});

describe('the open vault writes’ index: request order', () => {
  it('writes of one request (one created_at, stored in the same millisecond) sort in the order they were stored', () => {
    const at = '2026-01-01T00:00:30.000Z';
    const key = (id: string) =>
      ledgerTxItem({ ledger_tx_id: id, kind: 'VAULT', vault_call: REPAY, status: 'PENDING', created_at: at }).GSI1SK as string;
    // A settlement stores its repayments, then its release ("…-release" sorts before "…-repays-…" by id).
    const ms = Date.parse('2026-01-01T00:00:31Z');
    const stored = [vaultWriteStoredOrder(ms), vaultWriteStoredOrder(ms), vaultWriteStoredOrder(ms - 5)];
    expect([...stored].sort()).toEqual(stored);
    const keys = ['PO-1-repays-0', 'PO-1-repays-1', 'PO-1-release'].map(key);
    expect([...keys].sort()).toEqual(keys);
    expect(keys[0]).toMatch(/^2026-01-01T00:00:30\.000Z#/);
  });

  it('only vault writes are in it (a batch’s mint or stage record is among the ungrouped writes of its kind instead)', () => {
    const item = ledgerTxItem(write(1, 'TRACE_STAGE'));
    expect(item.GSI1PK).toBe('UNGROUPED_LEDGER_TX#TRACE_STAGE');
    expect(ledgerTxItem({ ledger_tx_id: 'v', kind: 'VAULT', vault_call: REPAY, status: 'PENDING', created_at: 'x' }).GSI1PK).toBe(
      'OPEN_VAULT_TX',
    );
  });
});
