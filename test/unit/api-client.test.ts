import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openApiDocument } from '../../shared/http/openapi';
import { repoRoot } from '../../shared/runtime/paths';
import { createCoffeeTraceClient } from '../../clients/typescript/index.js';

/**
 * The typed client package clients/typescript/ (docs/generated-code.md): its types
 * (api-types.d.ts) are generated from the OpenAPI document by `npm run gen:client` — regenerated
 * in memory here, they must equal the committed file, so they never drift from the document —;
 * its package.json is installable (types entry, files, openapi-fetch pinned as the service pins
 * it); its README shows example.ts as it is (the typecheck compiles example.ts); and its one
 * runtime function sends the bearer token.
 */

const run = promisify(execFile);
const clientDir = join(repoRoot(), 'clients/typescript');

interface ClientPackage {
  name: string;
  version: string;
  type: string;
  main: string;
  types: string;
  exports: Record<string, { types: string; default?: string }>;
  files: string[];
  dependencies: Record<string, string>;
}
const pkg = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8')) as ClientPackage;
/** The generated types, as the package exports them (gen-client.ts writes them there: its --check names the file). */
const API_TYPES_PATH = join('clients/typescript', pkg.exports['./api-types']?.types ?? 'missing');

describe('clients/typescript (the typed client package)', () => {
  it(`${API_TYPES_PATH} is what openapi-typescript generates from the current OpenAPI document (else run \`npm run gen:client\`)`, async () => {
    const result = await run(process.execPath, ['--import', 'tsx', join(repoRoot(), 'infra/tools/gen-client.ts'), '--check'], {
      cwd: repoRoot(),
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      ({ stdout }) => ({ code: 0, out: stdout }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, out: `${err.stdout}${err.stderr}` }),
    );
    expect(result).toEqual({ code: 0, out: `${join(repoRoot(), API_TYPES_PATH)} matches the OpenAPI document.\n` });
  });

  it("package.json: a scoped name, the OpenAPI document's version, ESM with a types entry, every listed file present", () => {
    expect(pkg.name).toBe('@coffee-trace/api-client');
    expect(pkg.version).toBe((openApiDocument('http://127.0.0.1:3000') as { info: { version: string } }).info.version);
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.']).toEqual({ types: `./${pkg.types.replace(/^\.\//, '')}`, default: `./${pkg.main.replace(/^\.\//, '')}` });
    expect(pkg.exports['./api-types']).toEqual({ types: './api-types.d.ts' });
    expect(pkg.files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'api-types.d.ts', 'README.md']));
    for (const f of pkg.files) expect({ f, exists: existsSync(join(clientDir, f)) }).toEqual({ f, exists: true });
  });

  it('depends on openapi-fetch only, at the exact version the service installs', () => {
    const installed = (JSON.parse(readFileSync(join(repoRoot(), 'node_modules/openapi-fetch/package.json'), 'utf8')) as { version: string })
      .version;
    expect(pkg.dependencies).toEqual({ 'openapi-fetch': installed });
  });

  it("the README's example is example.ts, verbatim", () => {
    const example = readFileSync(join(clientDir, 'example.ts'), 'utf8');
    const readme = readFileSync(join(clientDir, 'README.md'), 'utf8');
    const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(example);
  });

  describe('createCoffeeTraceClient', () => {
    const captured: Request[] = [];
    const fetch = async (request: Request) => {
      captured.push(request);
      return new Response(JSON.stringify({ batch_id: 'B-1' }), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    beforeEach(() => {
      captured.length = 0;
    });

    it('sends the token as a bearer token on every request, against the base URL', async () => {
      const api = createCoffeeTraceClient({ baseUrl: 'https://api.example.org', token: 'tok-1', fetch });
      const res = await api.GET('/batch/{id}', { params: { path: { id: 'B 1' } } });
      await api.GET('/jobs/{id}', { params: { path: { id: 'J-1' } } });
      expect(res.data).toEqual({ batch_id: 'B-1' });
      expect(captured.map((r) => [r.method, r.url, r.headers.get('authorization')])).toEqual([
        ['GET', 'https://api.example.org/batch/B%201', 'Bearer tok-1'],
        ['GET', 'https://api.example.org/jobs/J-1', 'Bearer tok-1'],
      ]);
    });

    it('awaits a token function before each request (a refreshed token is used)', async () => {
      let n = 0;
      const api = createCoffeeTraceClient({ baseUrl: 'https://api.example.org', token: async () => `tok-${++n}`, fetch });
      await api.GET('/batch/{id}', { params: { path: { id: 'B-1' } } });
      await api.GET('/batch/{id}', { params: { path: { id: 'B-1' } } });
      expect(captured.map((r) => r.headers.get('authorization'))).toEqual(['Bearer tok-1', 'Bearer tok-2']);
    });

    it('sends no authorization header without a token (public routes)', async () => {
      const api = createCoffeeTraceClient({ baseUrl: 'https://api.example.org', fetch });
      await api.GET('/trace/{id}', { params: { path: { id: 'B-1' } } });
      expect(captured.map((r) => r.headers.has('authorization'))).toEqual([false]);
    });
  });
});
