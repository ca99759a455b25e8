/**
 * The local price feed (docs/api/lending.md#price-feed): the file `$LOCAL_DATA_DIR/price-feed.json`, read at each
 * use so an operator can edit it while the service runs. The document is described in
 * ./price-feed-document.ts.
 */
import { readFile } from 'node:fs/promises';
import type { PriceFeedSnapshot } from '../../domain/lending';
import type { PriceFeed } from '../../domain/ports/lending';
import { snapshotFromText } from './price-feed-document';

/** The price feed in a JSON file, read (and validated) at every `latest()`. */
export class FilePriceFeed implements PriceFeed {
  constructor(private readonly path: string) {}

  /**
   * The file's prices as micro-USD per kg, with `source` the file path.
   * @throws Error naming the path when the file cannot be read, is not JSON or is malformed
   */
  async latest(): Promise<PriceFeedSnapshot> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      throw new Error(`Price feed file ${this.path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
        cause: err,
      });
    }
    return snapshotFromText(text, this.path);
  }
}
