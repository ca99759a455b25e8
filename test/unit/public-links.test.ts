import { handler as openapi } from '../../functions/get-openapi/handler';
import { checkPublicBaseUrl, publicBaseUrl } from '../../shared/config';
import { publicCoordinate, publicPlotGeometry } from '../../shared/domain/farm-geometry';
import { contentSecurityPolicy, cspHash, HSTS, withSecurityHeaders } from '../../shared/http/security-headers';
import { traceErrorHtml } from '../../shared/http/trace-page';
import { apiEvent, lambdaContext } from './support/api-event';

/**
 * Links from configuration (PUBLIC_BASE_URL, checked), the security headers (HSTS only when
 * SERVICE_RUNTIME is aws; a CSP without inline script on HTML), and the public plot rule.
 */

const saved = { ...process.env };
afterEach(() => {
  for (const k of ['PUBLIC_BASE_URL', 'SERVICE_RUNTIME']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('PUBLIC_BASE_URL', () => {
  it('accepts an https base (a path kept, a trailing slash dropped); http only locally', () => {
    expect(checkPublicBaseUrl('https://trace.example.com/', 'aws')).toBe('https://trace.example.com');
    expect(checkPublicBaseUrl('https://abc.execute-api.eu-west-1.amazonaws.com/prod', 'aws')).toBe(
      'https://abc.execute-api.eu-west-1.amazonaws.com/prod',
    );
    expect(checkPublicBaseUrl('http://127.0.0.1:3000', 'local')).toBe('http://127.0.0.1:3000');
    expect(() => checkPublicBaseUrl('http://trace.example.com', 'aws')).toThrow(/https/);
  });

  it.each([
    'javascript:alert(document.domain)//',
    'trace.example.com',
    'https://user:pw@trace.example.com',
    'https://trace.example.com/?a=1',
    'https://trace.example.com/#x',
    'ftp://trace.example.com',
    '',
  ])('refuses %j', (raw) => {
    expect(() => checkPublicBaseUrl(raw, 'local')).toThrow(/PUBLIC_BASE_URL/);
  });

  it('publicBaseUrl() reads the variable, and fails when it is missing or not https in AWS', () => {
    delete process.env.PUBLIC_BASE_URL;
    expect(() => publicBaseUrl()).toThrow(/PUBLIC_BASE_URL/);
    process.env.PUBLIC_BASE_URL = 'http://trace.example.com';
    process.env.SERVICE_RUNTIME = 'aws';
    expect(() => publicBaseUrl()).toThrow(/https/);
    process.env.PUBLIC_BASE_URL = 'https://trace.example.com';
    expect(publicBaseUrl()).toBe('https://trace.example.com');
  });

  it('GET /openapi.json names the configured server whatever Host and X-Forwarded-* say', async () => {
    process.env.PUBLIC_BASE_URL = 'https://trace.example.com';
    const res = (await openapi(
      apiEvent({
        method: 'GET',
        path: '/openapi.json',
        resource: '/openapi.json',
        caller: null,
        headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'javascript:alert(1)//' },
      }),
      lambdaContext(),
    )) as { body: string };
    expect((JSON.parse(res.body) as { servers: Array<{ url: string }> }).servers).toEqual([
      expect.objectContaining({ url: 'https://trace.example.com' }),
    ]);
  });
});

describe('security headers', () => {
  it('nosniff and no-referrer always; HSTS only when SERVICE_RUNTIME is aws', () => {
    delete process.env.SERVICE_RUNTIME;
    expect(withSecurityHeaders({ 'content-type': 'application/json' })).toEqual({
      'content-type': 'application/json',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    process.env.SERVICE_RUNTIME = 'local';
    expect(withSecurityHeaders({})['strict-transport-security']).toBeUndefined();
    process.env.SERVICE_RUNTIME = 'aws';
    expect(withSecurityHeaders({})['strict-transport-security']).toBe(HSTS);
    process.env.SERVICE_RUNTIME = 'azure';
    expect(() => withSecurityHeaders({})).toThrow(/SERVICE_RUNTIME/);
  });

  it("in AWS a handler's answers carry HSTS (success and error alike)", async () => {
    process.env.SERVICE_RUNTIME = 'aws';
    process.env.PUBLIC_BASE_URL = 'https://trace.example.com';
    const ok = (await openapi(
      apiEvent({ method: 'GET', path: '/openapi.json', resource: '/openapi.json', caller: null }),
      lambdaContext(),
    )) as { headers: Record<string, string> };
    expect(ok.headers).toMatchObject({
      'strict-transport-security': HSTS,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    process.env.PUBLIC_BASE_URL = 'http://trace.example.com'; // not https in AWS: refused, never printed
    const bad = (await openapi(
      apiEvent({ method: 'GET', path: '/openapi.json', resource: '/openapi.json', caller: null }),
      lambdaContext(),
    )) as { statusCode: number; headers: Record<string, string>; body: string };
    expect(bad.statusCode).toBe(500);
    expect(bad.body).not.toContain('http://trace.example.com');
    expect(bad.headers['strict-transport-security']).toBe(HSTS);
  });

  it('an HTML page gets a CSP with no inline script and its <style> allowed by hash only', () => {
    const html = traceErrorHtml(404, 'not here');
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const csp = withSecurityHeaders({ 'content-type': 'text/html; charset=utf-8' }, html)['content-security-policy']!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain(`style-src 'self' ${cspHash(style)};`);
    expect(csp).not.toContain('unsafe');
    expect(csp).toContain("default-src 'none'");
    // A page that sets its own policy keeps it; JSON gets none.
    expect(
      withSecurityHeaders(
        { 'content-type': 'text/html', 'content-security-policy': contentSecurityPolicy({ inlineStyles: 'unsafe-inline' }) },
        html,
      )['content-security-policy'],
    ).toContain("style-src 'self' 'unsafe-inline'");
    expect(withSecurityHeaders({ 'content-type': 'application/json' }, '{}')['content-security-policy']).toBeUndefined();
  });
});

describe('the public plot (3 decimals, about 110 m)', () => {
  it('rounds a coordinate to 3 decimals, shortest form', () => {
    expect([publicCoordinate(1.080123), publicCoordinate(34.175045), publicCoordinate(-0.0004), publicCoordinate(32.5815)]).toEqual([
      1.08, 34.175, 0, 32.582,
    ]);
  });

  it('a polygon: every position rounded', () => {
    const polygon = {
      type: 'Polygon' as const,
      coordinates: [
        [
          [34.449123, 1.395317],
          [34.451358, 1.395317],
          [34.451358, 1.397389],
          [34.449123, 1.395317],
        ],
      ],
    };
    expect(publicPlotGeometry({ gps: { lat: 1.396245, lng: 34.450118 }, area_ha: 5.2, polygon }).coordinates).toEqual([
      [
        [34.449, 1.395],
        [34.451, 1.395],
        [34.451, 1.397],
        [34.449, 1.395],
      ],
    ]);
  });

  it('a point farm: the circle drawn round the rounded point, so two farms in the same 110 m cell draw the same circle', () => {
    const a = publicPlotGeometry({ gps: { lat: 1.080123, lng: 34.175045 }, area_ha: 1.5 });
    const b = publicPlotGeometry({ gps: { lat: 1.079801, lng: 34.175349 }, area_ha: 1.5 });
    expect(a).toEqual(b);
    const decimals = (x: number) => (String(x).split('.')[1] ?? '').length;
    expect(Math.max(...a.coordinates.flat(2).map(decimals))).toBeLessThanOrEqual(3);
  });
});
