import { FilePriceFeed } from '../adapters/price-feed/file-price-feed';
import { HttpPriceFeed } from '../adapters/price-feed/http-price-feed';
import { envOr, requireEnv, secret } from '../config';
import type { PriceFeed } from '../domain/ports/lending';
import type { CreditScoreDeps } from '../use-cases/credit-score';
import { batchRepo, loanRepo, now, payoutRepo, registryRepo } from './repos';

/**
 * The read side of lending: the coffee price feed (docs/api/lending.md#price-feed) and the credit score's stores.
 *
 * Price feed: the local file `PRICE_FEED_FILE` when that variable is set (the local stack sets it
 * to `$LOCAL_DATA_DIR/price-feed.json`; read at each use), else the published source at
 * `PRICE_FEED_URL` with the optional bearer token `PRICE_FEED_TOKEN` (its Secrets Manager secret in
 * AWS; empty or `none`: no token), cached 60 s per container. One instance per container.
 */
let feed: PriceFeed | undefined;

/** The price feed of this process (see the module comment). */
export function priceFeed(): PriceFeed {
  if (feed) return feed;
  const file = envOr('PRICE_FEED_FILE', '');
  if (file) return (feed = new FilePriceFeed(file));
  let http: HttpPriceFeed | undefined;
  // Configuration is read on first use, so a request refused earlier never needs it.
  const load = () =>
    (http ??= new HttpPriceFeed({
      url: requireEnv('PRICE_FEED_URL'),
      token: async () => {
        if (!envOr('PRICE_FEED_TOKEN', '') && !envOr('PRICE_FEED_TOKEN_SECRET_ARN', '')) return undefined; // a source without a token
        const t = (await secret('PRICE_FEED_TOKEN', 'PRICE_FEED_TOKEN_SECRET_ARN')).trim();
        return t === '' || t.toLowerCase() === 'none' ? undefined : t;
      },
    }));
  return (feed = { latest: () => load().latest() });
}

/** Ports of GET /farmers/{id}/credit-score. */
export function creditScoreDeps(): CreditScoreDeps {
  return { registry: registryRepo(), batches: batchRepo(), loans: loanRepo(), payouts: payoutRepo(), now };
}
