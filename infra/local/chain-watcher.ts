import { Webhook } from 'standardwebhooks';
import { createPublicClient, http, type Chain, type PublicClient, type Transport, type Hex } from 'viem';
import { STAGE_CODES, batchTokenAbi, lendingVaultAbi, traceLogAbi, type LedgerStageName } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { idOfVaultRef } from '../../shared/adapters/ledger/vault-ledger';

/**
 * The local chain-event provider: follows two kinds of logs on the hardhat node and posts each one,
 * signed (Standard Webhooks, docs/api/inbound-webhooks.md#chain-events), to `POST /api/webhooks/chain-events`:
 * - TraceLog's `StageRecorded` as `{type: "batch.stage_changed", data: {batch_id, token_id, stage,
 *   tx_hash, block_number, log_index}}`;
 * - with `lendingVaultAddress`, the LendingVault's `PurchaseOrderPaid(poRef, payer, amount)` (a
 *   buyer paid a purchase order into the vault, docs/api/settlement.md#settlement) as `{type: "purchase_order.paid",
 *   data: {purchase_order_id, payer, amount_usd_micro, tx_hash, block_number, log_index}}`, where
 *   `purchase_order_id` is the PO-… id of the bytes32 `poRef` and `amount_usd_micro` the uint256
 *   amount (micro-USDC) as a decimal string. The endpoint starts the purchase order's settlement.
 *
 * - Logs are read with `eth_getLogs` over block ranges, polling from the block after the last one
 *   read (no `eth_newFilter`: hardhat may drop installed filters). Each range is processed whole
 *   or not at all, so an RPC failure retries the range and never skips or duplicates an event.
 * - `webhook-id` is `evt_<txHash>_<logIndex>`: stable, so a re-delivery (a retry, or a restarted
 *   watcher reading from an earlier block) is a replay the endpoint recognises.
 * - Reading and delivering are apart: the chain is polled every `pollMs` whatever the deliveries
 *   are doing, and up to `deliveryWidth` deliveries (default 4) are in flight at once, as a
 *   provider's are. The events of one batch (stage events) and of one purchase order (payments) go
 *   one at a time, in chain order (block number, then log index); a buyer's payment goes before
 *   the stage events waiting, so a backlog of stage events (a thousand batches exported at once)
 *   never holds back the event that starts a settlement. A failed delivery (non-2xx, timeout or
 *   connection error) is tried again later (default 5 tries in all, 200 ms doubling) and later
 *   events go on; after the last try it is dropped and counted as `failed`. Each try is signed
 *   afresh (new `webhook-timestamp`), with the same id and body.
 *
 * This is the stand-in for a chain-event provider (LOCAL_CHAIN_EVENTS=webhook, the default). In
 * AWS the service reads the same logs itself: the scheduled `chain-event-watcher` function
 * (shared/use-cases/chain-watch.ts; locally with LOCAL_CHAIN_EVENTS=scheduled) keeps a block
 * cursor in the table, reads N confirmations deep and applies each event through the same use
 * cases, under the same ids, with no webhook. An operator may still point a provider at the
 * endpoint (docs/api/inbound-webhooks.md#chain-events): it needs exactly this body and a Standard Webhooks
 * signature with CHAIN_WEBHOOK_SECRET. The local hardhat node never reorganises (it mines a block every LEDGER_BLOCK_TIME_S, or each transaction at once).
 */

export interface ChainWatcherOptions {
  /** JSON-RPC endpoint of the chain (the hardhat node). */
  rpcUrl: string;
  chainId: number;
  traceLogAddress: Hex;
  batchTokenAddress: Hex;
  /** The LendingVault whose `PurchaseOrderPaid` logs are posted too; omitted: stage events only. */
  lendingVaultAddress?: Hex;
  /** Where to post, read at each delivery (the gateway's port may be known only later). */
  webhookUrl: () => string;
  /** Standard Webhooks signing secret, `whsec_<base64>`. */
  secret: string;
  /** Poll interval, ms (default 250). */
  pollMs?: number;
  /** Deliveries in flight at once (default 4); one at a time per batch and per purchase order. */
  deliveryWidth?: number;
  /** First block to read (default 0: the local chain starts fresh with the stack). */
  fromBlock?: bigint;
  /** Tries per event in all (default 5). */
  maxAttempts?: number;
  /** Wait before the second try, doubled for each further one, ms (default 200). */
  retryBaseMs?: number;
  log?: (line: string) => void;
}

