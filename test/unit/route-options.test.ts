import * as v from 'valibot';
import { publicRouteOptions, routeOptions } from '../../shared/http/handler';
import { webhookRouteOptions } from '../../shared/http/webhook';
import { ROUTES } from '../../shared/http/routes';
import type { AnyRouteDefinition } from '../../shared/http/routes/define';
import { getIpfsNameRoute, getIpfsRoute, getTraceRoute } from '../../shared/http/routes/reference';

/**
 * Handler options come from the route definitions (shared/http/routes), for every kind of route:
 * JWT (`routeOptions`), public (`publicRouteOptions`), signed webhooks (`webhookRouteOptions`, their event schema).
 */
describe('handler options from the route definitions', () => {
  const byAuth = (auth: string) => ROUTES.filter((r) => r.auth === auth);
  const secret = async () => 'whsec_unused';

  it('builds the options of every definition of its own kind', () => {
    for (const r of byAuth('jwt')) expect(routeOptions(r).public).toBeUndefined();
    for (const r of byAuth('public')) expect(publicRouteOptions(r).public).toBe(true);
    for (const r of byAuth('webhook')) expect(webhookRouteOptions(r, secret).schema).toBe(r.event);
  });

  it('refuses a definition of another kind, naming the route', () => {
    const jwt = byAuth('jwt')[0]!;
    const webhook = byAuth('webhook')[0]!;
    expect(() => publicRouteOptions(jwt)).toThrow(`${jwt.method} ${jwt.path} is not a public route (auth jwt)`);
    expect(() => routeOptions(getTraceRoute)).toThrow('GET /trace/{id} is not a JWT route (auth public)');
    expect(() => webhookRouteOptions(getTraceRoute as AnyRouteDefinition, secret)).toThrow(
      'GET /trace/{id} is not a webhook route with an event schema',
    );
    expect(() => routeOptions(webhook)).toThrow('is not a JWT route (auth webhook)');
    expect(() => webhookRouteOptions({ ...webhook, event: undefined }, secret)).toThrow('is not a webhook route with an event schema');
  });

  it('checks the path parameters each public route declares', () => {
    const cid = `b${'a'.repeat(58)}`;
    const bare = publicRouteOptions(getIpfsRoute).params!;
    const named = publicRouteOptions(getIpfsNameRoute).params!;
    expect(v.safeParse(bare, { id: cid }).success).toBe(true);
    expect(v.safeParse(bare, { id: 'not-a-cid' }).success).toBe(false);
    expect(v.safeParse(named, { id: cid, name: 'evidence.json' }).success).toBe(true);
    expect(v.safeParse(named, { id: cid }).success).toBe(false);
    expect(v.safeParse(publicRouteOptions(getTraceRoute).params!, { id: '../etc' }).success).toBe(false);
  });
});
