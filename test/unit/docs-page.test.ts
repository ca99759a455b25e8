import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handler } from '../../functions/get-docs/handler';
import { ERROR_CODES } from '../../shared/http/error-codes';
import { apiEvent, lambdaContext } from './support/api-event';

/**
 * The documentation function (issue 11): GET /docs loads the service's own Scalar bundle and points
 * it at /openapi.json; GET /docs/scalar.js serves that bundle (beside the Lambda bundle in AWS,
 * from node_modules locally); GET /docs/errors anchors every error code (`error.docs` links).
 */

beforeAll(() => {
  process.env.PUBLIC_BASE_URL = 'https://api.example.test';
});
afterAll(() => {
  delete process.env.PUBLIC_BASE_URL;
});

const get = (resource: string) =>
  handler(
    apiEvent({
      method: 'GET',
      path: resource,
      resource,
      caller: null,
      headers: { host: 'evil.example', 'x-forwarded-proto': 'javascript:alert(1)//' },
    }),
    lambdaContext(),
  ) as Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

describe('GET /docs, /docs/scalar.js, /docs/errors', () => {
  it('renders the reference with the bundle served by the service (no CDN), pointed at /openapi.json', async () => {
    const res = await get('/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('<script src="https://api.example.test/docs/scalar.js"></script>');
    expect(res.body).toContain('data-url="https://api.example.test/openapi.json"');
    expect(res.body).toContain('&quot;url&quot;:&quot;https://api.example.test/openapi.json&quot;');
    expect(res.body).not.toMatch(/evil\.example|javascript:/);
    // No inline script: Scalar reads its configuration from the #api-reference data block.
    for (const tag of res.body.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/\ssrc="|type="application\/json"/);
    expect(res.headers['content-security-policy']).toContain("script-src 'self';");
    expect(res.body).toContain('&quot;withDefaultFonts&quot;:false');
    expect(res.body).not.toMatch(/<script[^>]+src="https?:\/\/(?!api\.example\.test)/);
  });

  it("serves Scalar's standalone bundle as JavaScript", async () => {
    const res = await get('/docs/scalar.js');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('javascript');
    expect(res.body.length).toBeGreaterThan(1_000_000);
    expect(res.body).toContain('createApiReference');
  });

  it('lists every error code with its status under an anchor #CODE', async () => {
    const res = await get('/docs/errors');
    expect(res.statusCode).toBe(200);
    for (const [code, e] of Object.entries(ERROR_CODES))
      expect(res.body).toContain(`<tr id="${code}"><td><code>${code}</code></td><td>${e.status}</td>`);
  });
});

describe('scalarBundle() in Lambda', () => {
  it("reads the copy in the docs function's layer (/opt/scalar/standalone.js) first", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'layer-root-'));
    mkdirSync(join(dir, 'scalar'));
    writeFileSync(join(dir, 'scalar', 'standalone.js'), '/* the copy in the layer */');
    try {
      await jest.isolateModulesAsync(async () => {
        const { scalarBundle } = await import('../../shared/http/docs-page');
        expect(scalarBundle(dir)).toBe('/* the copy in the layer */');
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the docs function bundle', () => {
  it('carries only its own route definitions (no view schemas: they belong to the API functions and /openapi.json, not the docs pages)', async () => {
    const { build } = await import('esbuild');
    const { esbuildOptionsFor, functionEntry } = await import('../../infra/bundling');
    const { metafile } = await build({
      ...esbuildOptionsFor(functionEntry('get-docs'), join(tmpdir(), 'get-docs-bundle', 'index.mjs')),
      write: false,
      metafile: true,
    });
    const inBundle = Object.values(metafile.outputs).flatMap((o) =>
      Object.entries(o.inputs)
        .filter(([, v]) => v.bytesInOutput > 0)
        .map(([file]) => file),
    );
    expect(inBundle).toContain('shared/http/docs-page.ts');
    const own = ['shared/http/routes/docs.ts', 'shared/http/routes/define.ts'];
    expect(inBundle.filter((f) => f.startsWith('shared/http/routes/') && !own.includes(f))).toEqual([]);
    expect(inBundle).not.toContain('shared/http/view-schemas.ts');
  });
});
