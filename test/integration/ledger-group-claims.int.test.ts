import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { localTableClient } from '../../infra/local/dynamodb-local';
import { LedgerWriteGroupRepository } from '../../shared/adapters/dynamodb/ledger-groups';
import { ledgerTxItem } from '../../shared/adapters/dynamodb/ledger-tx';
import type { BatchLedgerTx } from '../../shared/domain/records';
import { localStack } from '../support/api';
import { useTableOfItsOwn } from '../support/table-of-its-own';

/**
 * The batched writer's claims on the local stack's DynamoDB Local (docs/ledger.md#the-batched-writer):
 * `claimAll` sends the claims 100 to a transaction; a write that is not claimable (claimed by
 * another group, signed, parked, settled, or gone) drops out of its chunk and the rest are claimed,
 * in the candidates' order; claiming again is idempotent; two groups claiming the same writes at
 * once never both hold one. The writes pending for a group are found through the sparse index of
 * ungrouped writes (GSI1): a claimed write leaves it, a released one comes back.
 */
describe('ledger write groups: claims in transactions', () => {
  const run = randomBytes(4).toString('hex');
  const id = (i: number) => `CLAIM-${run}-${i}`;
  let repo: LedgerWriteGroupRepository;

  // A table of its own in the stack's DynamoDB Local: the stack's writer must never see these writes.
  const table = useTableOfItsOwn('claims-test');

  beforeAll(() => {
    repo = new LedgerWriteGroupRepository();
  });

  /** The writes stored by `pending`, by number, as a caller of `release` holds them. */
  const stored = new Map<number, BatchLedgerTx>();

  /** Stores the pending write `i` (MINT unless `extra` says), with `extra` attributes, as the service stores one. */
  async function pending(i: number, extra: Record<string, unknown> = {}): Promise<void> {
    const tx = {
      ledger_tx_id: id(i),
      kind: 'MINT',
      status: 'PENDING',
      batch_id: `B-${i}`,
      created_at: `2026-11-27T10:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z`,
      ...extra,
    } as unknown as BatchLedgerTx;
    stored.set(i, tx);
    await localTableClient(localStack().endpoints.dynamodb!).send(new PutCommand({ TableName: table, Item: ledgerTxItem(tx) }));
  }

  it('claims 230 candidates in chunks, leaving out the 5 that are not claimable, in order; again, the same', async () => {
    const odd: Record<number, Record<string, unknown>> = {
      5: { group_id: 'ANOTHER-GROUP' },
      17: { raw_tx: '0x01' },
      40: { parked_at: '2026-11-27T00:00:00Z' },
      150: { status: 'CONFIRMED' },
    };
    for (let i = 0; i < 230; i++) if (i !== 220) await pending(i, odd[i]);
    const ids = Array.from({ length: 230 }, (_, i) => id(i));
    const left = new Set([5, 17, 40, 150, 220]);

    const claimed = await repo.claimAll('G-1', ids);
    expect(claimed.map((t, i) => (t ? t.ledger_tx_id : `none-${i}`))).toEqual(ids.map((x, i) => (left.has(i) ? `none-${i}` : x)));
    expect(claimed.filter(Boolean).every((t) => t!.group_id === 'G-1' && t!.batch_id.startsWith('B-'))).toBe(true);

    // Idempotent: the same group claiming again gets the same writes.
    const again = await repo.claimAll('G-1', ids);
    expect(again.map((t) => t?.ledger_tx_id ?? null)).toEqual(claimed.map((t) => t?.ledger_tx_id ?? null));
    // Another group gets none of them.
    expect((await repo.claimAll('G-2', ids.slice(0, 120))).filter(Boolean)).toEqual([]);
  });

  it('with the writes as the caller read them, the claimed ones are answered as those copies with the group set; the others null', async () => {
    for (let i = 3000; i < 3040; i++) await pending(i, i === 3007 ? { group_id: 'ANOTHER-GROUP' } : {});
    const ids = Array.from({ length: 40 }, (_, i) => id(3000 + i));
    const known = ids.map((_, i) => stored.get(3000 + i)!);
    const claimed = await repo.claimAll('G-K', ids, known);
    expect(claimed).toEqual(known.map((w, i) => (i === 7 ? null : { ...w, group_id: 'G-K' })));
    // As stored: the same as reading them back.
    const read = await repo.claimAll('G-K', ids);
    expect(read.map((t) => t && { ledger_tx_id: t.ledger_tx_id, group_id: t.group_id, batch_id: t.batch_id })).toEqual(
      claimed.map((t) => t && { ledger_tx_id: t.ledger_tx_id, group_id: t.group_id, batch_id: t.batch_id }),
    );
  });

  it('two groups claiming the same 150 writes at once: each write held by exactly one', async () => {
    for (let i = 1000; i < 1150; i++) await pending(i);
    const ids = Array.from({ length: 150 }, (_, i) => id(1000 + i));
    const [a, b] = await Promise.all([repo.claimAll('G-A', ids), repo.claimAll('G-B', [...ids].reverse())]);
    const byA = new Set(a.filter(Boolean).map((t) => t!.ledger_tx_id));
    const byB = new Set(b.filter(Boolean).map((t) => t!.ledger_tx_id));
    for (const x of ids) expect(Number(byA.has(x)) + Number(byB.has(x))).toBe(1);
  });

  it('pending writes of a kind come from the ungrouped index, oldest first: a claimed write leaves it, a released one comes back', async () => {
    const mine = (xs: Array<{ ledger_tx_id: string }>) => xs.map((t) => t.ledger_tx_id).filter((x) => x.startsWith(`CLAIM-${run}-2`));
    for (let i = 2000; i < 2006; i++) await pending(i, i === 2003 ? { kind: 'TRACE_STAGE' } : {});
    const ids = [2000, 2001, 2002, 2004, 2005].map(id);
    expect(mine(await repo.pendingOfKind('MINT', 10_000))).toEqual(ids);
    expect(mine(await repo.pendingOfKind('TRACE_STAGE', 10_000))).toEqual([id(2003)]);
    await repo.claimAll('G-3', [id(2001), id(2004)]);
    // A few candidates are claimed each with its own update: one claimed by another group is not claimable.
    expect((await repo.claimAll('G-4', [id(2001), id(2000)])).map((t) => t?.group_id ?? null)).toEqual([null, 'G-4']);
    expect(await repo.release('G-4', stored.get(2000)!)).toBe(true);
    expect(mine(await repo.pendingOfKind('MINT', 10_000))).toEqual([id(2000), id(2002), id(2005)]);
    expect(await repo.release('G-3', stored.get(2004)!)).toBe(true);
    expect(await repo.release('G-OTHER', stored.get(2001)!)).toBe(false);
    expect(mine(await repo.pendingOfKind('MINT', 10_000))).toEqual([id(2000), id(2002), id(2004), id(2005)]);
  });
});
