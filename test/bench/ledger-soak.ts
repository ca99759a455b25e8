import { startStackProcess } from '../support/stack-process';
import { runLedgerSoak } from '../support/ledger-soak';

const SOAK_MS = Number(process.env.BENCH_SOAK_SECONDS ?? 100) * 1000;
const say = (l: string) => process.stdout.write(`${l}\n`);

/**
 * `BENCH_ONLY=ledger-soak npm run bench`: the ledger soak (test/support/ledger-soak.ts) for
 * BENCH_SOAK_SECONDS (default 100) on a local stack at LOCAL_TIME_SCALE=0.01 (anchors every 3 s),
 * the payout sandbox rejecting 20 % of orders, LEDGER_WRITE_MAX_ATTEMPTS=3. Prints the figures:
 * writes landed, refused, parked, still open; anchors; the largest age of the oldest open write;
 * jobs not COMPLETE; the time to mint a new batch afterwards. Exit 1 when a job stays incomplete
 * or the final batch does not mint within 5 s.
 */
export async function ledgerSoakBench(): Promise<void> {
  say(
    `\nLedger soak: ${SOAK_MS / 1000} s of mixed traffic (submissions, stage updates, TOP_UP payouts with retries) and one poison write, LOCAL_TIME_SCALE=0.01`,
  );
  const stack = await startStackProcess({
    LOCAL_TIME_SCALE: '0.01',
    PAYOUT_SANDBOX_SETTLE_MS: '300',
    PAYOUT_SANDBOX_REJECT_RATE: '0.2',
    LEDGER_WRITE_MAX_ATTEMPTS: '3',
    LOCAL_RATE_LIMIT_RPS: '100000',
    LOCAL_RATE_LIMIT_BURST: '100000',
  });
  try {
    const f = await runLedgerSoak(stack, { durationMs: SOAK_MS, drainTimeoutMs: 60_000, say });
    say(
      `  ledger writes: ${f.writesLanded} landed (${f.anchorsLanded} of them anchors), ${f.writesRefused} refused, ${f.writesParked} parked, ${f.writesOpen} still open`,
    );
    say(`  oldest open ledger write during the soak: max ${f.maxOldestPendingAgeSeconds} s`);
    say(
      `  jobs: ${f.jobs - f.jobsNotComplete.length}/${f.jobs} COMPLETE, ${f.drainSeconds.toFixed(1)} s after the traffic stopped${f.jobsNotComplete.length ? `; not complete: ${JSON.stringify(f.jobsNotComplete.slice(0, 5))}` : ''}`,
    );
    say(`  a new batch afterwards: ${f.finalMint.status}, minted in ${f.finalMint.ms} ms`);
    if (f.jobsNotComplete.length || f.finalMint.status !== 201 || f.finalMint.ms > 5000) process.exitCode = 1;
  } catch (err) {
    process.stderr.write(`local stack output:\n${stack.output()}\n`);
    throw err;
  } finally {
    await stack.stop();
  }
}