interface ChainWatcherStats {
  /** StageRecorded and PurchaseOrderPaid events read from the chain and queued for delivery. */
  events: number;
  /** Events acknowledged with a 2xx. */
  delivered: number;
  /** Events given up after all tries (or dropped from a full retry queue). */
  failed: number;
}

export interface ChainWatcher {
  /** Stops polling, aborts a delivery in flight and resolves once the loop has ended. Idempotent. */
  stop(): Promise<void>;
  stats(): ChainWatcherStats;
}

/** The body posted for one event. */
interface StageChangedWebhook {
  type: 'batch.stage_changed';
  data: { batch_id: string; token_id: string; stage: LedgerStageName; tx_hash: Hex; block_number: number; log_index: number };
}

/** The body posted for a buyer's payment of a purchase order into the vault. */
interface PurchaseOrderPaidWebhook {
  type: 'purchase_order.paid';
  data: { purchase_order_id: string; payer: Hex; amount_usd_micro: string; tx_hash: Hex; block_number: number; log_index: number };
}

interface Pending {
  id: string;
  payload: string;
  /** Deliveries of one key go one at a time: `batch:<id>` for a stage event, `po:<id>` for a payment. */
  key: string;
  /** A buyer's payment: delivered before the stage events waiting. */
  payment: boolean;
  attempts: number;
  /** Not tried before this time (epoch ms): a retry's wait. */
  dueAt: number;
}

const MAX_BLOCK_RANGE = 1_000n;
const DELIVERY_TIMEOUT_MS = 10_000;
const MAX_RETRY_QUEUE = 1_000;

const STAGE_NAMES = new Map<number, LedgerStageName>(
  (Object.entries(STAGE_CODES) as Array<[LedgerStageName, number]>).map(([name, code]) => [code, name]),
);

/**
 * Starts following `StageRecorded` events (see the module comment). Returns at once; the first
 * poll runs immediately. Throws TypeError for a malformed secret or options.
 */
