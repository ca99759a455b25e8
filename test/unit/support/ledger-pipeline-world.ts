import type { Hex } from 'viem';
import type { BatchedCall, LedgerWriteGroups } from '../../../shared/domain/ports/ledger';
import type { BatchLedgerTx, LedgerWriteGroup } from '../../../shared/domain/records';
import type { BatchWriterDeps } from '../../../shared/use-cases/ledger-batch-deps';

/**
 * The pipelined batched writer's test world (docs/ledger.md#the-pipelined-writer): an in-memory
 * table (the adapter's conditions: claims, one signing per group, the signer's next nonce only
 * moving up) and a chain that mines only when the test says so: a mempool, mined transactions by
 * hash, the signer's mined count and a block number.
 */

export function write(n: number, kind: 'MINT' | 'TRACE_STAGE' = 'MINT'): BatchLedgerTx {
  return {
    ledger_tx_id: `b${n}-1`,
    kind,
    batch_id: `b${n}`,
    token_id: String(n),
    stage: kind === 'MINT' ? 'DELIVERED' : 'GRADED',
    ...(kind === 'TRACE_STAGE' ? { evidence_cid: 'bafy' } : {}),
    audit_hash: 'cd'.repeat(32),
    audit_sequence_number: 1,
    status: 'PENDING',
    created_at: `2026-01-01T00:00:0${n}Z`,
  };
}

export const hashOf = (raw: string): Hex => `0x${raw.slice(2).padStart(64, '0')}` as Hex;

