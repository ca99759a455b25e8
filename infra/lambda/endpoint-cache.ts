/**
 * Stands in for `@aws-sdk/endpoint-cache` inside the Lambda bundles only (an esbuild alias in
 * infra/bundling.ts), as ./credential-provider.ts does for the credential chain. The DynamoDB
 * client builds an endpoint cache for endpoint discovery when it is constructed, but this service
 * never enables discovery and no DynamoDB command of the pinned SDK applies the discovery plugin, so
 * the cache is never consulted; the real one carries mnemonist's LRU (about 7.5 KB per bundle).
 * This one keeps the same API and behaviour over a Map bounded to `capacity` entries (the oldest
 * key is evicted first). test/infra/endpoint-cache.test.ts compares it with the real class.
 */

/** An endpoint as DescribeEndpoints returns it. */
export interface Endpoint {
  Address: string;
  CachePeriodInMinutes: number;
}

/** A cached endpoint with its expiry (epoch ms). */
export interface EndpointWithExpiry {
  Address: string;
  Expires: number;
}

export class EndpointCache {
  private readonly cache = new Map<string, EndpointWithExpiry[]>();

  constructor(private readonly capacity: number) {}

  /** A random unexpired endpoint address for `key`, or undefined. */
  getEndpoint(key: string): string | undefined {
    const endpoints = this.get(key);
    if (!endpoints || endpoints.length === 0) return undefined;
    return endpoints[Math.floor(Math.random() * endpoints.length)]!.Address;
  }

  /** The unexpired endpoints of `key`; an entry whose endpoints all expired is emptied. */
  get(key: string): EndpointWithExpiry[] | undefined {
    if (!this.has(key)) return undefined;
    const value = this.cache.get(key)!;
    this.touch(key, value);
    const now = Date.now();
    const live = value.filter((e) => now < e.Expires);
    if (live.length === 0) {
      this.delete(key);
      return undefined;
    }
    return live;
  }

  /** Caches `endpoints` for `key`, each expiring after its CachePeriodInMinutes. */
  set(key: string, endpoints: Endpoint[]): void {
    const now = Date.now();
    this.touch(
      key,
      endpoints.map(({ Address, CachePeriodInMinutes }) => ({ Address, Expires: now + CachePeriodInMinutes * 60 * 1000 })),
    );
  }

  /** Empties `key` (as the real cache does: the key stays, with no endpoints). */
  delete(key: string): void {
    this.touch(key, []);
  }

  /** Whether `key` has endpoints (expired or not). */
  has(key: string): boolean {
    const endpoints = this.cache.get(key);
    return endpoints !== undefined && endpoints.length > 0;
  }

  clear(): void {
    this.cache.clear();
  }

  /** Stores `value` as the most recently used entry, evicting the least recently used past capacity. */
  private touch(key: string, value: EndpointWithExpiry[]): void {
    this.cache.delete(key);
    this.cache.set(key, value);
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
  }
}
