import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../shared/runtime/paths';

/**
 * The typed client's types (infra/client/api-types.ts, used by `npm run demo` through
 * openapi-fetch) are generated from the OpenAPI document by `npm run gen:client`: regenerated in
 * memory here, they must equal the committed file, so they never drift from the document.
 */

const run = promisify(execFile);

describe('infra/client/api-types.ts', () => {
  it('is what openapi-typescript generates from the current OpenAPI document (else run `npm run gen:client`)', async () => {
    const result = await run(process.execPath, ['--import', 'tsx', join(repoRoot(), 'infra/tools/gen-client.ts'), '--check'], { cwd: repoRoot(), maxBuffer: 16 * 1024 * 1024 })
      .then(({ stdout }) => ({ code: 0, out: stdout }), (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, out: `${err.stdout}${err.stderr}` }));
    expect(result).toEqual({ code: 0, out: expect.stringContaining('matches the OpenAPI document') });
  });
});