export function world(writes: BatchLedgerTx[]) {
  const txs = new Map(writes.map((w) => [w.ledger_tx_id, { ...w }]));
  const groups = new Map<string, LedgerWriteGroup>();
  const signer = { next: undefined as number | undefined, inFlight: new Set<string>() };
  /** Every signing: the call's token ids, its nonce, its raw bytes. */
  const signed: Array<{ kind: string; tokenIds: bigint[]; nonce: number; raw: Hex; gas?: bigint }> = [];
  /** The batched calls whose gas was estimated, by record count, in order. */
  const estimates: number[] = [];
  const chain = {
    block: 100,
    mined: 0,
    mempool: new Map<Hex, { raw: Hex; nonce: number; tokenIds: bigint[] }>(),
    receipts: new Map<Hex, { block: number; tokenIds: bigint[] }>(),
    /** Mines each transaction as it arrives (a local chain with LEDGER_BLOCK_TIME_S=0). */
    automine: false,
    broadcasts: [] as Hex[],
    replacements: [] as Array<{ old: Hex; replacement: Hex }>,
    /** Receipt waits (ms > 0) for a hash not mined yet, and what the chain does during one. */
    waits: [] as Hex[],
    onWait: undefined as ((hash: Hex) => Promise<void> | void) | undefined,
  };
  const written: Array<[string, Hex]> = [];
  const refused: string[] = [];
  const checks: Array<{ group: string; key: string }> = [];
  /** Table reads: single group reads, single write reads, batch reads (`writesWithGroups`, one call = one read of writes and groups). */
  const reads = { groups: 0, writes: 0, batches: 0 };
  let rawCounter = 0;

  const broadcast = (raw: Hex, nonce: number, tokenIds: bigint[]) => {
    chain.broadcasts.push(raw);
    if (!chain.receipts.has(hashOf(raw))) chain.mempool.set(hashOf(raw), { raw, nonce, tokenIds });
    if (chain.automine) mineBlock();
  };

  const store: LedgerWriteGroups = {
    pendingOfKind: async (kind, limit) =>
      [...txs.values()]
        .filter((t) => t.kind === kind && t.status === 'PENDING' && !t.raw_tx && !t.group_id && !t.parked_at)
        .map((t) => ({ ...t }))
        .slice(0, limit),
    create: async (g) => {
      if (groups.has(g.group_id)) throw new Error('exists');
      groups.set(g.group_id, structuredClone(g));
    },
    getGroup: async (id) => {
      reads.groups++;
      return structuredClone(groups.get(id) ?? null);
    },
    writesWithGroups: async (ids) => {
      reads.batches++;
      return ids.map((id) => {
        const t = txs.get(id);
        const g = t?.group_id ? groups.get(t.group_id) : undefined;
        return { tx: t ? { ...t } : null, group: g ? structuredClone(g) : null };
      });
    },
    claimAll: async (gid, ids) =>
      ids.map((id) => {
        const t = txs.get(id);
        if (!t) return null;
        if (t.group_id === gid || (t.status === 'PENDING' && !t.raw_tx && !t.group_id && !t.parked_at)) {
          t.group_id = gid;
          return { ...t };
        }
        return null;
      }),
    release: async (gid, w) => {
      const t = txs.get(w.ledger_tx_id);
      if (!t || t.group_id !== gid || t.status !== 'PENDING' || t.raw_tx) return false;
      delete t.group_id;
      return true;
    },
    setMembers: async (gid, members, splitOut) => {
      const g = groups.get(gid)!;
      if ((g.status !== 'SEALED' && g.status !== 'CLAIMING') || g.raw_tx) throw new Error('members of a signed group');
      Object.assign(g, { status: 'SEALED', members, split_out: [...(g.split_out ?? []), ...splitOut] });
    },
    keepSigned: async (gid, s, _at, sentBlock, members) => {
      const g = groups.get(gid)!;
      if ((g.status !== 'SEALED' && g.status !== 'CLAIMING') || g.raw_tx) throw new Error('signed twice');
      if (signer.next !== undefined && signer.next > s.nonce) throw new Error(`nonce ${s.nonce} is kept already`);
      Object.assign(g, { status: 'SENT', raw_tx: s.rawTx, tx_hash: s.txHash, nonce: s.nonce, sent_block: sentBlock, members });
      signer.next = s.nonce + 1;
      signer.inFlight.add(gid);
    },
    keepReplacement: async (gid, oldHash, s, sentBlock) => {
      const g = groups.get(gid)!;
      if (g.status !== 'SENT' || g.tx_hash !== oldHash) throw new Error('replaced twice');
      Object.assign(g, {
        raw_tx: s.rawTx,
        tx_hash: s.txHash,
        sent_block: sentBlock,
        replaced_hashes: [...(g.replaced_hashes ?? []), oldHash],
      });
    },
    nextNonce: async () => signer.next,
    inFlight: async () =>
      [...signer.inFlight].map((id) => structuredClone(groups.get(id)!)).sort((a, b) => (a.nonce ?? 0) - (b.nonce ?? 0)),
    settle: async (gid) => {
      Object.assign(groups.get(gid)!, { status: 'SETTLED' });
      signer.inFlight.delete(gid);
    },
  };

  const sign = async (
    call: BatchedCall,
    keep: (s: { rawTx: Hex; txHash: Hex; nonce: number }) => Promise<void>,
    nonce?: number,
    gas?: bigint,
  ) => {
    if (nonce === undefined) throw new Error('the pipelined writer signs with the nonce it chose');
    const raw = `0x${(++rawCounter).toString(16).padStart(4, '0')}` as Hex;
    const tokenIds = call.records.map((r) => r.tokenId);
    signed.push({ kind: call.kind, tokenIds, nonce, raw, ...(gas !== undefined ? { gas } : {}) });
    await keep({ rawTx: raw, txHash: hashOf(raw), nonce });
    broadcast(raw, nonce, tokenIds);
    return { txHash: hashOf(raw) };
  };
  const ledger: BatchWriterDeps['ledger'] = {
    mintBatchKept: (records, keep, nonce, gas) => sign({ kind: 'MINT', records }, keep, nonce, gas),
    recordStagesKept: (records, keep, nonce, gas) => sign({ kind: 'TRACE_STAGE', records }, keep, nonce, gas),
    estimateBatchGas: async (call) => {
      estimates.push(call.records.length);
      return 10_000n * BigInt(call.records.length);
    },
    batchCallError: async () => undefined,
    simulateBatch: async () => undefined,
    rebroadcast: async (raw, hash) => {
      expect(hashOf(raw)).toBe(hash);
      const original = signed.find((s) => s.raw === raw)!;
      broadcast(raw, original.nonce, original.tokenIds);
    },
    waitForReceipt: async (hash, ms) => {
      if (ms > 0 && !chain.receipts.has(hash)) {
        chain.waits.push(hash);
        await chain.onWait?.(hash); // what happens on the chain while the caller waits (a block mined…)
      }
      const r = chain.receipts.get(hash);
      return r ? { status: 'success', blockNumber: BigInt(r.block), txHash: hash } : null;
    },
    batchOutcomes: async (hash, _k, count) => {
      const ids = chain.receipts.get(hash)!.tokenIds;
      expect(ids).toHaveLength(count);
      return ids.map(() => ({ written: true as const }));
    },
    signerNonces: async () => {
      // Like a node: pending counts only the transactions that can run in order after the mined ones.
      const held = new Set([...chain.mempool.values()].map((t) => t.nonce));
      let pending = chain.mined;
      while (held.has(pending)) pending++;
      return { mined: chain.mined, pending };
    },
    blockNumber: async () => chain.block,
    isKnown: async (hash) => chain.mempool.has(hash) || chain.receipts.has(hash),
    replaceKept: async (raw, keep) => {
      const old = signed.find((s) => s.raw === raw)!;
      const replacement = `0x${(++rawCounter).toString(16).padStart(4, '0')}` as Hex;
      signed.push({ ...old, raw: replacement });
      await keep({ rawTx: replacement, txHash: hashOf(replacement), nonce: old.nonce });
      chain.replacements.push({ old: hashOf(raw), replacement: hashOf(replacement) });
      chain.mempool.delete(hashOf(raw)); // the node keeps the replacement only
      broadcast(replacement, old.nonce, old.tokenIds);
      return { txHash: hashOf(replacement) };
    },
  };
  const deps: BatchWriterDeps = {
    groups: store,
    ledger,
    getLedgerTx: async (id) => {
      reads.writes++;
      return txs.has(id) ? { ...txs.get(id)! } : null;
    },
    written: async (t, hash) => {
      written.push([t.ledger_tx_id, hash]);
      txs.get(t.ledger_tx_id)!.status = 'CONFIRMED';
    },
    refused: async (t) => {
      refused.push(t.ledger_tx_id);
      txs.get(t.ledger_tx_id)!.status = 'FAILED';
    },
    now: () => new Date('2026-01-01T00:01:00Z'),
    queueReceiptCheck: async (g, key) => {
      // A FIFO queue's deduplication: the same group and key queued twice is one message.
      if (!checks.some((c) => c.group === g.group_id && c.key === key)) checks.push({ group: g.group_id, key });
    },
  };
  /** Mines the mempool's transactions (lowest nonce first, only those with no gap before them) in one block. */
  const mineBlock = (hashes?: Hex[]) => {
    chain.block++;
    const ready = [...chain.mempool.entries()].filter(([h]) => !hashes || hashes.includes(h)).sort((a, b) => a[1].nonce - b[1].nonce);
    for (const [hash, tx] of ready) {
      if (tx.nonce !== chain.mined) break;
      chain.receipts.set(hash, { block: chain.block, tokenIds: tx.tokenIds });
      chain.mempool.delete(hash);
      for (const [other, o] of chain.mempool) if (o.nonce === tx.nonce) chain.mempool.delete(other); // its replacement is void
      chain.mined++;
    }
  };
  return { deps, txs, groups, signer, signed, estimates, chain, written, refused, checks, reads, mineBlock };
}
