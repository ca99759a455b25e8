/**
 * The deployment area of each function (shared/function-areas.ts): from the manifest's data, so a
 * new route lands in the nested stack of its area (infra/stack/function-areas.ts) with no
 * infrastructure edit.
 */
import { FUNCTION_AREAS, functionArea } from '../../shared/function-areas';
import { functionManifest, type FunctionManifest } from '../../shared/manifest';

const route = (...paths: string[]): Pick<FunctionManifest, 'kind' | 'routes'> => ({
  kind: 'route',
  routes: paths.map((path) => ({ method: 'GET', path, auth: 'jwt' })),
});
const areaOf = (fn: string) => functionArea(functionManifest().find((m) => m.fn === fn)!);

describe('functionArea', () => {
  test.each([
    ['create-cooperative', 'registry'],
    ['register-farmer', 'registry'],
    ['submit-batch', 'batches'],
    ['get-trace', 'batches'],
    ['get-ipfs', 'batches'],
    ['settle-purchase-order', 'trade'],
    ['create-loan', 'trade'],
    ['create-farmer-payout', 'payments'],
    ['generate-dds', 'eudr'],
    ['payout-provider-webhook', 'webhooks'],
    ['create-webhook-endpoint', 'webhooks'],
    ['get-openapi', 'reference'],
    ['get-docs', 'reference'],
    ['ledger-writer', 'workers'],
    ['payout-attempt', 'workers'],
    ['audit-anchorer', 'workers'],
    ['outbound-event-publisher', 'workers'],
  ])('%s is in %s', (fn, area) => {
    expect(areaOf(fn)).toBe(area);
  });

  test('the authorizer has none: it stays in the main stack beside API Gateway', () => {
    expect(areaOf('authorizer')).toBeUndefined();
  });

  test('a route by its first path segment, /v1 aside; the first route of a function decides', () => {
    expect(functionArea(route('/v1/batch/submit'))).toBe('batches');
    expect(functionArea(route('/payments/{id}', '/batch/{id}'))).toBe('payments');
    expect(functionArea(route('/v1'))).toBe('other');
  });

  test('a path segment the table does not know lands in other (still in a nested stack)', () => {
    expect(functionArea(route('/warehouses/{id}'))).toBe('other');
  });

  test('every function of the manifest but the authorizer has one of the areas', () => {
    for (const m of functionManifest()) {
      const area = functionArea(m);
      if (m.kind === 'authorizer') continue;
      expect({ fn: m.fn, known: area !== undefined && FUNCTION_AREAS.includes(area) }).toEqual({ fn: m.fn, known: true });
    }
  });
});