export function startChainWatcher(opts: ChainWatcherOptions): ChainWatcher {
  const signer = new Webhook(opts.secret); // throws on a malformed secret
  const pollMs = opts.pollMs ?? 250;
  const maxAttempts = opts.maxAttempts ?? 5;
  const retryBaseMs = opts.retryBaseMs ?? 200;
  const deliveryWidth = opts.deliveryWidth ?? 4;
  if (!(pollMs > 0) || !(maxAttempts >= 1) || !(retryBaseMs >= 0) || !(Number.isInteger(deliveryWidth) && deliveryWidth >= 1))
    throw new TypeError('chain watcher: pollMs, maxAttempts, retryBaseMs and deliveryWidth must be positive');
  const log = opts.log ?? (() => {});
  const client: PublicClient<Transport, Chain> = createPublicClient({
    chain: ledgerChain(opts.chainId, opts.rpcUrl),
    transport: http(opts.rpcUrl, { retryCount: 0, timeout: 10_000 }),
  });

  const counters: ChainWatcherStats = { events: 0, delivered: 0, failed: 0 };
  /** Events never tried, in chain order; events to try again, each after its wait (oldest first). */
  const fresh: Pending[] = [];
  const retries: Pending[] = [];
  /** The keys with a delivery in flight. */
  const busy = new Set<string>();
  const batchIds = new Map<bigint, string>();
  const stopper = new AbortController();
  let nextBlock = opts.fromBlock ?? 0n;
  let running = true;
  let lastPollError = '';

  /** Sleepers woken early by `wakeAll` (new events read, a delivery done, stop). */
  const sleepers = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      sleepers.add(done);
    });
  const wakeAll = () => {
    for (const wake of [...sleepers]) wake();
  };

  /** Reads the next block range; queues its events only when all of them could be mapped. */
  async function poll(): Promise<void> {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (head < nextBlock) return;
    const toBlock = head - nextBlock >= MAX_BLOCK_RANGE ? nextBlock + MAX_BLOCK_RANGE - 1n : head;
    const logs = await client.getContractEvents({
      address: opts.traceLogAddress,
      abi: traceLogAbi,
      eventName: 'StageRecorded',
      fromBlock: nextBlock,
      toBlock,
      strict: true,
    });
    const payments = opts.lendingVaultAddress
      ? await client.getContractEvents({
          address: opts.lendingVaultAddress,
          abi: lendingVaultAbi,
          eventName: 'PurchaseOrderPaid',
          fromBlock: nextBlock,
          toBlock,
          strict: true,
        })
      : [];
    const batch: Array<Pending & { block: bigint; logIndex: number }> = [];
    /** One webhook of a mined log, its id from the log's place (the same log always gets the same id). */
    const queue = (
      l: { transactionHash: string; logIndex: number; blockNumber: bigint },
      body: StageChangedWebhook | PurchaseOrderPaidWebhook,
    ) =>
      batch.push({
        id: `evt_${l.transactionHash}_${l.logIndex}`,
        payload: JSON.stringify(body),
        key: body.type === 'purchase_order.paid' ? `po:${body.data.purchase_order_id}` : `batch:${body.data.batch_id}`,
        payment: body.type === 'purchase_order.paid',
        attempts: 0,
        dueAt: 0,
        block: l.blockNumber,
        logIndex: l.logIndex,
      });
    for (const l of logs) {
      if (l.transactionHash === null || l.logIndex === null || l.blockNumber === null) continue; // pending: not in a mined range
      const { tokenId, stage } = l.args;
      const stageName = STAGE_NAMES.get(stage);
      const batchId = await batchIdOf(tokenId);
      if (!stageName || !batchId) {
        log(
          `chain-watcher skipped StageRecorded in ${l.transactionHash}#${l.logIndex}: ${!stageName ? `unknown stage code ${stage}` : `token ${tokenId} has no batch id`}`,
        );
        continue;
      }
      const body: StageChangedWebhook = {
        type: 'batch.stage_changed',
        data: {
          batch_id: batchId,
          token_id: tokenId.toString(),
          stage: stageName,
          tx_hash: l.transactionHash,
          block_number: Number(l.blockNumber),
          log_index: l.logIndex,
        },
      };
      queue(l, body);
    }
    for (const l of payments) {
      if (l.transactionHash === null || l.logIndex === null || l.blockNumber === null) continue;
      let purchaseOrderId: string;
      try {
        purchaseOrderId = idOfVaultRef(l.args.poRef);
      } catch {
        log(`chain-watcher skipped PurchaseOrderPaid in ${l.transactionHash}#${l.logIndex}: poRef ${l.args.poRef} is not text`);
        continue;
      }
      const body: PurchaseOrderPaidWebhook = {
        type: 'purchase_order.paid',
        data: {
          purchase_order_id: purchaseOrderId,
          payer: l.args.payer,
          amount_usd_micro: l.args.amount.toString(),
          tx_hash: l.transactionHash,
          block_number: Number(l.blockNumber),
          log_index: l.logIndex,
        },
      };
      queue(l, body);
    }
    batch.sort((a, b) => (a.block === b.block ? a.logIndex - b.logIndex : a.block < b.block ? -1 : 1));
    fresh.push(...batch.map(({ block: _b, logIndex: _l, ...p }) => p));
    counters.events += batch.length;
    nextBlock = toBlock + 1n;
  }

  async function batchIdOf(tokenId: bigint): Promise<string | null> {
    const known = batchIds.get(tokenId);
    if (known) return known;
    const id = await client.readContract({
      address: opts.batchTokenAddress,
      abi: batchTokenAbi,
      functionName: 'batchIdOf',
      args: [tokenId],
    });
    if (id === '') return null;
    batchIds.set(tokenId, id); // a token's batch id never changes
    return id;
  }

  /** One try of one event; true when acknowledged with a 2xx. */
  async function attempt(p: Pending): Promise<boolean> {
    p.attempts++;
    let problem: string;
    try {
      const now = new Date();
      const res = await fetch(opts.webhookUrl(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'coffee-trace-chain-watcher/1',
          'webhook-id': p.id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signer.sign(p.id, now, p.payload),
        },
        body: p.payload,
        signal: AbortSignal.any([stopper.signal, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)]),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) {
        counters.delivered++;
        log(`chain-watcher delivered ${p.id} → ${res.status} (try ${p.attempts})`);
        return true;
      }
      problem = `HTTP ${res.status}`;
    } catch (err) {
      if (!running) return false;
      const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
      problem = e?.name === 'TimeoutError' ? 'timeout' : (e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err));
    }
    if (p.attempts >= maxAttempts) {
      counters.failed++;
      log(`chain-watcher gave up ${p.id} after ${p.attempts} tries: ${problem}`);
    } else {
      p.dueAt = Date.now() + retryBaseMs * 2 ** (p.attempts - 1);
      if (retries.length >= MAX_RETRY_QUEUE) {
        const dropped = retries.shift()!;
        counters.failed++;
        log(`chain-watcher retry queue full: dropped ${dropped.id}`);
      }
      retries.push(p);
      log(`chain-watcher try ${p.attempts}/${maxAttempts} of ${p.id} failed: ${problem}`);
    }
    return false;
  }

  /**
   * The next event to deliver, taken off its queue: the first due payment whose order has no
   * delivery in flight, else the first due event whose key has none (new events come before the
   * retries, in chain order, so a key's events go in chain order). Undefined when none can go now.
   */
  function next(): Pending | undefined {
    const now = Date.now();
    const ready = (p: Pending) => p.dueAt <= now && !busy.has(p.key);
    for (const take of [(p: Pending) => p.payment && ready(p), ready])
      for (const queue of [fresh, retries]) {
        const i = queue.findIndex(take);
        if (i >= 0) return queue.splice(i, 1)[0];
      }
    return undefined;
  }

  /** One of `deliveryWidth` delivery loops: takes the next event that may go, delivers it, repeats. */
  async function deliverer(): Promise<void> {
    while (running) {
      const p = next();
      if (!p) {
        const nextRetry = [...fresh, ...retries].reduce((min, x) => Math.min(min, x.dueAt), Infinity);
        await sleep(Math.max(1, Math.min(pollMs, nextRetry - Date.now())));
        continue;
      }
      busy.add(p.key);
      try {
        await attempt(p);
      } finally {
        busy.delete(p.key);
      }
      wakeAll(); // another loop may be waiting for this key
    }
  }

  const poller = (async () => {
    while (running) {
      try {
        const before = counters.events;
        await poll();
        if (counters.events > before) wakeAll();
        if (lastPollError) log('chain-watcher polling recovered');
        lastPollError = '';
      } catch (err) {
        const message = (err as { shortMessage?: string; message?: string }).shortMessage ?? (err as Error).message ?? String(err);
        if (message !== lastPollError) log(`chain-watcher poll failed (will retry): ${message}`);
        lastPollError = message;
      }
      if (!running) break;
      await sleep(pollMs);
    }
  })();
  const loop = Promise.all([poller, ...Array.from({ length: deliveryWidth }, deliverer)]).then(() => undefined);

  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        running = false;
        stopper.abort();
        wakeAll();
        await loop;
      })();
      return stopping;
    },
    stats: () => ({ ...counters }),
  };
}

/** The scheduled worker that reads chain events itself (functions/chain-event-watcher). */
export const CHAIN_WATCHER_FN = 'chain-event-watcher';

/**
 * LOCAL_CHAIN_EVENTS: who reports chain events locally. `webhook` (default): the local watcher
 * (startChainWatcher, above) posts signed webhooks to /api/webhooks/chain-events, as a chain-event
 * provider would; `scheduled`: the scheduled chain-event-watcher function, as deployed in AWS. Throws
 * for any other value.
 */
export function localChainEventsMode(value: string | undefined): 'webhook' | 'scheduled' {
  const v = (value ?? '').trim() || 'webhook';
  if (v !== 'webhook' && v !== 'scheduled')
    throw new Error(`LOCAL_CHAIN_EVENTS must be webhook or scheduled, not ${JSON.stringify(value)}`);
  return v;
}
