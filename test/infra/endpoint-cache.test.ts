import { EndpointCache as RealEndpointCache } from '@aws-sdk/endpoint-cache';
import { EndpointCache as StandIn } from '../../infra/lambda/endpoint-cache';

/**
 * The Lambda bundles alias @aws-sdk/endpoint-cache to infra/lambda/endpoint-cache.ts (infra/bundling.ts).
 * The stand-in must answer every call as the real cache does.
 */
describe('the endpoint-cache stand-in of the Lambda bundles', () => {
  type Cache = Pick<RealEndpointCache, 'get' | 'set' | 'delete' | 'has' | 'getEndpoint' | 'clear'>;
  const both = (capacity: number): Cache[] => [new RealEndpointCache(capacity), new StandIn(capacity)];

  afterEach(() => jest.useRealTimers());

  it('stores, reads, expires, empties and evicts as the real cache does', () => {
    jest.useFakeTimers();
    const results = both(2).map((c) => {
      jest.setSystemTime(new Date('2026-11-22T10:00:00Z'));
      const seen: unknown[] = [];
      c.set('a', [{ Address: 'a.example', CachePeriodInMinutes: 1 }]);
      c.set('b', [{ Address: 'b.example', CachePeriodInMinutes: 10 }]);
      seen.push(c.has('a'), c.get('a'), c.getEndpoint('b'), c.has('zzz'), c.get('zzz'), c.getEndpoint('zzz'));
      c.get('a'); // a is now the most recently used
      c.set('c', [{ Address: 'c.example', CachePeriodInMinutes: 5 }]); // evicts b (least recently used)
      seen.push(c.has('a'), c.has('b'), c.has('c'));
      jest.advanceTimersByTime(2 * 60 * 1000); // a expired
      seen.push(c.get('a'), c.has('a'), c.get('c'));
      c.delete('c');
      seen.push(c.has('c'), c.get('c'));
      c.clear();
      seen.push(c.has('a'));
      return seen;
    });
    expect(results[1]).toEqual(results[0]);
  });
});
