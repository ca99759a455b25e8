import { writeFileSync } from 'node:fs';
import { parseBlockTimeSeconds } from './hardhat-node';
import { startLocalStack } from './stack';

/**
 * `npm start`: the whole service on embedded components (docs/architecture.md#the-local-stack). Prints its URL once it
 * serves; SIGINT/SIGTERM stop every child process it started. Environment: PORT (3000),
 * LOCAL_DATA_DIR (.local/), LOCAL_TIME_SCALE (1), LEDGER_BLOCK_TIME_S (2), PAYOUT_SANDBOX_SETTLE_MS (2000),
 * CHAIN_WEBHOOK_SECRET, PAYOUT_WEBHOOK_SECRET, LOCAL_IAM_ENFORCE (true; docs/local-iam.md),
 * LOCAL_IAM_DECISIONS_FILE; LOCAL_STACK_INFO_FILE (tests) receives a JSON
 * description of the running stack.
 */
async function main() {
  const started = Date.now();
  const port = Number(process.env.PORT ?? 3000);
  const timeScale = Number(process.env.LOCAL_TIME_SCALE ?? 1);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a TCP port, got ${process.env.PORT}`);
  if (!(timeScale > 0)) throw new Error(`LOCAL_TIME_SCALE must be a positive number, got ${process.env.LOCAL_TIME_SCALE}`);
  const verbose = process.env.LOCAL_VERBOSE === '1';
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say('Starting the coffee trace service on embedded components (DynamoDB Local, fauxqs, hardhat, local Step Functions, payout sandbox)…');
  const stack = await startLocalStack({
    port,
    timeScale,
    blockTimeS: parseBlockTimeSeconds(process.env.LEDGER_BLOCK_TIME_S),
    settleMs: process.env.PAYOUT_SANDBOX_SETTLE_MS ? Number(process.env.PAYOUT_SANDBOX_SETTLE_MS) : undefined,
    sandboxFaults: {
      rejectRate: Number(process.env.PAYOUT_SANDBOX_REJECT_RATE ?? 0),
      dropWebhookRate: Number(process.env.PAYOUT_SANDBOX_DROP_WEBHOOK_RATE ?? 0),
      unreachableRate: Number(process.env.PAYOUT_SANDBOX_UNREACHABLE_RATE ?? 0),
    },
    log: verbose ? (l) => say(`  ${l}`) : undefined,
  });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping…`);
    await stack.stop();
    say('stopped.');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  if (process.env.LOCAL_STACK_INFO_FILE) {
    writeFileSync(
      process.env.LOCAL_STACK_INFO_FILE,
      JSON.stringify({ url: stack.url, dataDir: stack.dataDir, endpoints: stack.endpoints, pids: { ...stack.pids, stack: process.pid } }),
    );
  }
  for (const [k, v] of Object.entries(stack.endpoints)) say(`  ${k.padEnd(14)} ${v}`);
  say(`  data dir       ${stack.dataDir} (notifications.jsonl, logs/)`);
  say(
    `Ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${stack.url}  (API reference ${stack.url}/docs; tokens: npm run token -- --role ADMIN)`,
  );
}

main().catch((err) => {
  process.stderr.write(`npm start failed: ${(err as Error).message}\n`);
  process.exit(1);
});
