import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, http, isAddressEqual, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devBuyerKey, ledgerSignerKey, signDevToken } from '../../infra/local/dev-keys';
import { lendingVaultAbi, STAGE_CODES, testUsdcAbi, traceLogAbi } from '../../shared/adapters/ledger/abi';
import { ledgerChain } from '../../shared/adapters/ledger/evm-ledger';
import { vaultRef } from '../../shared/adapters/ledger/vault-ledger';
import { parseBlockTimeSeconds } from '../../infra/local/hardhat-node';
import { startStackProcess } from '../support/stack-process';
import { apiCaller, blockTimeLabel, createdOrder, retrying503, untilMinted } from './submission';

/**
 * Settlement benchmark on the local stack (`BENCH_ONLY=settlement npm run bench`, docs/api/settlement.md#settlement):
 * one purchase order of BENCH_SETTLEMENT_BATCHES batches (default 40; an order holds up to 2,000,
 * docs/api/batches-and-custody.md#purchase-orders-of-many-batches), a loan on
 * BENCH_SETTLEMENT_LOANS of them (default 10) after one MFI deposit, all carried to EXPORTED; then
 * the buyer pays the order's amount due (milled outturn × price) into the vault (approve + payPurchaseOrder, as `npm run
 * buyer-pay`) and the bench measures, from the moment the payment's transaction is mined
 * (eth_sendRawTransaction returns once the automining node has mined it; on a chain with block
 * time, when its receipt is read): (0) beforehand, how long the confirmation took (the request until
 * its 200 CONFIRMED answer; above 40 batches the 202 answer, then GET until CONFIRMED), then (a) the settlement
 * COMPLETED readable, (b) the last batch SETTLED readable (GET /batch/{id}, at most READ_WIDTH a
 * round), (c) the last batch's SETTLED record on the trace log and (d) the last loan repaid, both
 * read from the contracts' logs (StageRecorded with stage SETTLED for the order's tokens, LoanRepaid
 * for the order), in milliseconds and in blocks after the payment's block; and the ledger
 * transactions the settlement took, counted on chain from the payment's block to the head once the
 * signer's nonce is still: by target (vault, trace log, other) and the signer's nonce delta, with
 * their gas. The machine's load averages are reported beside the figures.
 */
