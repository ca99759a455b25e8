import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What `npm start` writes to `$LOCAL_DATA_DIR/stack.json` for the local tools (`npm run verify`,
 * `npm run buyer:pay`, the demo) and the integration tests: where this stack's API and parts are.
 */
export interface LocalStackFile {
  /** The API's base URL. */
  url: string;
  /** URLs of the embedded parts (ledger, dynamodb, the sandboxes…) and the contract addresses (batch_token, trace_log…), by name. */
  endpoints: Record<string, string>;
  chain_id: number;
}

/** Writes the stack file of the stack whose data folder is `dataDir`. */
export function writeLocalStackFile(dataDir: string, file: LocalStackFile): void {
  writeFileSync(join(dataDir, 'stack.json'), JSON.stringify(file, null, 2));
}

/**
 * The stack file in `dataDir`, undefined when there is none (no stack was started there).
 * @throws Error naming the file when it cannot be read or parsed
 */
export function readLocalStackFile(dataDir: string): LocalStackFile | undefined {
  const file = join(dataDir, 'stack.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LocalStackFile;
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
}
