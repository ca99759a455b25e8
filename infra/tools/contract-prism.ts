import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startStackProcess } from '../../test/support/stack-process';
import { repoRoot } from '../../shared/runtime/paths';
import { signDevToken } from '../local/dev-keys';

/**
 * `npm run contract:prism` (docs/api-contract.md): starts the local stack as `npm start` runs it,
 * puts Stoplight Prism in proxy mode in front of it with the document the stack serves at
 * GET /openapi.json, sends the demo (`npm run demo`) and the smoke test (`npm run smoke`) through
 * Prism, and counts the contract violations Prism logs. Prints the count; exit code 0 when it is 0,
 * 1 otherwise. Stops Prism and the stack it started, also on failure.
 * Prism (@stoplight/prism-cli 5.16.0) is not a dependency of the project: it runs with `npx -y`.
 */
const PRISM = '@stoplight/prism-cli@5.16.0';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function main(): Promise<number> {
  const stack = await startStackProcess({}, 240_000);
  let prismLog = '';
  const port = await freePort();
  const docFile = join(stack.info.dataDir, 'served-openapi.json');
  writeFileSync(docFile, await (await fetch(`${stack.info.url}/openapi.json`)).text());
  const prism = spawn(
    'npx',
    ['-y', PRISM, 'proxy', docFile, stack.info.url, '--errors=false', '--host', '127.0.0.1', '--port', String(port)],
    {
      cwd: repoRoot(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  prism.stdout!.on('data', (d: Buffer) => (prismLog += d.toString()));
  prism.stderr!.on('data', (d: Buffer) => (prismLog += d.toString()));
  try {
    const prismUrl = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 300_000;
    for (;;) {
      if (prism.exitCode !== null) throw new Error(`prism exited:\n${prismLog}`);
      if (Date.now() > deadline) throw new Error(`prism did not start:\n${prismLog}`);
      const up = await fetch(`${prismUrl}/openapi.json`).then(
        () => true,
        () => false,
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const run = promisify(execFile);
    const env = { ...process.env, DEMO_URL: prismUrl, LOCAL_DATA_DIR: stack.info.dataDir };
    const demo = await run(process.execPath, ['--import', 'tsx', 'infra/local/demo.ts'], {
      cwd: repoRoot(),
      env,
      maxBuffer: 64 << 20,
    }).catch((e: { stdout?: string; stderr?: string }) => e);
    process.stdout.write(`demo through Prism: ${demo.stderr ? `stderr: ${String(demo.stderr).slice(-2000)}` : 'done'}\n`);
    const token = await signDevToken({ sub: 'contract-prism', role: 'ADMIN' }, 3600, stack.info.dataDir);
    const smoke = await run(process.execPath, ['--import', 'tsx', 'infra/tools/smoke-cli.ts', '--url', prismUrl, '--token', token], {
      cwd: repoRoot(),
      env,
      maxBuffer: 64 << 20,
    }).catch((e: { stdout?: string }) => e);
    process.stdout.write(`smoke through Prism:\n${String(smoke.stdout ?? '').slice(-3000)}\n`);
    await new Promise((r) => setTimeout(r, 1000));
    const violations = prismLog.split('\n').filter((l) => /violation/i.test(l));
    for (const l of violations.slice(0, 50)) process.stdout.write(`${l}\n`);
    process.stdout.write(`${violations.length} Prism violation line(s)\n`);
    return violations.length === 0 ? 0 : 1;
  } finally {
    try {
      if (prism.pid) process.kill(-prism.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await stack.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
