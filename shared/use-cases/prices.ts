import { DomainError } from '../domain/errors';
import { isPriceFeedStale, PRICE_FEED_MAX_AGE_SECONDS } from '../domain/lending';
import type { PriceFeed } from '../domain/ports/lending';
import type { Grade } from '../domain/records';

/** A grade's price as loan origination uses it (docs/api/lending.md#loans). */
export interface CurrentPrice {
  /** Micro-USD per kg. */
  usd_micro_per_kg: number;
  /** When the source published it (ISO). */
  updated_at: string;
  /** The feed it came from (URL or local file). */
  source: string;
}

/**
 * The current price of `grade` from the coffee price feed, for loan origination.
 * Rule: a feed whose `updated_at` is more than PRICE_FEED_MAX_AGE_SECONDS (1 hour) before `now`
 * (or more than a minute in the future) is stale.
 * Errors: 503 STALE_PRICE_FEED (loan origination paused) when the feed is stale, and also when it
 * cannot be read at all (unreachable, malformed) — without a current price no loan is valued; the
 * message says which, `details` carries `updated_at`/`source` when known.
 */
export async function currentPrice(feed: PriceFeed, grade: Grade, now: Date): Promise<CurrentPrice> {
  let snapshot;
  try {
    snapshot = await feed.latest();
  } catch (err) {
    throw new DomainError(
      'STALE_PRICE_FEED',
      `The coffee price feed cannot be read (${(err as Error).message}); loan origination is paused until it answers with prices at most ${PRICE_FEED_MAX_AGE_SECONDS / 60} minutes old.`,
    );
  }
  if (isPriceFeedStale(snapshot, now)) {
    throw new DomainError(
      'STALE_PRICE_FEED',
      `The coffee price feed was last updated at ${snapshot.updated_at}, more than ${PRICE_FEED_MAX_AGE_SECONDS / 60} minutes before ${now.toISOString()} (or in the future); loan origination is paused until it is updated.`,
      { details: { updated_at: snapshot.updated_at, source: snapshot.source, max_age_seconds: PRICE_FEED_MAX_AGE_SECONDS } },
    );
  }
  const price = snapshot.usd_micro_per_kg[grade];
  if (!Number.isSafeInteger(price) || price < 0) {
    throw new DomainError(
      'STALE_PRICE_FEED',
      `The coffee price feed has no price for grade ${grade}; loan origination is paused until it does.`,
      { details: { source: snapshot.source } },
    );
  }
  return { usd_micro_per_kg: price, updated_at: snapshot.updated_at, source: snapshot.source };
}
