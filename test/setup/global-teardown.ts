import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Stops the local stack that global-setup started (by its own process id) and prints how many
 * responses were validated against the served OpenAPI document (test/setup/contract-fetch.ts),
 * and which requests fell under no documented operation.
 */
export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as { __COFFEE_STACK__?: { stop(): Promise<void> } }).__COFFEE_STACK__;
  await stack?.stop();
  const dir = process.env.CONTRACT_COUNT_DIR;
  if (!dir) return;
  let validated = 0;
  let invalid = 0;
  const unmatched = new Set<string>();
  for (const f of readdirSync(dir)) {
    const t = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { validated: number; unmatched: string[]; invalid: string[] };
    validated += t.validated;
    invalid += t.invalid.length;
    for (const u of t.unmatched) unmatched.add(u);
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `\n${validated} responses validated against the OpenAPI document; ${invalid} drifted; ${unmatched.size} distinct request(s) to paths outside the document${unmatched.size ? `: ${[...unmatched].slice(0, 30).join('; ')}` : ''}`,
  );
}
