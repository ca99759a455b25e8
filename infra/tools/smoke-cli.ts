import { parseArgs } from 'node:util';
import { runSmoke, type SmokeCheck } from './smoke';

/**
 * `npm run smoke -- --url URL --token JWT [--timeout-ms N] [--json]`: the post-deploy smoke test
 * (infra/tools/smoke.ts). Reads only; moves no money. Prints one line per check and a summary.
 * Exit code: 0 every check passed, 1 a check failed, 2 usage error.
 */

const USAGE = `usage: npm run smoke -- --url URL --token JWT [--timeout-ms N] [--json]
  --url URL        base URL of the API: the stack's ApiUrl output (…/prod/), or the local stack's URL
  --token JWT      an ADMIN bearer token from the deployment's issuer (locally: npm run token -- --role ADMIN)
                   or SMOKE_TOKEN in the environment (keeps the token out of the shell history)
  --timeout-ms N   per-request timeout (default 15000)
  --json           print the checks as JSON instead of lines`;

class UsageError extends Error {}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      'timeout-ms': { type: 'string', default: '15000' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const url = values.url;
  const token = values.token ?? process.env.SMOKE_TOKEN;
  if (!url || !/^https?:\/\/\S+$/.test(url)) throw new UsageError('--url must be an http(s) URL');
  if (!token) throw new UsageError('--token (or SMOKE_TOKEN) is required');
  const timeoutMs = Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100) throw new UsageError('--timeout-ms must be an integer ≥ 100');

  if (!values.json) process.stdout.write(`smoke test of ${url}\n`);
  const print = (c: SmokeCheck) => {
    if (!values.json) process.stdout.write(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}\n      ${c.detail}\n`);
  };
  const checks = await runSmoke({ url, token, timeoutMs, onCheck: print });
  const failed = checks.filter((c) => !c.ok);
  if (values.json) process.stdout.write(`${JSON.stringify({ url, ok: failed.length === 0, checks }, null, 2)}\n`);
  else
    process.stdout.write(`${failed.length === 0 ? 'OK' : 'FAILED'}: ${checks.length - failed.length} of ${checks.length} checks passed\n`);
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`smoke: ${err.message}\n${usage ? `${USAGE}\n` : ''}`);
    process.exitCode = usage ? 2 : 1;
  },
);