const COOP = 'SETTLE-BENCH';
const say = (l: string) => process.stdout.write(`${l}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Concurrent requests while preparing the order (not measured). */
const PREP_WIDTH = 32;
/** Submissions and stage updates while preparing ask for their 202 at once (their writes land in the background, batched). */
const RESPOND_ASYNC = { prefer: 'respond-async' };
/** At most this many GET /batch reads per round while measuring, so the reading does not load the stack it measures. */
const READ_WIDTH = 16;
/** The machine's load averages (1, 5, 15 min), reported beside the figures. */
const loadLabel = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/**
 * Runs the settlement benchmark: `batches` (default BENCH_SETTLEMENT_BATCHES or 40) on one order,
 * `loans` of them (default BENCH_SETTLEMENT_LOANS or 10) with a loan, on a stack with `env` added
 * (e.g. LEDGER_BLOCK_TIME_S; otherwise the bench's environment decides, default 2 s a block).
 * Submissions answered 202 and stage updates answered 202 are accepted (minted / recorded when
 * their ledger write lands); the bench waits for every mint before the loans.
 */
export async function settlementBench(opts: { batches?: number; loans?: number; env?: Record<string, string> } = {}): Promise<void> {
  const BATCHES = opts.batches ?? Number(process.env.BENCH_SETTLEMENT_BATCHES ?? 40);
  const LOANS = opts.loans ?? Number(process.env.BENCH_SETTLEMENT_LOANS ?? 10);
  say(
    `\nSettlement: one purchase order of ${BATCHES} batches, ${LOANS} of them with a loan, ${blockTimeLabel(opts.env?.LEDGER_BLOCK_TIME_S)}`,
  );
  // A stack start takes over 90 s on a loaded machine: the integration suite's allowance. Real timings
  // (LOCAL_TIME_SCALE=1, as in AWS): scaled down, the reconciler would queue every write still open
  // after 3 s a second time, and the loans' and the settlement's vault writes would wait behind them.
  const stack = await startStackProcess(
    { LOCAL_RATE_LIMIT_RPS: '100000', LOCAL_RATE_LIMIT_BURST: '100000', LOCAL_TIME_SCALE: '1', ...opts.env },
    240_000,
  );
  const blockTimeS = parseBlockTimeSeconds(opts.env?.LEDGER_BLOCK_TIME_S ?? process.env.LEDGER_BLOCK_TIME_S);
  const started = Date.now();
  const progress = (l: string) => say(`  [prep ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${l}`);
  try {
    const { url, dataDir } = stack.info;
    const admin = await signDevToken({ role: 'ADMIN' }, 3600, dataDir);
    const coop = await signDevToken({ role: 'COOPERATIVE', cooperative_id: COOP }, 3600, dataDir);
    const mfi = await signDevToken({ role: 'MFI', mfi_id: 'MFI-BENCH' }, 3600, dataDir);
    // A 503 (an outage the service names under load; nothing changed) is retried after Retry-After, as a client would.
    const call = retrying503(apiCaller(url), () => {});
    const must = async (what: string, p: Promise<{ status: number; body: any }>, ...ok: number[]) => {
      const r = await p;
      if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const waitFor = async <T>(
      what: string,
      read: () => Promise<T>,
      done: (v: T) => boolean,
      timeoutMs: number,
      everyMs = 100,
    ): Promise<T> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = await read();
        if (done(v)) return v;
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(everyMs);
      }
    };
    /** Runs `fn` over `items`, `width` at a time. */
    const pool = async <T>(items: T[], width: number, fn: (item: T) => Promise<void>) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: width }, async () => {
          while (next < items.length) await fn(items[next++]!);
        }),
      );
    };

    await must(
      'cooperative',
      call('POST', '/cooperatives', admin, {
        cooperative_id: COOP,
        name: 'Settlement Bench Cooperative',
        district: 'Mbale',
        licence_status: 'ACTIVE',
        licence_expires_at: '2030-01-01',
        manager: { name: 'M', email: 'm@example.org', phone: '+256772000001' },
        prices_ugx_per_kg: { screen18: 9800, screen15: 9200, FAQ: 8000, PB: 9500 },
        export_premium_ugx_per_kg: 0,
      }),
      201,
    );
    await must(
      'farmer',
      call('POST', '/farmers/register', coop, {
        farmer_id: 'SB-F',
        full_name: 'Settlement Farmer',
        cooperative_id: COOP,
        phone: '+256772000404',
        district: 'Mbale',
        farm: { gps: { lat: 1.08, lng: 34.17 }, area_ha: 1 },
      }),
      201,
    );

    // Liquidity for the loans: one MFI deposit.
    const dep = await must('deposit', call('POST', '/mfi/deposits', mfi, { source_currency: 'USD', source_amount: 10_000 }), 202);
    await waitFor(
      `deposit ${dep.payment_id} COMPLETED`,
      async () => (await call('GET', `/payments/${dep.payment_id}`, mfi)).body.status,
      (s) => s === 'COMPLETED',
      60_000,
      200,
    );
    progress(`MFI deposit ${dep.payment_id} COMPLETED (USD 10,000 into the vault)`);

    const batches: string[] = [];
    await pool(
      Array.from({ length: BATCHES }, (_, i) => i),
      PREP_WIDTH,
      async () => {
        const r = await must(
          'submit',
          call(
            'POST',
            '/batch/submit',
            coop,
            {
              farmer_id: 'SB-F',
              cooperative_id: COOP,
              weight_kg: 150,
              grade: 'screen18',
              moisture_pct: 11,
              collection_point_gps: { lat: 1.08, lng: 34.17 },
              collector_agent_id: 'A',
            },
            RESPOND_ASYNC,
          ),
          201,
          202,
        );
        batches.push(r.data?.batch_id ?? r.batch_id);
      },
    );
    batches.sort();
    const tokenIds = new Set<bigint>();
    await pool([...batches], PREP_WIDTH, async (b) => {
      tokenIds.add(BigInt((await untilMinted(call, coop, b, 60_000 + BATCHES * 4_000 * Math.max(1, blockTimeS))).token_id));
    });
    progress(`${BATCHES} batches submitted and minted`);

    const loans: string[] = [];
    await pool(batches.slice(0, LOANS), 4, async (b) => {
      loans.push((await must(`loan on ${b}`, call('POST', '/loans', coop, { batch_id: b, amount_usdc: 300 }), 202)).loan_id);
    });
    await pool(loans, 4, async (l) => {
      await waitFor(
        `loan ${l} ACTIVE`,
        async () => (await call('GET', `/loans/${l}`, coop)).body.status,
        (s) => s === 'ACTIVE',
        60_000,
        200,
      );
    });
    progress(`${LOANS} loans of 300 USDC ACTIVE (tokens locked, disbursements paid)`);

    const steps: Array<[string, Record<string, unknown>]> = [
      ['GRADED', { grade: 'screen18', moisture_pct: 11.1 }],
      ['MILLED', { mill_id: 'MILL-1', outturn_kg: 120 }],
      ['WAREHOUSED', { warehouse_id: 'WH-1' }],
    ];
    for (const [stage, evidence] of steps) {
      await pool(batches, PREP_WIDTH, async (b) => {
        await must(
          `${stage} ${b}`,
          call('PATCH', `/batch/${b}/stage`, coop, { cooperative_id: COOP, new_stage: stage, evidence }, RESPOND_ASYNC),
          200,
          202,
        );
      });
      progress(`${BATCHES} batches ${stage}`);
    }
    const po = await createdOrder(
      call,
      coop,
      await call('POST', '/purchase-orders', coop, {
        batch_ids: batches,
        buyer: 'Hamburg Coffee Importers GmbH',
        price_usd_per_kg: 7,
        buyer_operator: {
          name: 'Hamburg Coffee Importers GmbH',
          eori: 'DE123456789012345',
          address: 'Am Sandtorkai 1, 20457 Hamburg',
          email: 'dds@hci.example',
          country: 'DE',
        },
      }),
    );
    const loadAtConfirm = loadLabel();
    const confirmStart = performance.now();
    // Above 40 batches the answer is 202 CONFIRMING at once and the order worker confirms it: GET shows when it is CONFIRMED.
    const answered = await must('confirm', call('POST', `/purchase-orders/${po.purchase_order_id}/confirm`, coop), 200, 202);
    const confirmAnswerMs = performance.now() - confirmStart;
    const confirmed =
      answered.status === 'CONFIRMED'
        ? answered
        : await waitFor(
            `${po.purchase_order_id} CONFIRMED`,
            async () => (await call('GET', `/purchase-orders/${po.purchase_order_id}`, coop)).body,
            (o: { status: string }) => o.status === 'CONFIRMED',
            600_000,
            250,
          );
    const confirmMs = performance.now() - confirmStart;
    if (confirmed.status !== 'CONFIRMED') throw new Error(`confirm answered ${confirmed.status}, expected CONFIRMED`);
    progress(`confirm answered ${answered.status} in ${confirmAnswerMs.toFixed(0)} ms`);
    progress(`${po.purchase_order_id} CONFIRMED in ${confirmMs.toFixed(0)} ms (${BATCHES} batches, POST /purchase-orders/{id}/confirm)`);
    await pool(batches, 4, async (b) => {
      await waitFor(
        `${b} COMMITTED`,
        async () => (await call('GET', `/batch/${b}`, coop)).body.stage,
        (s) => s === 'COMMITTED',
        30_000 + BATCHES * 4_000 * blockTimeS,
      );
    });
    progress(`${po.purchase_order_id}: ${BATCHES} batches COMMITTED (readable)`);
    await pool(batches, PREP_WIDTH, async (b) => {
      await must(
        `EXPORTED ${b}`,
        call(
          'PATCH',
          `/batch/${b}/stage`,
          coop,
          {
            cooperative_id: COOP,
            new_stage: 'EXPORTED',
            evidence: { export_permit: 'UCDA-EXP-1', destination_country: 'DE' },
          },
          RESPOND_ASYNC,
        ),
        200,
        202,
      );
    });
    progress(`${BATCHES} batches EXPORTED`);

    // The chain, the service's signer, and the buyer.
    const info = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')) as { endpoints: Record<string, Hex> };
    const rpcUrl = info.endpoints.ledger!;
    const chain = ledgerChain(31337, rpcUrl);
    const reader = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 });
    const signer = privateKeyToAccount(ledgerSignerKey(dataDir)).address;
    const nonceOf = () => reader.getTransactionCount({ address: signer, blockTag: 'pending' });
    const still = async (what: string) => {
      // the signer's nonce unchanged for 1.5 s
      let last = await nonceOf();
      let since = Date.now();
      const deadline = Date.now() + 60_000 + BATCHES * 500 * blockTimeS;
      while (Date.now() - since < 1_500) {
        if (Date.now() > deadline) throw new Error(`the ledger signer did not go still (${what})`);
        await sleep(100);
        const n = await nonceOf();
        if (n !== last) {
          last = n;
          since = Date.now();
        }
      }
      return last;
    };
    const nonceBefore = await still('before the payment');
    const buyer = privateKeyToAccount(devBuyerKey(dataDir));
    const wallet = createWalletClient({ account: buyer, chain, transport: http(rpcUrl) });
    // The amount due: Σ milled outturn × price (120 kg × 7 USD/kg per batch), paid in full so the order settles.
    const amount = BigInt(Math.round(Number(po.amount_due_usdc) * 1e6));
    if (amount !== BigInt(BATCHES) * 120n * 7_000_000n)
      throw new Error(`amount due ${po.amount_due_usdc} USDC, expected ${BATCHES} × 120 kg × 7 USD/kg`);
    const approve = await wallet.writeContract({
      address: info.endpoints.vault_asset!,
      abi: testUsdcAbi,
      functionName: 'approve',
      args: [info.endpoints.lending_vault!, amount],
    });
    await reader.waitForTransactionReceipt({ hash: approve });
    progress(`prepared; the buyer pays ${Number(amount) / 1e6} USDC for ${po.purchase_order_id}`);

    // Measure.
    const loadAtPayment = loadLabel();
    const payTx = await wallet.writeContract({
      address: info.endpoints.lending_vault!,
      abi: lendingVaultAbi,
      functionName: 'payPurchaseOrder',
      args: [vaultRef(po.purchase_order_id), amount],
    });
    // Automine: the transaction is mined when eth_sendRawTransaction returns; with block time, t0 is the receipt's arrival.
    let t0 = performance.now();
    const paid = await reader.waitForTransactionReceipt({ hash: payTx });
    if (blockTimeS > 0) t0 = performance.now();
    if (paid.status !== 'success') throw new Error(`payPurchaseOrder ${payTx} reverted`);
    let completedMs: number | undefined;
    const readableMs = new Map<string, number>();
    // On chain, from the payment's block: each batch's SETTLED record (TraceLog StageRecorded, stage
    // SETTLED) and each loan's repayment (LendingVault LoanRepaid for this order), read from the logs
    // rather than through one GET per batch, so the reading does not load the stack it measures.
    const settledOnChain = new Map<bigint, { block: bigint; ms: number }>();
    const repaidOnChain = new Map<Hex, { block: bigint; ms: number }>();
    const poRef = vaultRef(po.purchase_order_id);
    let scanned = paid.blockNumber - 1n;
    const settleTimeoutMs = 120_000 + (BATCHES + LOANS) * 4_000 * blockTimeS;
    const deadline = Date.now() + settleTimeoutMs;
    while (
      completedMs === undefined ||
      settledOnChain.size < batches.length ||
      repaidOnChain.size < LOANS ||
      readableMs.size < batches.length
    ) {
      if (Date.now() > deadline)
        throw new Error(
          `settlement not done ${settleTimeoutMs / 1000} s after the payment: COMPLETED ${completedMs !== undefined}, ${readableMs.size} SETTLED readable, ${settledOnChain.size} on the trace log, ${repaidOnChain.size} loans repaid`,
        );
      const head = await reader.getBlockNumber();
      if (head > scanned) {
        const [stages, repaid] = await Promise.all([
          reader.getContractEvents({
            address: info.endpoints.trace_log!,
            abi: traceLogAbi,
            eventName: 'StageRecorded',
            args: { stage: STAGE_CODES.SETTLED },
            fromBlock: scanned + 1n,
            toBlock: head,
          }),
          reader.getContractEvents({
            address: info.endpoints.lending_vault!,
            abi: lendingVaultAbi,
            eventName: 'LoanRepaid',
            args: { poRef },
            fromBlock: scanned + 1n,
            toBlock: head,
          }),
        ]);
        const now = performance.now() - t0;
        for (const l of stages) if (tokenIds.has(l.args.tokenId!)) settledOnChain.set(l.args.tokenId!, { block: l.blockNumber, ms: now });
        for (const l of repaid) repaidOnChain.set(l.args.loanRef!, { block: l.blockNumber, ms: now });
        scanned = head;
      }
      // Readable through the API: the settlement, and up to READ_WIDTH of the batches not yet read SETTLED.
      const [st, ...reads] = await Promise.all([
        completedMs === undefined ? call('GET', `/purchase-orders/${po.purchase_order_id}/settlement`, coop) : Promise.resolve(undefined),
        ...batches
          .filter((b) => !readableMs.has(b))
          .slice(0, READ_WIDTH)
          .map(async (b) => ({ b, r: await call('GET', `/batch/${b}`, coop) })),
      ]);
      const now = performance.now() - t0;
      if (st && (st as { body: any }).body?.status === 'COMPLETED') completedMs = now;
      for (const x of reads as Array<{ b: string; r: { body: any } }>) if (x.r.body.stage === 'SETTLED') readableMs.set(x.b, now);
      await sleep(50);
    }
    const loadAtEnd = loadLabel();
    const nonceAfter = await still('after the settlement');
    const head = await reader.getBlockNumber();

    // The settlement's transactions on chain: every transaction after the payment's up to the head.
    const byTarget = { vault: 0, traceLog: 0, other: 0 };
    let fromSigner = 0;
    let gas = 0n;
    for (let n = paid.blockNumber; n <= head; n++) {
      const block = await reader.getBlock({ blockNumber: n, includeTransactions: true });
      for (const tx of block.transactions) {
        if (tx.hash === payTx || (n === paid.blockNumber && tx.transactionIndex <= paid.transactionIndex)) continue;
        const to = tx.to ?? '0x0000000000000000000000000000000000000000';
        if (isAddressEqual(to, info.endpoints.lending_vault!)) byTarget.vault++;
        else if (isAddressEqual(to, info.endpoints.trace_log!)) byTarget.traceLog++;
        else byTarget.other++;
        if (isAddressEqual(tx.from, signer)) fromSigner++;
        gas += (await reader.getTransactionReceipt({ hash: tx.hash })).gasUsed;
      }
    }
    const settlement = (await call('GET', `/purchase-orders/${po.purchase_order_id}/settlement`, coop)).body;
    const last = (m: Map<string, number>) => Math.max(...m.values());
    const row = (k: string, v: string) => say(`  ${k.padEnd(60)} ${v}`);
    say(
      `Settlement of ${po.purchase_order_id} (${BATCHES} batches, ${LOANS} loans, ${Number(amount) / 1e6} USDC paid), from the payment mined:`,
    );
    row('(0) POST /purchase-orders/{id}/confirm: answered', `${confirmAnswerMs.toFixed(0)} ms`);
    row('(0) POST /purchase-orders/{id}/confirm until CONFIRMED', `${confirmMs.toFixed(0)} ms`);
    row('(a) settlement COMPLETED readable', `${completedMs!.toFixed(0)} ms`);
    row('(b) last batch SETTLED readable', `${last(readableMs).toFixed(0)} ms (first ${Math.min(...readableMs.values()).toFixed(0)} ms)`);
    const onChain = [...settledOnChain.values()];
    const lastRecord = onChain.reduce((a, x) => (x.block > a.block ? x : a));
    const blocksAfter = (b: bigint) => `${b - paid.blockNumber} blocks after the payment's block ${paid.blockNumber}`;
    row(
      '(c) last batch SETTLED on the trace log (StageRecorded log)',
      `${Math.max(...onChain.map((x) => x.ms)).toFixed(0)} ms; ${blocksAfter(lastRecord.block)}`,
    );
    const repaidBlocks = [...repaidOnChain.values()].map((x) => x.block);
    row(
      '(d) loans repaid on chain (LoanRepaid logs of the order)',
      repaidBlocks.length === 0 ? 'none' : `${repaidBlocks.length}; last ${blocksAfter(BigInt(Math.max(...repaidBlocks.map(Number))))}`,
    );
    row('load average (1/5/15 min) at confirm / payment / end', `${loadAtConfirm} / ${loadAtPayment} / ${loadAtEnd}`);
    row(
      'ledger transactions of the settlement',
      `${byTarget.vault + byTarget.traceLog + byTarget.other} (vault ${byTarget.vault}, trace log ${byTarget.traceLog}, other ${byTarget.other}); gas ${gas}`,
    );
    row(
      'ledger signer nonce before → after',
      `${nonceBefore} → ${nonceAfter} (+${nonceAfter - nonceBefore}; ${fromSigner} transactions from the signer)`,
    );
    row(
      'repayments / settled batches / remainder',
      `${settlement.repayments?.length} / ${settlement.settled_batch_ids?.length} / ${settlement.remainder_usdc} USDC`,
    );
  } finally {
    await stack.stop();
  }
}
