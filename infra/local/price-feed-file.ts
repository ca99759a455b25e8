import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { snapshotFromText } from '../../shared/adapters/price-feed/price-feed-document';
import { isPriceFeedStale } from '../../shared/domain/lending';
import type { Grade } from '../../shared/domain/records';

/** The prices the local stack publishes when there is no usable file (USD per kg). */
export const LOCAL_DEFAULT_USD_PER_KG: Record<Grade, number> = { screen18: 6.2, screen15: 5.8, FAQ: 5.1, PB: 6.0 };

/**
 * The local price feed at start (docs/api/lending.md#price-feed: "written at start and read at each use"):
 * - no file, or a file that is not a valid price-feed document → the default prices with
 *   `updated_at` = now (a malformed file is replaced, and the log says so);
 * - a valid file whose `updated_at` is older than 1 hour → its prices kept, `updated_at` = now (a
 *   restart republishes the operator's prices, as a live source would publish again);
 * - a valid, fresh file → left as it is.
 * While the stack runs the file is read at each use, so an operator's edit (prices, or an old
 * `updated_at` to see 503 STALE_PRICE_FEED) takes effect at once.
 * @returns what it did: 'written' | 'refreshed' | 'kept'
 */
export function preparePriceFeedFile(
  path: string,
  now: Date,
  log: (line: string) => void = () => undefined,
): 'written' | 'refreshed' | 'kept' {
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    text = undefined;
  }
  if (text !== undefined) {
    try {
      const snapshot = snapshotFromText(text, path);
      if (!isPriceFeedStale(snapshot, now)) return 'kept';
      const doc = JSON.parse(text) as Record<string, unknown>;
      writeFileSync(path, `${JSON.stringify({ ...doc, updated_at: now.toISOString() }, null, 2)}\n`);
      return 'refreshed';
    } catch (err) {
      log(`price feed ${path} is not usable (${(err as Error).message}); writing the default prices`);
    }
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ updated_at: now.toISOString(), usd_per_kg: LOCAL_DEFAULT_USD_PER_KG }, null, 2)}\n`);
  return 'written';
}
