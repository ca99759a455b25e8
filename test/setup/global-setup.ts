import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DDS_XML_INLINE_MAX_BYTES } from '../support/api';
import { startStackProcess } from '../support/stack-process';

/**
 * Integration tests run against one local stack, started here as its own process exactly as
 * `npm start` runs it (free ports, temporary data dir, LOCAL_TIME_SCALE=0.01, sandbox settling in
 * 200 ms, statements' XML above 64 KiB served by link). Its chain mines each transaction at once (LEDGER_BLOCK_TIME_S=0) unless the variable is
 * set (`LEDGER_BLOCK_TIME_S=2 npm test` runs every suite on 2-second blocks); the suites that run
 * on a chain with block time start their own stack (block-time.int.test.ts). Tests find it through
 * TEST_STACK_URL and TEST_STACK_DATA_DIR; each test file's contract tally
 * (test/setup/contract-fetch.ts) goes to CONTRACT_COUNT_DIR.
 */
export default async function globalSetup(): Promise<void> {
  const stack = await startStackProcess(
    {
      LEDGER_BLOCK_TIME_S: process.env.LEDGER_BLOCK_TIME_S ?? '0',
      // 64 KiB instead of 4 MiB: a statement of a few large plots already gets its XML by link (eudr-shipment.int.test.ts).
      DDS_XML_INLINE_MAX_BYTES: String(DDS_XML_INLINE_MAX_BYTES),
    },
    240_000,
  );
  process.env.TEST_STACK_URL = stack.info.url;
  process.env.TEST_STACK_DATA_DIR = stack.info.dataDir;
  process.env.CONTRACT_COUNT_DIR = mkdtempSync(join(tmpdir(), 'coffee-contract-'));
  (globalThis as { __COFFEE_STACK__?: { stop(): Promise<void> } }).__COFFEE_STACK__ = stack;
}
