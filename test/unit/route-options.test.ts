import * as v from 'valibot';
import { publicRouteOptions, routeOptions, webhookRouteOptions } from '../../shared/http/handler';
import { ROUTES } from '../../shared/http/routes';
import type { AnyRouteDefinition } from '../../shared/http/routes/define';
import { getIpfsNameRoute, getIpfsRoute, getTraceRoute } from '../../shared/http/routes/reference';

/**
 * Handler options come from the route definitions (shared/http/routes), for every kind of route:
 * JWT (`routeOptions`), public (`publicRouteOptions`), signed webhooks (`webhookRouteOptions`).
 */
describe('handler options from the route definitions', () => {
  const byAuth = (auth: string) => ROUTES.filter((r) => r.auth === auth);

  it('builds the options of every definition of its own kind', () => {
    for (const r of byAuth('jwt')) expect(routeOptions(r).public).toBeUndefined();
    for (const r of byAuth('public')) expect(publicRouteOptions(r).public).toBe(true);
    for (const r of byAuth('webhook')) expect(webhookRouteOptions(r).schema).toBe(r.body);
  });

  it('refuses a definition of another kind, naming the route', () => {
    const jwt = byAuth('jwt')[0]!;
    const webhook = byAuth('webhook')[0]!;
    expect(() => publicRouteOptions(jwt)).toThrow(`${jwt.method} ${jwt.path} is a jwt route, not public`);
    expect(() => routeOptions(getTraceRoute)).toThrow('GET /trace/{id} is a public route, not jwt');
    expect(() => webhookRouteOptions(getTraceRoute as AnyRouteDefinition)).toThrow('is a public route, not webhook');
    expect(() => routeOptions(webhook)).toThrow('is a webhook route, not jwt');
    expect(() => webhookRouteOptions({ ...webhook, body: undefined })).toThrow("declares its event's body schema");
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
