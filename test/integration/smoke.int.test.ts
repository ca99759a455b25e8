import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../shared/runtime/paths';
import { openApiProblems } from '../../infra/tools/smoke';
import { api, stackUrl, token } from '../support/api';

/**
 * `npm run smoke` (infra/tools/smoke-cli.ts) against the local stack, run as an operator runs it
 * after `cdk deploy`: as its own process, with the stack's URL and an ADMIN token.
 */

const run = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the smoke CLI exactly as `npm run smoke -- …` does (node --import tsx). */
async function smoke(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', join('infra', 'tools', 'smoke-cli.ts'), ...args], {
      cwd: repoRoot(),
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('npm run smoke against the local stack', () => {
  it('passes every check with an ADMIN token and exits 0', async () => {
    const admin = await token({ role: 'ADMIN' });
    const r = await smoke(['--url', stackUrl(), '--token', admin]);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    for (const check of [
      'GET /openapi.json is an OpenAPI 3.1 document',
      'GET /docs is the HTML API reference',
      'a call without a token is 401 UNAUTHORIZED',
      'authenticated read: GET /cooperatives/{id} of a missing cooperative is 404',
      'validation error: POST /batch/submit {} is 400 VALIDATION_ERROR with details',
      'every answer carries a distinct request id',
    ]) {
      expect(lines).toContain(`PASS  ${check}`);
    }
    expect(r.stdout).not.toContain('FAIL');
    expect(r.stdout).toMatch(/OK: 6 of 6 checks passed/);
    expect(r.code).toBe(0);
  });

  it('--json reports each check; the token may come from SMOKE_TOKEN', async () => {
    const admin = await token({ role: 'ADMIN' });
    const r = await smoke(['--url', `${stackUrl()}/`, '--json'], { SMOKE_TOKEN: admin });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean; detail: string }> };
    expect(report.ok).toBe(true);
    expect(report.checks).toHaveLength(6);
    expect(report.checks.find((c) => c.name.startsWith('GET /openapi.json'))!.detail).toMatch(
      /^openapi 3\.1\.\d+, .* \d+ paths, \d+ operations$/,
    );
  });

  it('fails (exit 1) naming the checks when the token is not accepted, and when the role cannot read', async () => {
    const bad = await smoke(['--url', stackUrl(), '--token', 'not-a-jwt']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('PASS  a call without a token is 401 UNAUTHORIZED');
    expect(bad.stdout).toContain('FAIL  authenticated read: GET /cooperatives/{id} of a missing cooperative is 404');
    expect(bad.stdout).toContain('401: the token is not accepted');
    expect(bad.stdout).toContain('FAIL  validation error: POST /batch/submit {} is 400 VALIDATION_ERROR with details');
    expect(bad.stdout).toMatch(/FAILED: \d of 6 checks passed/);

    const mfi = await smoke(['--url', stackUrl(), '--token', await token({ role: 'MFI', mfi_id: 'MFI-SMOKE' })]);
    expect(mfi.code).toBe(1);
    expect(mfi.stdout).toContain('403: the token is not an ADMIN token');
  });

  it('fails when nothing answers at the URL, and on usage errors (exit 2)', async () => {
    const down = await smoke(['--url', 'http://127.0.0.1:9', '--token', 'x', '--timeout-ms', '2000']);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/FAILED: 0 of 6 checks passed/);
    const usage = await smoke(['--token', 'x']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--url must be an http(s) URL');
  });

  it('the document the stack serves has no structural problems; a broken one has', async () => {
    const doc = (await api('GET', '/openapi.json')).body as Record<string, any>;
    expect(openApiProblems(doc)).toEqual([]);
    const broken = {
      ...doc,
      openapi: '3.0.3',
      paths: {
        ...doc.paths,
        '/x': { get: { responses: {} } },
        '/y': { get: { responses: { 200: { $ref: '#/components/responses/Nope' } } } },
      },
    };
    expect(openApiProblems(broken)).toEqual(
      expect.arrayContaining([
        'openapi is "3.0.3", expected 3.1.x',
        'GET /x has no responses',
        '$ref #/components/responses/Nope does not resolve',
      ]),
    );
  });
});
